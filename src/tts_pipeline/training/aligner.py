"""Training of the standalone aligner: forward-sum + ramped binarisation loss, resumable, on the shared
:class:`tts_pipeline.training.loop.EpochLoop`; :func:`fit` is the entry.

Steps are plain functions over explicit state (:class:`TrainState`). One step trains on one batch of
similar-length utterances (:class:`LengthBucketBatchSampler`: batch sizes vary, the last of an epoch
may be smaller). The loop checkpoints every ``checkpoint_every_n_steps`` steps and at the end, and
validates after every epoch (never before training); a resumed run restores weights, optimiser, AMP
scaler and RNG states, and continues the interrupted epoch at the next batch of the same
``(seed, epoch)``-determined batch order, so it reaches the same step count and epoch.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.utils.data import DataLoader

from tts_pipeline.config import AlignerConfig, config_hash
from tts_pipeline.models.aligner.data import AlignerBatch, AlignerCollate, AlignerDataset, LengthBucketBatchSampler
from tts_pipeline.models.aligner.loss import (
    binarization_loss,
    binarization_weight,
    forward_sum_loss,
    hard_alignment,
)
from tts_pipeline.models.aligner.model import Aligner, AlignerOutput
from tts_pipeline.precision import Precision, resolve_precision
from tts_pipeline.training import distributed
from tts_pipeline.training.checkpoint import Checkpoint, CheckpointManager, restore_rng_state
from tts_pipeline.training.engine import MetricsSink, TrainingDiverged, last_checkpoint_text
from tts_pipeline.training.loop import Cadence, EpochLoop, LoopIO, StepReport

log = logging.getLogger(__name__)

# Settings that change how long or where training runs, not the trajectory of the weights: a run
# resumed with more epochs or steps, another checkpoint cadence or more workers is the same run.
RESUME_NEUTRAL_KEYS = ("epochs", "max_steps", "checkpoint_every_n_steps", "keep_checkpoints", "num_workers", "gpus")


def resume_hash(aligner: Mapping[str, Any], n_mels: int, symbol_set: str) -> str:
    """Hash of everything that shapes the weights' trajectory; checkpoints of another hash are not resumed."""
    trajectory = {key: value for key, value in aligner.items() if key not in RESUME_NEUTRAL_KEYS}
    return config_hash({"aligner": trajectory, "n_mels": n_mels, "symbol_set": symbol_set})


def choose_device(gpus: int) -> torch.device:
    """The first CUDA device when GPUs are asked for and present (single process), else the CPU."""
    return distributed.choose_device(gpus, what="aligner.gpus")


@dataclass
class AlignerLosses:
    """Scalar losses of one batch: ``total = ctc + kl_weight * bin``."""

    total: torch.Tensor
    ctc: torch.Tensor
    bin: torch.Tensor


@dataclass
class TrainState:
    """Everything a step changes, and what a checkpoint stores.

    Attributes:
        step: Optimiser steps done.
        epoch: Current epoch, from 1.
        batch_in_epoch: Batches of ``epoch`` already done.
        history: One dict of per-epoch figures per finished epoch.
    """

    model: Aligner
    optimizer: torch.optim.Optimizer
    scaler: torch.amp.GradScaler  # enabled for fp16 only; disabled, it passes losses and steps through
    step: int = 0
    epoch: int = 1
    batch_in_epoch: int = 0
    history: list[dict[str, float]] = field(default_factory=list)


@dataclass
class TrainingResult:
    """The trained model and the figures that go into ``metrics.json``."""

    model: Aligner
    step: int
    epoch: int
    metrics: dict[str, Any]


def resolve_aligner_precision(cfg: AlignerConfig, device: torch.device) -> Precision:
    """``aligner.amp`` on ``device``, by the policy every trainer shares (:mod:`tts_pipeline.precision`).

    Under bf16 or fp16 only the key and query convolutions run in half precision: the model computes
    its distances, log-softmax and attention in float32, and the losses cast to float32 (CTC and the
    log of the soft attention lose too much in 8 mantissa bits).
    """
    return resolve_precision(cfg.amp, device, key="aligner.amp")


def compute_losses(
    model: Aligner, batch: AlignerBatch, kl_weight: float, precision: Precision
) -> tuple[AlignerOutput, AlignerLosses]:
    """Forward pass and losses of one batch (already on the model's device).

    The forward runs under ``precision``'s autocast; the losses outside it, in float32. The
    binarisation loss needs MAS on the CPU; it is skipped while its weight is 0.
    """
    device = batch.mels.device
    with precision.autocast():
        output = model(batch.text, batch.text_lengths, batch.mels, batch.prior)
    ctc = forward_sum_loss(output.attn_logprob, batch.text_lengths, batch.mel_lengths)
    if kl_weight > 0:
        hard = hard_alignment(output.attn_soft, batch.text_lengths, batch.mel_lengths)
        bin_loss = binarization_loss(hard, output.attn_soft)
    else:
        bin_loss = torch.zeros((), device=device)
    return output, AlignerLosses(total=ctc + kl_weight * bin_loss, ctc=ctc, bin=bin_loss)


