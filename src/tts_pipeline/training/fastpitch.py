"""FastPitch training (reference 3.4-3.8): teacher-forced steps with gradient accumulation, DDP, AMP,
the Noam schedule, validation with plots, resumable checkpoints, and the self-describing model file.

One optimiser step covers ``global_batch_size`` utterances: ``k = global / (processes x batch_size)``
micro-batches per process (:func:`tts_pipeline.training.engine.accumulation_steps`), each
backpropagating ``loss / k``; under DDP only the last micro-batch's backward all-reduces (``no_sync``
before it), so 1 GPU x k micro-batches and k GPUs x 1 give the same update.

Per step: learning rate ``fastpitch.learning_rate x noam_scale(step)`` (step from 1: 3.16e-6 at step 1
and the 3.16e-3 peak at step 1000 for the recipe's 0.1 and 1000 warm-up steps; NVIDIA skips the counter
on the last batch of each epoch, reference 9.13, which is not reproduced here), the losses reduced over
processes and checked for NaN/Inf *before* the update (a diverged step never reaches the weights or a
checkpoint), gradients unscaled (fp16) and clipped to the global norm ``fastpitch.grad_clip``, then the
optimiser (:mod:`tts_pipeline.training.optimizers`: LAMB set up as apex's FusedLAMB, or AdamW).

Validation (teacher-forced, eval mode: dropout off) runs before training, every
``validation_every_n_epochs`` epochs, at the last epoch and when training stops; its losses are means
over the validation utterances, and the first ``n_plots`` utterances are plotted to MLflow (mel, per-token
pitch in Hz and durations, predicted against target). Throughput is real mel frames per second (padding
excluded) summed over processes, as NVIDIA's ``train_frames/s``.

Batches are random, as NVIDIA's; with ``length_bucketing`` each global batch holds utterances of
similar mel length (:class:`tts_pipeline.training.distributed.LengthBuckets`, pools of ``bucket_pool``
global batches sorted by length), which pads less, so more real frames train per second. The mel loss
is a mean over each micro-batch's frames, so bucketing also weighs a frame of a short-utterance batch
more than one of a long-utterance batch.

Checkpoints (every ``checkpoint_every_n_epochs`` epochs and when training stops) hold the model,
optimiser and scaler, the counters, the history and the RNG states; a resumed run continues at the
next batch of the same epoch order, in the same MLflow run. The epoch bookkeeping is the shared
:class:`tts_pipeline.training.loop.EpochLoop`.
"""

from __future__ import annotations

import contextlib
import logging
import math
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Subset

from tts_pipeline.config import FastPitchConfig, config_hash
from tts_pipeline.models.fastpitch import FastPitch, FastPitchLossTerms, FastPitchOutput, fastpitch_loss
from tts_pipeline.models.fastpitch.data import FastPitchBatch, FastPitchDataset, PitchStats, TextSettings, collate
from tts_pipeline.precision import Precision, resolve_precision
from tts_pipeline.training.checkpoint import Checkpoint, CheckpointManager, restore_rng_state
from tts_pipeline.training.distributed import DistributedContext, LengthBuckets
from tts_pipeline.training.engine import (
    ArtifactSink,
    check_finite,
    learning_rate,
    make_loader,
    noam_scale,
)
from tts_pipeline.training.loop import LOOP_RESUME_NEUTRAL_KEYS, EpochLoop, StepReport
from tts_pipeline.training.optimizers import build_optimizer

log = logging.getLogger(__name__)

STAGE = "train_fastpitch"
# What besides the loop's settings leaves the weights' trajectory alone: plots, and what other stages
# do with the model (extraction batch, a pretrained file that replaces this stage).
RESUME_NEUTRAL_KEYS = (*LOOP_RESUME_NEUTRAL_KEYS, "n_plots", "checkpoint", "extract_batch_size")
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


def resume_hash(fastpitch: Mapping[str, Any], audio: Mapping[str, Any], text: TextSettings, pitch: PitchStats) -> str:
    """Hash of everything that shapes the weights' trajectory: the trajectory keys of the section, the
    audio section, the symbol table and the pitch statistics. Checkpoints of another hash are not resumed."""
    payload = {
        "fastpitch": {key: value for key, value in fastpitch.items() if key not in RESUME_NEUTRAL_KEYS},
        "audio": dict(audio),
        "text": text.as_dict(),
        "pitch": [pitch.mean, pitch.std],
    }
    return config_hash(payload)


# --------------------------------------------------------------------------------------------------
# state
# --------------------------------------------------------------------------------------------------


