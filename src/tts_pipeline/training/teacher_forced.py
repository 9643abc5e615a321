"""What the two teacher-forced mel trainers (FastPitch, Tacotron 2) share: one optimiser step over
gradient-accumulated micro-batches, the validation on the same loss terms, and the epoch loop around
them (:class:`TeacherForcedLoop`).

One optimiser step covers ``global_batch_size`` utterances: ``k = global / (processes x batch_size)``
micro-batches per process, each backpropagating ``loss / k``; under DDP only the last micro-batch's
backward all-reduces (``no_sync`` before it), so 1 GPU x k micro-batches and k GPUs x 1 give the same
update. The step's named loss terms are reduced over processes and checked for NaN/Inf *before* the
update (a diverged step never reaches the weights or a checkpoint); the gradients are then unscaled
(fp16) and clipped to a global norm, and the optimiser steps.

A trainer subclasses :class:`TeacherForcedRuntime` with how a batch's loss terms are computed, and
:class:`TeacherForcedLoop` with its state, its step and its own figures.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset, Subset

from tts_pipeline.config import BucketedLoopSettings
from tts_pipeline.precision import Precision, resolve_precision
from tts_pipeline.training.distributed import DistributedContext, LengthBuckets, no_sync
from tts_pipeline.training.engine import check_finite, make_loader
from tts_pipeline.training.loop import EpochLoop, FinishedRun, LoopIO, StepReport
from tts_pipeline.training.model_state import ModelState


@dataclass
class TeacherForcedRuntime:
    """What a step needs besides the state: the (DDP-wrapped) model, precision and processes; subclasses
    add their settings and compute a batch's loss terms."""

    context: DistributedContext
    precision: Precision
    model: nn.Module  # the trained model, inside DDP when several processes train

    def loss_terms(self, model: nn.Module, batch: Any) -> Any:
        """Teacher-forced forward and loss terms of a batch already on the device; the result's ``total``
        is what is backpropagated. ``model`` is :attr:`model` in training, the bare model in validation."""
        raise NotImplementedError

    def loss_values(self, terms: Any) -> list[torch.Tensor]:
        """The reported terms of :meth:`loss_terms`' result, detached scalars in the trainer's name order."""
        raise NotImplementedError


def accumulated_step(
    state: ModelState,
    runtime: TeacherForcedRuntime,
    micro_batches: Sequence[Any],
    *,
    names: Sequence[str],
    grad_clip: float,
    set_rate: Callable[[int], float],
    checkpoints: Sequence[Path],
    stage: str,
    hint: str,
) -> dict[str, float]:
    """One optimiser step over ``micro_batches`` (already on the device; module docstring).

    Args:
        state: The model's state; its step counter is the loop's (not yet advanced).
        runtime: Model, precision, processes and the loss terms.
        micro_batches: This process's ``k`` micro-batches.
        names: The names of :meth:`TeacherForcedRuntime.loss_values`, in order.
        grad_clip: Global gradient-norm clip.
        set_rate: Given the number of the step about to be taken (from 1), sets the learning rate if the
            trainer's schedule changes it per step, and returns the rate the step runs at.
        checkpoints: The checkpoints so far; a divergence message names the last one.
        stage, hint: The stage and the advice a divergence message gives.

    Returns:
        The losses averaged over micro-batches and processes (``names``), ``lr``, and ``grad_norm`` (left
        out of a step the fp16 scaler skips). Raises :class:`tts_pipeline.training.engine.TrainingDiverged`
        before the update when a loss, or without gradient scaling the gradient norm, is not finite; every
        rank sees the same reduced values, so every rank stops alike.
    """
    k = len(micro_batches)
    if k == 0:
        raise ValueError("train_step: no micro-batches")
    context = runtime.context
    next_step = state.step + 1
    rate = set_rate(next_step)
    state.optimizer.zero_grad(set_to_none=True)
    sums = torch.zeros(len(names), dtype=torch.float64, device=context.device)
    for index, batch in enumerate(micro_batches):
        with no_sync(runtime.model, index < k - 1):
            terms = runtime.loss_terms(runtime.model, batch)
            state.scaler.scale(terms.total / k).backward()
        sums += torch.stack(runtime.loss_values(terms)).double()
    totals = context.all_reduce_sum(sums).tolist()
    losses = {name: value / (k * context.world_size) for name, value in zip(names, totals, strict=True)}
    check_finite(losses, stage=stage, step=next_step, epoch=state.epoch, checkpoints=checkpoints, hint=hint)

    state.scaler.unscale_(state.optimizer)
    grad_norm = float(torch.nn.utils.clip_grad_norm_(state.model.parameters(), grad_clip))
    if not math.isfinite(grad_norm) and not state.scaler.is_enabled():
        # With fp16 scaling an overflow is expected now and then: the scaler skips the step and lowers
        # its scale. Without it a non-finite gradient is divergence.
        check_finite(
            {"grad_norm": grad_norm}, stage=stage, step=next_step, epoch=state.epoch, checkpoints=checkpoints, hint=hint
        )
    state.scaler.step(state.optimizer)
    state.scaler.update()
    figures = {**losses, "lr": rate}
    if math.isfinite(grad_norm):
        # Otherwise the fp16 scaler has just skipped the step: the norm of overflowed gradients means
        # nothing, and one inf would turn the window's and the epoch's mean gradient norm into inf.
        figures["grad_norm"] = grad_norm
    return figures