def attention_sharpness(attn_soft: torch.Tensor, mel_lengths: torch.Tensor) -> torch.Tensor:
    """Sum over valid frames of the largest attention weight of each frame (``(B, 1, T_mel, T_text)`` in).

    Divided by the number of frames this is near 1/T_text for a flat attention and 1 for a hard one.
    """
    best = attn_soft.squeeze(1).amax(dim=2)  # (B, T_mel)
    valid = torch.arange(best.shape[1], device=best.device)[None, :] < mel_lengths[:, None]
    return (best * valid).sum()


@torch.no_grad()
def evaluate(model: Aligner, loader: DataLoader, kl_weight: float, device: torch.device, precision: Precision) -> dict:
    """Validation figures: item-weighted mean ``val_loss``, ``val_ctc``, ``val_bin``, and ``val_attn_max``
    (mean over frames of each frame's largest attention weight)."""
    was_training = model.training
    model.eval()
    sums = {"val_loss": 0.0, "val_ctc": 0.0, "val_bin": 0.0}
    items = frames = 0
    sharpness = 0.0
    for batch in loader:
        batch = batch.to(device)
        output, losses = compute_losses(model, batch, max(kl_weight, 1e-6), precision)
        size = len(batch.ids)
        sums["val_ctc"] += float(losses.ctc) * size
        sums["val_bin"] += float(losses.bin) * size
        sums["val_loss"] += float(losses.ctc + kl_weight * losses.bin) * size
        sharpness += float(attention_sharpness(output.attn_soft, batch.mel_lengths))
        items += size
        frames += int(batch.mel_lengths.sum())
    model.train(was_training)
    if items == 0:
        return {}
    return {**{key: value / items for key, value in sums.items()}, "val_attn_max": sharpness / max(frames, 1)}


def build_state(cfg: AlignerConfig, n_symbols: int, n_mels: int, precision: Precision) -> TrainState:
    """A freshly initialised model (seeded) on ``precision.device``, AdamW and ``precision``'s gradient scaler."""
    device = precision.device
    torch.manual_seed(cfg.seed)
    model = Aligner(
        n_symbols=n_symbols,
        n_mels=n_mels,
        embedding_dim=cfg.embedding_dim,
        attention_dim=cfg.attention_dim,
        temperature=cfg.temperature,
    ).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.learning_rate, weight_decay=cfg.weight_decay)
    return TrainState(model=model, optimizer=optimizer, scaler=precision.grad_scaler())


def restore_state(state: TrainState, checkpoint: Checkpoint) -> None:
    """Load a checkpoint into ``state`` (weights, optimiser, scaler, counters, RNG)."""
    state.model.load_state_dict(checkpoint.states["model"])
    state.optimizer.load_state_dict(checkpoint.states["optimizer"])
    if checkpoint.states.get("scaler"):  # absent or empty when the scaler was disabled
        state.scaler.load_state_dict(checkpoint.states["scaler"])
    state.step = checkpoint.step
    state.epoch = checkpoint.epoch
    state.batch_in_epoch = int(checkpoint.extra.get("batch_in_epoch", 0))
    state.history = list(checkpoint.extra.get("history", []))
    restore_rng_state(checkpoint.rng)


def save_state(manager: CheckpointManager, state: TrainState, run_id: str | None) -> None:
    states: dict[str, Any] = {"model": state.model, "optimizer": state.optimizer, "scaler": state.scaler}
    manager.save(
        state.step,
        state.epoch,
        states,
        run_id=run_id,
        extra={"batch_in_epoch": state.batch_in_epoch, "history": state.history},
    )


def _diverged(state: TrainState, manager: CheckpointManager, what: str) -> TrainingDiverged:
    last = last_checkpoint_text(manager.paths())
    return TrainingDiverged(
        f"train_aligner: non-finite {what} at step {state.step + 1} (epoch {state.epoch}); {last}. "
        "Try a lower aligner.learning_rate or aligner.grad_clip, or amp: off."
    )


