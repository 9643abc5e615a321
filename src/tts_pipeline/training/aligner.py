"""Training loop of the standalone aligner: forward-sum + ramped binarisation loss, resumable.

The loop is plain functions over explicit state (:class:`TrainState`). It checkpoints every
``checkpoint_every_n_steps`` steps and at the end; a resumed run restores weights, optimiser, AMP
scaler and RNG states, and continues the interrupted epoch at the next batch of the same
``(seed, epoch)``-determined batch order, so it reaches the same step count and epoch.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Mapping
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
from tts_pipeline.precision import Precision
from tts_pipeline.training import distributed
from tts_pipeline.training.checkpoint import Checkpoint, CheckpointManager, restore_rng_state
from tts_pipeline.training.engine import (
    MetricsSink,
    RunningMeans,
    ThroughputMeter,
    TrainingDiverged,
    last_checkpoint_text,
)

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
    scaler: torch.amp.GradScaler | None
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


def _autocast(device: torch.device, amp: str) -> contextlib.AbstractContextManager[object]:
    return Precision("off" if device.type != "cuda" else amp, device).autocast()  # type: ignore[arg-type]


def compute_losses(
    model: Aligner, batch: AlignerBatch, kl_weight: float, *, amp: str = "off"
) -> tuple[AlignerOutput, AlignerLosses]:
    """Forward pass and losses of one batch (already on the model's device).

    The binarisation loss needs MAS on the CPU; it is skipped while its weight is 0.
    """
    device = batch.mels.device
    with _autocast(device, amp):
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
def evaluate(model: Aligner, loader: DataLoader, kl_weight: float, device: torch.device, amp: str = "off") -> dict:
    """Validation figures: item-weighted mean ``val_loss``, ``val_ctc``, ``val_bin``, and ``val_attn_max``
    (mean over frames of each frame's largest attention weight)."""
    was_training = model.training
    model.eval()
    sums = {"val_loss": 0.0, "val_ctc": 0.0, "val_bin": 0.0}
    items = frames = 0
    sharpness = 0.0
    for batch in loader:
        batch = batch.to(device)
        output, losses = compute_losses(model, batch, max(kl_weight, 1e-6), amp=amp)
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


def build_state(cfg: AlignerConfig, n_symbols: int, n_mels: int, device: torch.device) -> TrainState:
    """A freshly initialised model (seeded), AdamW and, for fp16 on CUDA, a gradient scaler."""
    torch.manual_seed(cfg.seed)
    model = Aligner(
        n_symbols=n_symbols,
        n_mels=n_mels,
        embedding_dim=cfg.embedding_dim,
        attention_dim=cfg.attention_dim,
        temperature=cfg.temperature,
    ).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.learning_rate, weight_decay=cfg.weight_decay)
    scaler = torch.amp.GradScaler("cuda") if device.type == "cuda" and cfg.amp == "fp16" else None
    return TrainState(model=model, optimizer=optimizer, scaler=scaler)


def restore_state(state: TrainState, checkpoint: Checkpoint) -> None:
    """Load a checkpoint into ``state`` (weights, optimiser, scaler, counters, RNG)."""
    state.model.load_state_dict(checkpoint.states["model"])
    state.optimizer.load_state_dict(checkpoint.states["optimizer"])
    if state.scaler is not None and "scaler" in checkpoint.states:
        state.scaler.load_state_dict(checkpoint.states["scaler"])
    state.step = checkpoint.step
    state.epoch = checkpoint.epoch
    state.batch_in_epoch = int(checkpoint.extra.get("batch_in_epoch", 0))
    state.history = list(checkpoint.extra.get("history", []))
    restore_rng_state(checkpoint.rng)


def save_state(manager: CheckpointManager, state: TrainState, run_id: str | None) -> None:
    states: dict[str, Any] = {"model": state.model, "optimizer": state.optimizer}
    if state.scaler is not None:
        states["scaler"] = state.scaler
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
    state: TrainState, batch: AlignerBatch, kl_weight: float, cfg: AlignerConfig, manager: CheckpointManager
) -> AlignerLosses:
    """One optimiser step; raises :class:`TrainingDiverged` on a NaN/Inf loss (nothing is updated)."""
    state.optimizer.zero_grad(set_to_none=True)
    _, losses = compute_losses(state.model, batch, kl_weight, amp=cfg.amp)
    if not torch.isfinite(losses.total):
        ctc, bin_loss = float(losses.ctc.detach()), float(losses.bin.detach())
        raise _diverged(state, manager, f"loss (ctc {ctc}, binarisation {bin_loss})")
    if state.scaler is not None:
        # fp16: the scaler skips steps whose gradients overflow and lowers its scale, by design.
        state.scaler.scale(losses.total).backward()
        state.scaler.unscale_(state.optimizer)
        torch.nn.utils.clip_grad_norm_(state.model.parameters(), cfg.grad_clip)
        state.scaler.step(state.optimizer)
        state.scaler.update()
    else:
        losses.total.backward()
        norm = torch.nn.utils.clip_grad_norm_(state.model.parameters(), cfg.grad_clip)
        if not torch.isfinite(norm):
            raise _diverged(state, manager, "gradient norm")
        state.optimizer.step()
    state.step += 1
    state.batch_in_epoch += 1
    return losses


