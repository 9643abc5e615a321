"""One FastPitch optimiser step (teacher-forced forward and loss per micro-batch, NaN guard, unscale,
clip, update) and the names of the figures it reports."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from tts_pipeline.config import FastPitchConfig
from tts_pipeline.models.fastpitch import FastPitchLossTerms, FastPitchOutput, fastpitch_loss
from tts_pipeline.models.fastpitch.data import FastPitchBatch
from tts_pipeline.precision import Precision
from tts_pipeline.training.distributed import DistributedContext, no_sync
from tts_pipeline.training.engine import check_finite
from tts_pipeline.training.fastpitch.state import FastPitchState, set_step_learning_rate

STAGE = "train_fastpitch"
DIVERGED_HINT = (
    "Try a lower fastpitch.learning_rate or more fastpitch.warmup_steps, or amp: off / bf16 instead of fp16."
)


def loss_names(energy: bool) -> tuple[str, ...]:
    """Names of the figures a step reports (the energy loss only for energy-conditioned models)."""
    names = ("loss", "loss_mel", "loss_duration", "loss_pitch")
    return (*names, "loss_energy", "duration_error") if energy else (*names, "duration_error")


def loss_values(terms: FastPitchLossTerms) -> list[torch.Tensor]:
    """The terms in :func:`loss_names` order, detached."""
    values = [terms.total, terms.mel, terms.duration, terms.pitch]
    if terms.energy is not None:
        values.append(terms.energy)
    values.append(terms.duration_error)
    return [value.detach().float() for value in values]


@dataclass
class Runtime:
    """What a step needs besides the state: the (DDP-wrapped) model, precision, processes, settings."""

    context: DistributedContext
    precision: Precision
    model: nn.Module  # the FastPitch model, inside DDP when several processes train
    cfg: FastPitchConfig
    accumulation: int

    def forward(self, model: nn.Module, batch: FastPitchBatch) -> tuple[FastPitchOutput, FastPitchLossTerms]:
        """Teacher-forced forward and loss of a batch already on the device."""
        inputs = batch.inputs()
        with self.precision.autocast():
            output = model(inputs, mel_max_len=int(batch.mels.shape[-1]))
            terms = fastpitch_loss(
                output,
                inputs,
                batch.mels,
                batch.mel_lengths,
                duration_scale=self.cfg.duration_loss_scale,
                pitch_scale=self.cfg.pitch_loss_scale,
                energy_scale=self.cfg.energy_loss_scale,
            )
        return output, terms


def train_step(
    state: FastPitchState, runtime: Runtime, micro_batches: Sequence[FastPitchBatch], *, checkpoints: Sequence[Path]
) -> dict[str, float]:
    """One optimiser step over ``micro_batches`` (module docstring).

    Returns the step's losses averaged over micro-batches and processes (:func:`loss_names`), plus
    ``grad_norm`` (left out of a step the fp16 scaler skips) and ``lr``. Raises :class:`TrainingDiverged`
    (naming the last checkpoint of ``checkpoints``) before the update when a loss, or without gradient
    scaling the gradient norm, is not finite; every rank sees the same reduced values, so every rank
    stops alike.
    """
    k = len(micro_batches)
    if k == 0:
        raise ValueError("train_step: no micro-batches")
    cfg, context = runtime.cfg, runtime.context
    names = loss_names(state.model.energy_conditioning)
    next_step = state.step + 1
    rate = set_step_learning_rate(state.optimizer, cfg, next_step)
    state.optimizer.zero_grad(set_to_none=True)
    sums = torch.zeros(len(names), dtype=torch.float64, device=context.device)
    for index, batch in enumerate(micro_batches):
        with no_sync(runtime.model, index < k - 1):
            _, terms = runtime.forward(runtime.model, batch)
            state.scaler.scale(terms.total / k).backward()
        sums += torch.stack(loss_values(terms)).double()
    totals = context.all_reduce_sum(sums).tolist()
    losses = {name: value / (k * context.world_size) for name, value in zip(names, totals, strict=True)}
    check_finite(losses, stage=STAGE, step=next_step, epoch=state.epoch, checkpoints=checkpoints, hint=DIVERGED_HINT)

    state.scaler.unscale_(state.optimizer)
    grad_norm = float(torch.nn.utils.clip_grad_norm_(state.model.parameters(), cfg.grad_clip))
    if not math.isfinite(grad_norm) and not state.scaler.is_enabled():
        # With fp16 scaling an overflow is expected now and then: the scaler skips the step and lowers
        # its scale. Without it a non-finite gradient is divergence.
        check_finite(
            {"grad_norm": grad_norm}, stage=STAGE, step=next_step, epoch=state.epoch, checkpoints=checkpoints,
            hint=DIVERGED_HINT,
        )  # fmt: skip
    state.scaler.step(state.optimizer)
    state.scaler.update()
    figures = {**losses, "lr": rate}
    if math.isfinite(grad_norm):
        # Otherwise the fp16 scaler has just skipped the step: the norm of overflowed gradients means
        # nothing, and one inf would turn the window's and the epoch's mean gradient norm into inf.
        figures["grad_norm"] = grad_norm
    return figures