@dataclass
class FastPitchState:
    """The model, its optimiser and scaler, and the loop's counters (see
    :class:`tts_pipeline.training.loop.LoopState`): what a checkpoint stores.

    ``first_losses`` holds the losses of step 1, which ``metrics.json`` reports as the start of training.
    """

    model: FastPitch
    optimizer: torch.optim.Optimizer
    scaler: torch.amp.GradScaler
    step: int = 0
    epoch: int = 1
    batch_in_epoch: int = 0
    history: list[dict[str, float]] = field(default_factory=list)
    first_losses: dict[str, float] = field(default_factory=dict)

    def states(self) -> dict[str, Any]:
        """Named objects for :meth:`CheckpointManager.save`."""
        return {"model": self.model, "optimizer": self.optimizer, "scaler": self.scaler}

    def extra(self) -> dict[str, Any]:
        return {
            "batch_in_epoch": self.batch_in_epoch,
            "history": self.history,
            "first_losses": self.first_losses,
            "model_config": self.model.model_config(),
        }

    def restore(self, checkpoint: Checkpoint, *, restore_rng: bool = True) -> None:
        """Load a checkpoint of this trainer (weights, optimiser, scaler, counters, RNG)."""
        states = checkpoint.states
        self.model.load_state_dict(states["model"])
        self.optimizer.load_state_dict(states["optimizer"])
        if states.get("scaler"):  # a disabled scaler saves an empty dict
            self.scaler.load_state_dict(states["scaler"])
        self.step, self.epoch = checkpoint.step, checkpoint.epoch
        self.batch_in_epoch = int(checkpoint.extra.get("batch_in_epoch", 0))
        self.history = list(checkpoint.extra.get("history", []))
        self.first_losses = dict(checkpoint.extra.get("first_losses", {}))
        if restore_rng:
            restore_rng_state(checkpoint.rng)


def build_state(
    cfg: FastPitchConfig, n_symbols: int, n_mels: int, pitch: PitchStats, precision: Precision
) -> FastPitchState:
    """A fresh model initialised from ``cfg.seed`` (the same on every rank), its optimiser and scaler."""
    torch.manual_seed(cfg.seed)
    model = FastPitch(cfg, n_symbols, n_mels, pitch_mean=pitch.mean, pitch_std=pitch.std).to(precision.device)
    optimizer = build_optimizer(model.parameters(), cfg, lr=cfg.learning_rate * noam_scale(1, cfg.warmup_steps))
    return FastPitchState(model=model, optimizer=optimizer, scaler=precision.grad_scaler())


def set_step_learning_rate(optimizer: torch.optim.Optimizer, cfg: FastPitchConfig, step: int) -> float:
    """Set the Noam rate of optimiser step ``step`` (from 1) on every parameter group; returns it.

    The rate is a function of the step alone, so a resumed run needs no scheduler state.
    """
    rate = cfg.learning_rate * noam_scale(step, cfg.warmup_steps)
    for group in optimizer.param_groups:
        group["lr"] = rate
    return rate


# --------------------------------------------------------------------------------------------------
# one optimiser step
# --------------------------------------------------------------------------------------------------


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


def _no_sync(module: nn.Module, skip_sync: bool) -> contextlib.AbstractContextManager[Any]:
    """DDP's ``no_sync`` when asked and the module is wrapped; nothing otherwise."""
    if skip_sync and hasattr(module, "no_sync"):
        return module.no_sync()
    return contextlib.nullcontext()