@torch.no_grad()
def validation_losses(
    model: nn.Module, runtime: TeacherForcedRuntime, loader: DataLoader, names: Sequence[str]
) -> dict[str, float]:
    """Teacher-forced validation losses (``val_`` + ``names``), means over utterances; each rank evaluates
    its shard of ``loader`` and the sums are reduced. ``model`` (unwrapped) runs in eval mode."""
    was_training = model.training
    model.eval()
    sums = [0.0] * (len(names) + 1)
    for raw in loader:
        batch = raw.to(runtime.context.device, non_blocking=True)
        for index, value in enumerate(runtime.loss_values(runtime.loss_terms(model, batch))):
            sums[index] += float(value) * batch.size
        sums[-1] += batch.size
    model.train(was_training)
    totals = runtime.context.sum_floats(sums)
    items = totals[-1]
    if not items:
        return {}
    return {f"val_{name}": total / items for name, total in zip(names, totals[:-1], strict=True)}


class TeacherForcedLoop(EpochLoop):
    """The epoch loop of a teacher-forced mel trainer: global batches of the training utterances (of
    similar mel lengths with ``length_bucketing``), this rank's shard of the validation set, validation
    losses logged to the tracking run, checkpoints that record the processes and the accumulation, and
    the loss figures ``metrics.json`` reports at the start and the end.

    A subclass builds :attr:`state` and :attr:`runtime` after this constructor, sets :attr:`names` (the
    names of the runtime's loss values) and takes the optimiser step in :meth:`optimiser_step`.

    Args:
        cfg: The trainer's section.
        section: Its name (``"fastpitch"``), for messages and the ``amp`` key.
        train_set, val_set: Utterances with ``mel_lengths``; ``val_set`` may be None or empty.
        io: Processes, checkpoints, tracking.
        collate_fn: Makes a batch (with ``to(device)``, ``size`` and ``frames``) of the datasets' items.
    """

    state: ModelState
    runtime: TeacherForcedRuntime
    names: Sequence[str]

    def __init__(
        self,
        cfg: BucketedLoopSettings,
        section: str,
        train_set: Any,
        val_set: Dataset[Any] | None,
        io: LoopIO,
        *,
        collate_fn: Callable[[list[Any]], Any],
    ) -> None:
        buckets = None
        if cfg.length_bucketing:
            buckets = LengthBuckets(train_set.mel_lengths, group_size=cfg.global_batch_size, pool=cfg.bucket_pool)
        super().__init__(cfg, section, train_set, io, buckets=buckets, collate_fn=collate_fn)
        context = self.context
        self.val_set = val_set if val_set is not None and len(val_set) else None  # type: ignore[arg-type]
        self.precision = resolve_precision(cfg.amp, context.device, key=f"{section}.amp")
        self.val_loader = None
        if self.val_set is not None:
            shard = Subset(self.val_set, context.shard(len(self.val_set)))  # type: ignore[arg-type]
            self.val_loader = make_loader(
                shard, cfg.batch_size, min(cfg.num_workers, 1), context.device, collate_fn=collate_fn
            )

    def optimiser_step(self, micro_batches: list[Any]) -> dict[str, float]:
        """The trainer's step over this rank's micro-batches (on the device); its figures."""
        raise NotImplementedError

    # -- hooks of the epoch loop -------------------------------------------------------------------

    def train_step(self, batches: Sequence[Any]) -> StepReport:
        state = self.state
        micro_batches = [batch.to(self.context.device, non_blocking=True) for batch in batches]
        figures = self.optimiser_step(micro_batches)
        if not state.first_losses:
            state.first_losses = {name: figures[name] for name in self.names}
        frames = sum(batch.frames for batch in micro_batches)
        return StepReport(figures=figures, frames=frames, items=sum(batch.size for batch in micro_batches))

    def validate(self, epoch: int) -> dict[str, float]:
        """Validation losses, logged to the tracking run; ``{}`` without a validation set."""
        if self.val_loader is None:
            return {}
        figures = validation_losses(self.state.model, self.runtime, self.val_loader, self.names)
        if self.sink is not None:
            self.sink.log_metrics(figures, step=self.state.step)
        return figures

    def save_checkpoint(self) -> None:
        self.state.save(self.manager, self.run_id, self.checkpoint_extra())

    def checkpoint_extra(self) -> dict[str, Any]:
        """What a checkpoint records besides the state: the processes and the accumulation (a subclass
        may add its own)."""
        return {"world_size": self.context.world_size, "accumulation": self.k}

    # -- the end -----------------------------------------------------------------------------------

    def parameter_count(self) -> int:
        return sum(parameter.numel() for parameter in self.state.model.parameters())

    def loss_figures(self, run: FinishedRun) -> dict[str, float | None]:
        """Every loss of training (its first step, the last epoch's mean) and of validation (before
        training, at the end), as ``metrics.json`` reports them; None where never measured."""
        state, names = self.state, self.names
        return {
            **{f"train_{name}_start": state.first_losses.get(name) for name in names},
            **{f"train_{name}": run.last_train.get(f"train_{name}") for name in names},
            **{f"val_{name}_start": run.first_val.get(f"val_{name}") for name in names},
            **{f"val_{name}": run.final_val.get(f"val_{name}") for name in names},
        }