def train_step(
    state: TrainState,
    batch: AlignerBatch,
    kl_weight: float,
    cfg: AlignerConfig,
    manager: CheckpointManager,
    precision: Precision,
) -> AlignerLosses:
    """One optimiser step (the loop then advances the counters); raises :class:`TrainingDiverged` on a
    NaN/Inf loss, or a non-finite gradient norm without fp16 scaling (nothing is updated)."""
    state.optimizer.zero_grad(set_to_none=True)
    _, losses = compute_losses(state.model, batch, kl_weight, precision)
    if not torch.isfinite(losses.total):
        ctc, bin_loss = float(losses.ctc.detach()), float(losses.bin.detach())
        raise _diverged(state, manager, f"loss (ctc {ctc}, binarisation {bin_loss})")
    state.scaler.scale(losses.total).backward()
    state.scaler.unscale_(state.optimizer)
    norm = torch.nn.utils.clip_grad_norm_(state.model.parameters(), cfg.grad_clip)
    if not torch.isfinite(norm) and not state.scaler.is_enabled():
        # With fp16 scaling an overflow now and then is expected: the scaler skips the step and lowers
        # its scale. Without it (fp32, bf16) a non-finite gradient is divergence.
        raise _diverged(state, manager, "gradient norm")
    state.scaler.step(state.optimizer)
    state.scaler.update()
    return losses


def _step_figures(losses: AlignerLosses) -> dict[str, float]:
    return {"loss": float(losses.total.detach()), "ctc": float(losses.ctc.detach()), "bin": float(losses.bin.detach())}


def _loader(dataset: AlignerDataset, sampler: LengthBucketBatchSampler, cfg: AlignerConfig, device: torch.device):
    return DataLoader(
        dataset,
        batch_sampler=sampler,
        collate_fn=AlignerCollate(cfg.prior_scaling),
        num_workers=cfg.num_workers,
        pin_memory=device.type == "cuda",
    )


class BucketedBatches:
    """The aligner's :class:`tts_pipeline.training.batches.BatchSource`: one batch of similar-length
    utterances per step, a resumed epoch skipping the batches already done.

    Args:
        dataset: Training utterances.
        cfg: The ``aligner`` section (``batch_size``, ``seed``, ``num_workers``, ``prior_scaling``).
        device: Where training runs (pinned memory for CUDA).
    """

    accumulation = 1
    global_batch_size = None  # batch sizes vary

    def __init__(self, dataset: AlignerDataset, cfg: AlignerConfig, device: torch.device) -> None:
        self.sampler = LengthBucketBatchSampler(dataset.mel_lengths, cfg.batch_size, seed=cfg.seed)
        self.loader = _loader(dataset, self.sampler, cfg, device)
        self.steps_per_epoch = len(self.sampler)

    def set_position(self, epoch: int, steps_done: int) -> None:
        self.sampler.set_epoch(epoch, skip=steps_done)

    def steps(self) -> Iterator[list[AlignerBatch]]:
        return ([batch] for batch in self.loader)


def fit(
    cfg: AlignerConfig,
    train_set: AlignerDataset,
    val_set: AlignerDataset | None,
    *,
    n_symbols: int,
    n_mels: int,
    manager: CheckpointManager,
    checkpoint: Checkpoint | None = None,
    device: torch.device | None = None,
    metrics: MetricsSink | None = None,
    run_id: str | None = None,
    log_every: int = 50,
    on_checkpoint: Callable[[TrainState], None] | None = None,
) -> TrainingResult:
    """Train (or continue training) the aligner until ``cfg.epochs`` epochs or ``cfg.max_steps`` steps.

    Args:
        cfg: The ``aligner`` config section.
        train_set, val_set: Datasets; validation runs after every epoch and at the end.
        n_symbols: Size of the symbol table.
        n_mels: Mel channels.
        manager: Where checkpoints go.
        checkpoint: A checkpoint to resume from (``manager.latest()``), or None to start fresh.
        device: Default: :func:`choose_device` of ``cfg.gpus``.
        metrics: Receives train figures every ``log_every`` steps and validation figures per epoch.
        run_id: MLflow run id stored in checkpoints, so that a resumed job reopens the same run.
        on_checkpoint: Called after every checkpoint is written (tests use it to interrupt).

    Where the section's settings go: ``amp`` to the precision (:func:`resolve_aligner_precision`), which
    :func:`build_state` (the scaler), :func:`train_step` and validation use; the model's sizes,
    ``learning_rate`` and ``weight_decay`` to :func:`build_state`; ``batch_size``, ``seed``,
    ``num_workers`` and ``prior_scaling`` to the batches (:class:`BucketedBatches`); ``binarization_*``
    to each epoch's binarisation weight; ``grad_clip`` to :func:`train_step`; ``epochs``, ``max_steps``, ``seed`` and
    ``checkpoint_every_n_steps`` to the epoch loop.

    Returns:
        :class:`TrainingResult`; ``metrics`` holds the final validation figures, throughput and the
        per-epoch history.
    """
    device = device or choose_device(cfg.gpus)
    precision = resolve_aligner_precision(cfg, device)
    state = build_state(cfg, n_symbols, n_mels, precision)
    if checkpoint is not None:
        restore_state(state, checkpoint)
    io = LoopIO(distributed.DistributedContext(device=device), manager, metrics, run_id, log_every, on_checkpoint)
    loop = _Loop(cfg, state, train_set, val_set, io, precision)
    loop.run(checkpoint)
    return loop.result()


