"""Tacotron 2's training entry, :func:`fit`: one optimiser step (:func:`train_step`), validation
(:func:`evaluate`) and checkpoints on the shared :class:`tts_pipeline.training.loop.EpochLoop`."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.utils.data import DataLoader, Subset

from tts_pipeline.config import Tacotron2SectionConfig
from tts_pipeline.models.tacotron2 import Tacotron2, Tacotron2LossTerms, tacotron2_loss
from tts_pipeline.models.tacotron2.data import Tacotron2Batch, Tacotron2Dataset, collate
from tts_pipeline.precision import Precision, resolve_precision
from tts_pipeline.training.checkpoint import Checkpoint, CheckpointManager
from tts_pipeline.training.distributed import DistributedContext, LengthBuckets, no_sync
from tts_pipeline.training.engine import ArtifactSink, check_finite, learning_rate, make_loader
from tts_pipeline.training.loop import EpochLoop, LoopIO, StepReport
from tts_pipeline.training.tacotron2.state import Tacotron2State, annealed_rate, build_state

STAGE = "train_tacotron2"
LOSS_NAMES = ("loss", "loss_mel", "loss_mel_postnet", "loss_gate", "loss_attention")
DIVERGED_HINT = "Try a lower tacotron2.learning_rate or tacotron2.grad_clip, or amp: off / bf16 instead of fp16."


@dataclass
class Runtime:
    """What a step needs besides the state: the (DDP-wrapped) model, precision and processes."""

    context: DistributedContext
    precision: Precision
    model: nn.Module  # Tacotron 2, inside DDP when several processes train
    grad_clip: float
    attention_weight: float = 0.0
    attention_sigma: float = 0.2

    def forward(self, model: nn.Module, batch: Tacotron2Batch) -> Tacotron2LossTerms:
        """Teacher-forced forward and loss of a batch already on the device."""
        with self.precision.autocast():
            output = model(batch.text, batch.text_lengths, batch.mels, batch.mel_lengths)
        return tacotron2_loss(
            output,
            batch.mels,
            batch.gates,
            batch.text_lengths,
            batch.mel_lengths,
            attention_weight=self.attention_weight,
            attention_sigma=self.attention_sigma,
        )


def _values(terms: Tacotron2LossTerms) -> list[torch.Tensor]:
    """The terms in :data:`LOSS_NAMES` order, detached."""
    return [value.detach().float() for value in terms]


def train_step(
    state: Tacotron2State, runtime: Runtime, micro_batches: Sequence[Tacotron2Batch], *, checkpoints: Sequence[Path]
) -> dict[str, float]:
    """One optimiser step over ``micro_batches`` (package docstring), at the rate already set.

    Returns the losses averaged over micro-batches and processes (:data:`LOSS_NAMES`), ``grad_norm`` (left
    out of a step the fp16 scaler skips) and ``lr``. Raises
    :class:`tts_pipeline.training.engine.TrainingDiverged` (naming the last checkpoint) before the update
    when a loss, or without gradient scaling the gradient norm, is not finite.
    """
    k = len(micro_batches)
    if k == 0:
        raise ValueError("train_step: no micro-batches")
    context = runtime.context
    next_step = state.step + 1
    state.optimizer.zero_grad(set_to_none=True)
    sums = torch.zeros(len(LOSS_NAMES), dtype=torch.float64, device=context.device)
    for index, batch in enumerate(micro_batches):
        with no_sync(runtime.model, index < k - 1):
            terms = runtime.forward(runtime.model, batch)
            state.scaler.scale(terms.total / k).backward()
        sums += torch.stack(_values(terms)).double()
    totals = context.all_reduce_sum(sums).tolist()
    losses = {name: value / (k * context.world_size) for name, value in zip(LOSS_NAMES, totals, strict=True)}
    check_finite(losses, stage=STAGE, step=next_step, epoch=state.epoch, checkpoints=checkpoints, hint=DIVERGED_HINT)
    state.scaler.unscale_(state.optimizer)
    grad_norm = float(torch.nn.utils.clip_grad_norm_(state.model.parameters(), runtime.grad_clip))
    if not math.isfinite(grad_norm) and not state.scaler.is_enabled():
        check_finite(
            {"grad_norm": grad_norm}, stage=STAGE, step=next_step, epoch=state.epoch, checkpoints=checkpoints,
            hint=DIVERGED_HINT,
        )  # fmt: skip
    state.scaler.step(state.optimizer)
    state.scaler.update()
    figures = {**losses, "lr": learning_rate(state.optimizer)}
    if math.isfinite(grad_norm):  # else the scaler skipped the step: an overflow's norm would make the means inf
        figures["grad_norm"] = grad_norm
    return figures


@torch.no_grad()
def evaluate(state: Tacotron2State, runtime: Runtime, loader: DataLoader) -> dict[str, float]:
    """Teacher-forced validation losses (``val_`` + :data:`LOSS_NAMES`), means over utterances; each rank
    evaluates its shard and the sums are reduced. Eval mode (the prenet still drops, as NVIDIA's)."""
    model = state.model
    was_training = model.training
    model.eval()
    sums = [0.0] * (len(LOSS_NAMES) + 1)
    for raw in loader:
        batch = raw.to(runtime.context.device)
        for index, value in enumerate(_values(runtime.forward(model, batch))):
            sums[index] += float(value) * batch.size
        sums[-1] += batch.size
    model.train(was_training)
    totals = runtime.context.sum_floats(sums)
    if not totals[-1]:
        return {}
    return {f"val_{name}": total / totals[-1] for name, total in zip(LOSS_NAMES, totals[:-1], strict=True)}


@dataclass
class TrainingResult:
    """The trained model (eval mode) and the figures that go into ``metrics.json``."""

    model: Tacotron2
    step: int
    epoch: int
    learning_rate: float
    metrics: dict[str, Any]


def fit(
    cfg: Tacotron2SectionConfig,
    train_set: Tacotron2Dataset,
    val_set: Tacotron2Dataset | None,
    *,
    n_symbols: int,
    n_mels: int,
    manager: CheckpointManager,
    context: DistributedContext | None = None,
    checkpoint: Checkpoint | None = None,
    sink: ArtifactSink | None = None,
    run_id: str | None = None,
    log_every: int = 50,
    on_checkpoint: Callable[[Tacotron2State], None] | None = None,
) -> TrainingResult:
    """Train (or continue) Tacotron 2 until ``cfg.epochs`` epochs or ``cfg.max_steps`` steps.

    Args:
        cfg: The ``tacotron2`` section.
        train_set, val_set: Utterances; ``val_set`` may be None or empty.
        n_symbols: Size of the symbol table (the embedding's rows).
        n_mels: Mel channels.
        manager: Where checkpoints go (written by rank 0).
        context: Processes and device; default a single process on the CPU.
        checkpoint: Resume from it (:func:`tts_pipeline.training.engine.find_resume_checkpoint`).
        sink: Tracking run (rank 0): train figures every ``log_every`` steps, validation losses.
        run_id: MLflow run id stored in checkpoints, so that a resumed job reopens the same run.
        on_checkpoint: Called after every checkpoint is written (tests use it to interrupt).
    """
    loop = _Loop(
        cfg,
        train_set,
        val_set,
        n_symbols,
        n_mels,
        LoopIO(context or DistributedContext(), manager, sink, run_id, log_every, on_checkpoint),
    )
    if checkpoint is not None:
        # Rank 0 continues its saved RNG streams; the loop reseeds the other ranks.
        loop.state.restore(checkpoint, restore_rng=loop.context.is_main)
    loop.run(checkpoint)
    return loop.result()


class _Loop(EpochLoop):
    """Tacotron 2's step, validation and checkpoints on the shared epoch loop; :func:`fit` is the entry."""

    state: Tacotron2State

    def __init__(
        self,
        cfg: Tacotron2SectionConfig,
        train_set: Tacotron2Dataset,
        val_set: Tacotron2Dataset | None,
        n_symbols: int,
        n_mels: int,
        io: LoopIO,
    ) -> None:
        buckets = None
        if cfg.length_bucketing:
            buckets = LengthBuckets(train_set.mel_lengths, group_size=cfg.global_batch_size, pool=cfg.bucket_pool)
        super().__init__(cfg, "tacotron2", train_set, io, buckets=buckets, collate_fn=collate)
        context = self.context
        self.tacotron2 = cfg
        self.n_symbols = n_symbols
        self.val_set = val_set if val_set is not None and len(val_set) else None
        self.precision = resolve_precision(cfg.amp, context.device, key="tacotron2.amp")
        self.state = build_state(cfg, n_symbols, n_mels, self.precision)
        self.runtime = Runtime(
            context,
            self.precision,
            context.wrap(self.state.model),
            cfg.grad_clip,
            cfg.guided_attention_weight,
            cfg.guided_attention_sigma,
        )
        self.val_loader = None
        if self.val_set is not None:
            shard = Subset(self.val_set, context.shard(len(self.val_set)))
            self.val_loader = make_loader(
                shard, cfg.batch_size, min(cfg.num_workers, 1), context.device, collate_fn=collate
            )

    def validate(self, epoch: int) -> dict[str, float]:
        if self.val_loader is None:
            return {}
        figures = evaluate(self.state, self.runtime, self.val_loader)
        if self.sink is not None:
            self.sink.log_metrics(figures, step=self.state.step)
        return figures

    def save_checkpoint(self) -> None:
        extra = {**self.state.extra(), "world_size": self.context.world_size, "accumulation": self.k}
        self.manager.save(self.state.step, self.state.epoch, self.state.states(), run_id=self.run_id, extra=extra)

    def begin_epoch(self, epoch: int) -> None:
        self.state.model.train()
        rate = annealed_rate(self.tacotron2, epoch)
        for group in self.state.optimizer.param_groups:
            group["lr"] = rate

    def window_figures(self) -> dict[str, float]:
        return {"lr": learning_rate(self.state.optimizer)}

    def train_step(self, batches: Sequence[Any]) -> StepReport:
        state = self.state
        micro_batches = [batch.to(self.context.device, non_blocking=True) for batch in batches]
        figures = train_step(state, self.runtime, micro_batches, checkpoints=self.manager.paths())
        if not state.first_losses:
            state.first_losses = {name: figures[name] for name in LOSS_NAMES}
        frames = sum(batch.frames for batch in micro_batches)
        return StepReport(figures=figures, frames=frames, items=sum(batch.size for batch in micro_batches))

    def result(self) -> TrainingResult:
        """Final checkpoint and validation (unless just done), and the run's figures."""
        state, cfg = self.state, self.tacotron2
        run = self.finish()
        rate = learning_rate(state.optimizer)
        metrics: dict[str, Any] = {
            **run.metrics,
            "amp": self.precision.amp,
            "n_params": sum(parameter.numel() for parameter in state.model.parameters()),
            "n_symbols": self.n_symbols,
            "n_val": len(self.val_set) if self.val_set is not None else 0,
            "learning_rate": rate,
            "anneal_epochs": list(cfg.anneal_epochs),
            **{f"train_{name}_start": state.first_losses.get(name) for name in LOSS_NAMES},
            **{f"train_{name}": run.last_train.get(f"train_{name}") for name in LOSS_NAMES},
            **{f"val_{name}_start": run.first_val.get(f"val_{name}") for name in LOSS_NAMES},
            **{f"val_{name}": run.final_val.get(f"val_{name}") for name in LOSS_NAMES},
            "history": state.history,
        }
        state.model.eval()
        return TrainingResult(model=state.model, step=state.step, epoch=run.epoch, learning_rate=rate, metrics=metrics)