def _window_summary(means: RunningMeans, meter: ThroughputMeter, kl_weight: float) -> dict[str, float]:
    """Mean train losses, the binarisation weight and the throughput of the steps since the last reset."""
    frames_per_s, steps_per_s = meter.rate()  # one "item" per step
    return {**means.means("train_"), "kl_weight": kl_weight, "frames_per_s": frames_per_s, "steps_per_s": steps_per_s}


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

    Where the section's settings go: the model's sizes, ``learning_rate``, ``weight_decay`` and ``amp``
    (the scaler) to :func:`build_state`; ``batch_size``, ``seed``, ``num_workers`` and ``prior_scaling``
    to the batches; ``binarization_*`` to each epoch's binarisation weight; ``amp`` and ``grad_clip`` to
    :func:`train_step`; ``epochs``, ``max_steps`` and ``checkpoint_every_n_steps`` to the loop here.

    Returns:
        :class:`TrainingResult`; ``metrics`` holds the final validation figures, throughput and the
        per-epoch history.
    """
    device = device or choose_device(cfg.gpus)
    state = build_state(cfg, n_symbols, n_mels, device)
    resumed_from = 0
    if checkpoint is not None:
        restore_state(state, checkpoint)
        resumed_from = checkpoint.step
        log.info("resuming from %s (step %s, epoch %s)", checkpoint.path, checkpoint.step, checkpoint.epoch)
    sink = metrics
    sampler = LengthBucketBatchSampler(train_set.mel_lengths, cfg.batch_size, seed=cfg.seed)
    loader = _loader(train_set, sampler, cfg, device)
    val_loader = None
    if val_set is not None and len(val_set):
        val_sampler = LengthBucketBatchSampler(val_set.mel_lengths, cfg.batch_size, shuffle=False)
        val_loader = _loader(val_set, val_sampler, cfg, device)
    batches_per_epoch = len(sampler)

    def done() -> bool:
        return state.epoch > cfg.epochs or (cfg.max_steps is not None and state.step >= cfg.max_steps)

    def checkpoint_now() -> None:
        save_state(manager, state, run_id)
        if on_checkpoint is not None:
            on_checkpoint(state)

    started = time.perf_counter()
    steps_run = frames_run = 0
    saved_step = state.step if checkpoint is not None else -1
    state.model.train()
    # Figures of the current log window and of the current epoch (the same steps, reset at other times).
    context = distributed.DistributedContext(device=device)
    window, window_meter = RunningMeans(), ThroughputMeter(context)
    epoch_means, epoch_meter = RunningMeans(), ThroughputMeter(context)
    while not done():
        kl_weight = binarization_weight(state.epoch, cfg.binarization_start_epoch, cfg.binarization_warmup_epochs)
        sampler.set_epoch(state.epoch, skip=state.batch_in_epoch)
        for batch in loader:
            batch = batch.to(device)
            losses = train_step(state, batch, kl_weight, cfg, manager)
            frames = int(batch.mel_lengths.sum())
            for means, meter in ((window, window_meter), (epoch_means, epoch_meter)):
                means.add(_step_figures(losses))
                meter.add(frames, items=1)
            steps_run += 1
            frames_run += frames
            if state.step % log_every == 0 and sink is not None:
                summary = _window_summary(window, window_meter, kl_weight)
                sink.log_metrics({**summary, "epoch": state.epoch}, step=state.step)
                window.reset()
                window_meter.reset()
            if state.batch_in_epoch >= batches_per_epoch:
                summary = _window_summary(epoch_means, epoch_meter, kl_weight)
                _finish_epoch(state, summary, val_loader, kl_weight, device, cfg, sink)
                epoch_means.reset()
                epoch_meter.reset()
            if state.step % cfg.checkpoint_every_n_steps == 0:
                checkpoint_now()
                saved_step = state.step
            if done():
                break
    if saved_step != state.step:
        checkpoint_now()
    elapsed = time.perf_counter() - started

    final_epoch = min(state.epoch, cfg.epochs)
    kl_weight = binarization_weight(final_epoch, cfg.binarization_start_epoch, cfg.binarization_warmup_epochs)
    final = evaluate(state.model, val_loader, kl_weight, device, cfg.amp) if val_loader is not None else {}
    result = {
        "step": state.step,
        "epoch": final_epoch,
        "epochs_completed": len(state.history),
        "resumed_from_step": resumed_from,
        "device": str(device),
        "n_train": len(train_set),
        "n_val": len(val_set) if val_set is not None else 0,
        "steps_this_run": steps_run,
        "seconds_this_run": elapsed,
        "steps_per_s": steps_run / elapsed if steps_run else None,
        "frames_per_s": frames_run / elapsed if steps_run else None,
        **final,
        "history": state.history,
    }
    state.model.eval()
    return TrainingResult(model=state.model, step=state.step, epoch=final_epoch, metrics=result)


def _finish_epoch(
    state: TrainState,
    train_summary: dict[str, float],
    val_loader: DataLoader | None,
    kl_weight: float,
    device: torch.device,
    cfg: AlignerConfig,
    sink: MetricsSink | None,
) -> None:
    """Validate, record the epoch in the history and move the counters to the next epoch."""
    figures = {"epoch": state.epoch, "step": state.step, **train_summary}
    if val_loader is not None:
        figures.update(evaluate(state.model, val_loader, kl_weight, device, cfg.amp))
    state.history.append({key: float(value) for key, value in figures.items()})
    if sink is not None:
        val = {key: value for key, value in figures.items() if key.startswith("val_")}
        sink.log_metrics({"epoch_train_loss": train_summary["train_loss"], **val}, step=state.step)
    val_text = ""
    if "val_loss" in figures:
        val_text = f", val loss {figures['val_loss']:.4f}, attn max {figures['val_attn_max']:.3f}"
    log.info("epoch %s (step %s): train loss %.4f%s", state.epoch, state.step, train_summary["train_loss"], val_text)
    state.epoch += 1
    state.batch_in_epoch = 0