class _Loop(EpochLoop):
    """The aligner's step, validation and checkpoints on the shared epoch loop; :func:`fit` is the entry.

    Unlike the other trainers it takes variable-size batches, checkpoints every
    ``checkpoint_every_n_steps`` steps, validates after every epoch but not before training, reports
    ``steps_per_s`` and the epoch's binarisation weight, and logs ``train_epoch_loss`` per epoch.
    """

    state: TrainState

    def __init__(
        self,
        cfg: AlignerConfig,
        state: TrainState,
        train_set: AlignerDataset,
        val_set: AlignerDataset | None,
        io: LoopIO,
        precision: Precision,
    ) -> None:
        device = io.context.device
        super().__init__(
            cfg,  # type: ignore[arg-type]  # the loop reads epochs, max_steps and seed; the rest is given here
            "aligner",
            train_set,
            io,
            batches=BucketedBatches(train_set, cfg, device),
            checkpoint_every=Cadence(cfg.checkpoint_every_n_steps, "steps"),
            validation_every_n_epochs=1,
            validate_before_training=False,
            items_per_s="steps_per_s",  # each step reports one item
        )
        self.aligner, self.state, self.val_set = cfg, state, val_set
        self.precision = precision
        self.val_loader = None
        if val_set is not None and len(val_set):
            val_sampler = LengthBucketBatchSampler(val_set.mel_lengths, cfg.batch_size, shuffle=False)
            self.val_loader = _loader(val_set, val_sampler, cfg, device)
        self.kl_weight = self._kl_weight(state.epoch)

    def _kl_weight(self, epoch: int) -> float:
        cfg = self.aligner
        return binarization_weight(epoch, cfg.binarization_start_epoch, cfg.binarization_warmup_epochs)

    # -- hooks of the epoch loop -------------------------------------------------------------------

    def begin_epoch(self, epoch: int) -> None:
        self.kl_weight = self._kl_weight(epoch)
        self.state.model.train()

    def train_step(self, batches: Sequence[AlignerBatch]) -> StepReport:
        (batch,) = batches
        batch = batch.to(self.context.device)
        # The module's train_step (looked up at call time, so tests can replace it).
        losses = train_step(self.state, batch, self.kl_weight, self.aligner, self.manager, self.precision)
        return StepReport(figures=_step_figures(losses), frames=int(batch.mel_lengths.sum()), items=1)

    def validate(self, epoch: int) -> dict[str, float]:
        """Validation figures under ``epoch``'s binarisation weight; logged by :meth:`epoch_figures`."""
        if self.val_loader is None:
            return {}
        return evaluate(self.state.model, self.val_loader, self._kl_weight(epoch), self.context.device, self.precision)

    def save_checkpoint(self) -> None:
        save_state(self.manager, self.state, self.run_id)

    def window_figures(self) -> dict[str, float]:
        return {"kl_weight": self.kl_weight}

    def epoch_figures(self, epoch: int, figures: dict[str, float]) -> None:
        if self.sink is not None:
            val = {key: value for key, value in figures.items() if key.startswith("val_")}
            self.sink.log_metrics({"train_epoch_loss": figures["train_loss"], **val}, step=self.state.step)

    def describe(self, figures: Mapping[str, float]) -> str:
        text = f"train loss {figures['train_loss']:.4f}"
        if "val_loss" in figures:
            text += f", val loss {figures['val_loss']:.4f}, attn max {figures['val_attn_max']:.3f}"
        return text

    # -- the end -----------------------------------------------------------------------------------

    def result(self) -> TrainingResult:
        """The final checkpoint (unless just done), a final validation and the run's figures.

        The final validation always runs, under the binarisation weight of the last epoch trained (at
        most ``epochs``), and is not added to the history.
        """
        state, cfg = self.state, self.aligner
        self.final_checkpoint()
        elapsed = time.perf_counter() - self.started
        final_epoch = min(state.epoch, cfg.epochs)
        final = self.validate(final_epoch)
        metrics = {
            "step": state.step,
            "epoch": final_epoch,
            "epochs_completed": len(state.history),
            "resumed_from_step": self.resumed_from,
            "device": str(self.context.device),
            "n_train": len(self.train_set),
            "n_val": len(self.val_set) if self.val_set is not None else 0,
            "steps_this_run": self.steps_run,
            "seconds_this_run": elapsed,
            # Over the whole run, validation and checkpoints included.
            "steps_per_s": self.steps_run / elapsed if self.steps_run else None,
            "frames_per_s": self.frames_run / elapsed if self.steps_run else None,
            **final,
            "history": state.history,
        }
        state.model.eval()
        return TrainingResult(model=state.model, step=state.step, epoch=final_epoch, metrics=metrics)