def train_step(
    state: FastPitchState, runtime: Runtime, micro_batches: Sequence[FastPitchBatch], *, checkpoints: Sequence[Path]
) -> dict[str, float]:
    """One optimiser step over ``micro_batches`` (module docstring).

    Returns the step's losses averaged over micro-batches and processes (:func:`loss_names`), plus
    ``grad_norm`` and ``lr``. Raises :class:`TrainingDiverged` (naming the last checkpoint of
    ``checkpoints``) before the update when a loss, or without gradient scaling the gradient norm, is
    not finite; every rank sees the same reduced values, so every rank stops alike.
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
        with _no_sync(runtime.model, index < k - 1):
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
    return {**losses, "grad_norm": grad_norm, "lr": rate}


# --------------------------------------------------------------------------------------------------
# validation and plots
# --------------------------------------------------------------------------------------------------


@torch.no_grad()
def evaluate(state: FastPitchState, runtime: Runtime, loader: DataLoader) -> dict[str, float]:
    """Teacher-forced validation losses (``val_`` + :func:`loss_names`), means over utterances; each
    rank evaluates its shard, and the sums are reduced. The model is in eval mode (no dropout)."""
    model = state.model
    was_training = model.training
    model.eval()
    names = loss_names(model.energy_conditioning)
    sums = [0.0] * (len(names) + 1)
    for raw in loader:
        batch = raw.to(runtime.context.device, non_blocking=True)
        _, terms = runtime.forward(model, batch)
        for index, value in enumerate(loss_values(terms)):
            sums[index] += float(value) * batch.size
        sums[-1] += batch.size
    model.train(was_training)
    totals = runtime.context.sum_floats(sums)
    items = totals[-1]
    if not items:
        return {}
    return {f"val_{name}": total / items for name, total in zip(names, totals[:-1], strict=True)}


@torch.no_grad()
def log_plots(
    model: FastPitch,
    batch: FastPitchBatch,
    text: TextSettings,
    pitch: PitchStats,
    frame_period_s: float,
    sink: ArtifactSink,
    epoch: int,
) -> None:
    """Plot each utterance of ``batch`` (teacher-forced, eval mode) under ``plots/epoch_<E>/``: the
    predicted mel over the target, and per token the predicted and target pitch (Hz; unvoiced targets
    left out) and durations (frames)."""
    from tts_pipeline import plots

    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    batch = batch.to(device)
    output = model(batch.inputs(), mel_max_len=int(batch.mels.shape[-1]))
    predicted_durations = (torch.exp(output.log_duration.float()) - 1.0).clamp_min(0.0).cpu().numpy()
    folder_name = f"plots/epoch_{epoch:05d}"
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for row, utterance_id in enumerate(batch.ids):
            n_frames, n_tokens = int(batch.mel_lengths[row]), int(batch.token_lengths[row])
            target_mel = batch.mels[row, :, :n_frames].float().cpu().numpy()
            predicted_mel = output.mel[row, :, :n_frames].float().cpu().numpy()
            title = f"{utterance_id}, epoch {epoch} (teacher-forced)"
            figure = plots.mel_comparison(target_mel, predicted_mel, frame_period_s, title=title)
            sink.log_artifact(plots.save_figure(figure, folder / f"{utterance_id}_mel.png"), folder_name)
            target_norm = batch.pitch[row, :n_tokens].float().cpu().numpy()
            target_hz = np.where(target_norm != 0, pitch.to_hz(target_norm), np.nan)
            predicted_hz = pitch.to_hz(output.pitch[row, :n_tokens].float().cpu().numpy())
            symbols = [_symbol(text, int(token)) for token in batch.tokens[row, :n_tokens].tolist()]
            target_durations = batch.durations[row, :n_tokens].cpu().numpy()
            panels = [
                ("pitch (Hz)", target_hz, predicted_hz),
                ("duration (frames)", target_durations, predicted_durations[row, :n_tokens]),
            ]
            figure = plots.token_comparison(symbols, panels, title=title)
            sink.log_artifact(plots.save_figure(figure, folder / f"{utterance_id}_tokens.png"), folder_name)
    model.train(was_training)


def _symbol(text: TextSettings, token: int) -> str:
    return text.symbols[token] if 0 <= token < len(text.symbols) else f"#{token}"


# --------------------------------------------------------------------------------------------------
# the loop
# --------------------------------------------------------------------------------------------------


@dataclass
class TrainingResult:
    """The trained model (eval mode) and the figures that go into ``metrics.json``."""

    model: FastPitch
    step: int
    epoch: int
    learning_rate: float
    metrics: dict[str, Any]


def train_fastpitch(
    cfg: FastPitchConfig,
    train_set: FastPitchDataset,
    val_set: FastPitchDataset | None,
    *,
    text: TextSettings,
    pitch: PitchStats,
    frame_period_s: float,
    manager: CheckpointManager,
    context: DistributedContext | None = None,
    checkpoint: Checkpoint | None = None,
    sink: ArtifactSink | None = None,
    run_id: str | None = None,
    log_every: int = 50,
    on_checkpoint: Callable[[FastPitchState], None] | None = None,
) -> TrainingResult:
    """Train (or continue) FastPitch until ``cfg.epochs`` epochs or ``cfg.max_steps`` steps.

    Args:
        cfg: The ``fastpitch`` section.
        train_set, val_set: Utterances (:class:`FastPitchDataset`); ``val_set`` may be None or empty.
        text: The symbol table (its size is the model's ``n_symbols``) and its origin (plot labels).
        pitch: Pitch statistics (stored in the model's buffers; plots convert to Hz with them).
        frame_period_s: ``hop / sampling_rate``, for plot axes.
        manager: Where checkpoints go (written by rank 0).
        context: Processes and device; default a single process on the CPU.
        checkpoint: Resume from it (see :func:`tts_pipeline.training.engine.find_resume_checkpoint`).
        sink: Tracking run (rank 0): train figures every ``log_every`` steps, validation losses, plots.
        run_id: MLflow run id stored in checkpoints, so that a resumed job reopens the same run.
        on_checkpoint: Called after every checkpoint is written (tests use it to interrupt).
    """
    wiring = {"manager": manager, "sink": sink, "run_id": run_id, "log_every": log_every}
    loop = _Loop(
        cfg,
        train_set,
        val_set,
        text,
        pitch,
        frame_period_s,
        context=context or DistributedContext(),
        on_checkpoint=on_checkpoint,
        **wiring,
    )
    loop.run(checkpoint)
    return loop.result()


class _Loop(EpochLoop):
    """FastPitch's step, validation with plots and checkpoints on the shared epoch loop;
    :func:`train_fastpitch` is the public entry."""

    state: FastPitchState

    def __init__(
        self,
        cfg: FastPitchConfig,
        train_set: FastPitchDataset,
        val_set: FastPitchDataset | None,
        text: TextSettings,
        pitch: PitchStats,
        frame_period_s: float,
        **wiring: Any,
    ) -> None:
        buckets = None
        if cfg.length_bucketing:
            buckets = LengthBuckets(train_set.mel_lengths, group_size=cfg.global_batch_size, pool=cfg.bucket_pool)
        super().__init__(cfg, "fastpitch", train_set, buckets=buckets, collate_fn=collate, **wiring)
        context = self.context
        self.fastpitch = cfg
        self.val_set = val_set if val_set is not None and len(val_set) else None
        self.text, self.pitch, self.frame_period_s = text, pitch, frame_period_s
        self.precision = resolve_precision(cfg.amp, context.device, key="fastpitch.amp")
        self.state = build_state(cfg, len(text.symbols), train_set.n_mels, pitch, self.precision)
        self.names = loss_names(self.state.model.energy_conditioning)
        self.runtime = Runtime(
            context=context,
            precision=self.precision,
            model=context.wrap(self.state.model),
            cfg=cfg,
            accumulation=self.k,
        )
        self.val_loader = None
        if self.val_set is not None:
            shard = Subset(self.val_set, context.shard(len(self.val_set)))
            self.val_loader = make_loader(
                shard, cfg.batch_size, min(cfg.num_workers, 1), context.device, collate_fn=collate
            )

    # -- hooks of the epoch loop -------------------------------------------------------------------

    def restore(self, checkpoint: Checkpoint) -> None:
        self.state.restore(checkpoint, restore_rng=self.context.is_main)

    def validate(self, epoch: int) -> dict[str, float]:
        """Validation losses (logged), and plots of the first ``n_plots`` utterances when tracking."""
        if self.val_loader is None:
            return {}
        figures = evaluate(self.state, self.runtime, self.val_loader)
        if self.sink is not None:
            self.sink.log_metrics(figures, step=self.state.step)
            if getattr(self.sink, "active", False) and self.fastpitch.n_plots > 0:
                assert self.val_set is not None
                count = min(self.fastpitch.n_plots, len(self.val_set))
                batch = collate([self.val_set[index] for index in range(count)])
                log_plots(self.state.model, batch, self.text, self.pitch, self.frame_period_s, self.sink, epoch)
        return figures

    def save_checkpoint(self) -> None:
        extra = {**self.state.extra(), "world_size": self.context.world_size, "accumulation": self.k}
        self.manager.save(self.state.step, self.state.epoch, self.state.states(), run_id=self.run_id, extra=extra)

    def begin_epoch(self, epoch: int) -> None:
        self.state.model.train()

    def train_step(self, batches: Sequence[Any]) -> StepReport:
        state = self.state
        micro_batches = [batch.to(self.context.device, non_blocking=True) for batch in batches]
        figures = train_step(state, self.runtime, micro_batches, checkpoints=self.manager.paths())
        if not state.first_losses:
            state.first_losses = {name: figures[name] for name in self.names}
        frames = sum(batch.frames for batch in micro_batches)
        return StepReport(figures=figures, frames=frames, items=sum(batch.size for batch in micro_batches))

    # -- the end -----------------------------------------------------------------------------------

    def result(self) -> TrainingResult:
        """Final checkpoint and validation (unless just done), and the run's figures."""
        state, cfg = self.state, self.fastpitch
        run = self.finish()
        rate = learning_rate(state.optimizer)
        metrics: dict[str, Any] = {
            **run.metrics,
            "amp": self.precision.amp,
            "optimizer": cfg.optimizer,
            "n_params": sum(parameter.numel() for parameter in state.model.parameters()),
            "n_symbols": len(self.text.symbols),
            "n_val": len(self.val_set) if self.val_set is not None else 0,
            "learning_rate": rate,
            **{f"train_{name}_start": state.first_losses.get(name) for name in self.names},
            **{f"train_{name}": run.last_train.get(f"train_{name}") for name in self.names},
            **{f"val_{name}_start": run.first_val.get(f"val_{name}") for name in self.names},
            **{f"val_{name}": run.final_val.get(f"val_{name}") for name in self.names},
            "history": state.history,
        }
        state.model.eval()
        return TrainingResult(model=state.model, step=state.step, epoch=run.epoch, learning_rate=rate, metrics=metrics)
