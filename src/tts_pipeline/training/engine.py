"""What every trainer shares: gradient accumulation, data loaders, finding the checkpoint
to resume, throughput, NaN/Inf guard, seeding, learning-rate helpers and running means for log lines.

Throughput unit. :class:`ThroughputMeter` counts *real mel frames*: a HiFi-GAN item of
``segment_size`` samples is ``segment_size / hop`` frames (32 for 8192 samples), summed over every
process. NVIDIA's HiFi-GAN logs "frames/s" as ``batch x n_mels`` per item (80 per 8192-sample item:
it counts mel bins, reference 2.11), so for the recipe's shapes

    nvidia_frames_per_s = frames_per_s x n_mels / (segment_size / hop) = frames_per_s x 80 / 32 = 2.5 x frames_per_s

:func:`nvidia_frames_per_s` does this conversion for comparisons with NVIDIA's published tables.
"""

from __future__ import annotations

import logging
import math
import random
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Protocol, TypeVar

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

from tts_pipeline.errors import UserError
from tts_pipeline.timers import synchronize
from tts_pipeline.training.checkpoint import Checkpoint, CheckpointManager
from tts_pipeline.training.distributed import DistributedContext

log = logging.getLogger(__name__)

class MetricsSink(Protocol):
    """Where metrics go (a :class:`tts_pipeline.tracking.StageRun`, or anything with this method)."""

    def log_metrics(self, metrics: Mapping[str, float], step: int | None = None) -> None: ...


class ArtifactSink(MetricsSink, Protocol):
    """A tracking run that also takes files (plots, audio samples) and says whether it records at all."""

    @property
    def active(self) -> bool: ...

    def log_artifact(self, path: str | Path, artifact_path: str | None = None) -> None: ...


# --------------------------------------------------------------------------------------------------
# batches
# --------------------------------------------------------------------------------------------------


def accumulation_steps(global_batch_size: int, batch_size: int, world_size: int, *, section: str) -> int:
    """Micro-batches per optimiser step: ``global_batch_size / (world_size x batch_size)``.

    The global batch is a training hyperparameter and must not change with the number of GPUs a job
    is granted, so the division must be exact. Raises UserError naming ``<section>.global_batch_size``,
    ``<section>.batch_size`` and the granted process count otherwise.
    """
    if global_batch_size < 1 or batch_size < 1 or world_size < 1:
        raise ValueError(f"expected positive sizes, got {global_batch_size=}, {batch_size=}, {world_size=}")
    per_step = world_size * batch_size
    if global_batch_size % per_step:
        raise UserError(
            f"{section}.global_batch_size ({global_batch_size}) is not a multiple of {section}.batch_size "
            f"({batch_size}) x the {world_size} process(es)/GPU(s) granted = {per_step}; choose a batch_size, "
            f"or a GPU count, that divides the global batch (gradient accumulation makes up the rest)"
        )
    return global_batch_size // per_step


def make_loader(
    dataset: Dataset[Any], batch_size: int, num_workers: int, device: torch.device, **options: Any
) -> DataLoader:
    """A DataLoader with the settings every trainer wants: pinned memory for a GPU, workers kept alive
    between epochs. ``options`` go to DataLoader (sampler, collate_fn, drop_last, generator, ...)."""
    return DataLoader(
        dataset,
        batch_size=batch_size,
        num_workers=num_workers,
        pin_memory=device.type == "cuda",
        persistent_workers=num_workers > 0,
        **options,
    )


Item = TypeVar("Item")


def grouped(items: Iterable[Item], size: int) -> Iterator[list[Item]]:
    """Consecutive groups of ``size`` items (the micro-batches of one optimiser step); an incomplete
    last group is dropped, so every step sees a full global batch."""
    group: list[Item] = []
    for item in items:
        group.append(item)
        if len(group) == size:
            yield group
            group = []


def find_resume_checkpoint(manager: CheckpointManager, context: DistributedContext) -> Checkpoint | None:
    """The checkpoint every rank resumes from (None = start fresh).

    Rank 0 looks first, because looking may move checkpoints of another config aside; the other ranks
    look after it has done so, and so find the same file.
    """
    checkpoint = manager.latest() if context.is_main else None
    context.barrier()
    if not context.is_main:
        checkpoint = manager.latest()
    return checkpoint


# --------------------------------------------------------------------------------------------------
# seeding
# --------------------------------------------------------------------------------------------------


def seed_everything(seed: int, rank: int = 0) -> int:
    """Seed Python, numpy and torch (CPU and CUDA) with ``seed + rank``; returns that seed.

    Each rank gets its own stream (different random crops per GPU) while the run stays reproducible.
    """
    value = int(seed) + int(rank)
    random.seed(value)
    np.random.seed(value % 2**32)
    torch.manual_seed(value)
    return value


# --------------------------------------------------------------------------------------------------
# NaN / Inf guard
# --------------------------------------------------------------------------------------------------


class TrainingDiverged(UserError):
    """A loss became NaN/Inf; the message names the step and the last good checkpoint."""


def last_checkpoint_text(checkpoints: Iterable[Path]) -> str:
    paths = list(checkpoints)
    return f"the last good checkpoint is {paths[-1]}" if paths else "no checkpoint was saved yet"


def check_finite(
    values: Mapping[str, float],
    *,
    stage: str,
    step: int,
    epoch: int,
    checkpoints: Iterable[Path],
    hint: str = "",
) -> None:
    """Raise :class:`TrainingDiverged` if any value is NaN/Inf.

    Args:
        values: Named losses of one step (already reduced over processes, so every rank decides alike
            and no rank is left waiting in a collective).
        stage: Stage name for the message.
        step: The step that produced them (from 1).
        epoch: Its epoch.
        checkpoints: Saved checkpoint files, oldest first (the newest is named as the last good one;
            a checkpoint is only ever written after finite steps).
        hint: What to try, e.g. a lower learning rate.
    """
    bad = {name: value for name, value in values.items() if not math.isfinite(value)}
    if not bad:
        return
    shown = ", ".join(f"{name} {value}" for name, value in values.items())
    message = f"{stage}: non-finite loss ({shown}) at step {step} (epoch {epoch}); {last_checkpoint_text(checkpoints)}."
    raise TrainingDiverged(f"{message} {hint}".strip())


# --------------------------------------------------------------------------------------------------
# throughput
# --------------------------------------------------------------------------------------------------


class ThroughputMeter:
    """Mel frames per second over every process, timed with the device synchronised.

    Each process adds the frames it trained on; :meth:`rate` sums them over processes (a collective:
    every rank must call it at the same point) and divides by the wall time since :meth:`reset`.
    """

    def __init__(self, context: DistributedContext) -> None:
        self.context = context
        self.reset()

    def reset(self) -> None:
        synchronize(self.context.device)
        self.frames = 0
        self.items = 0
        self.started = time.perf_counter()

    def add(self, frames: int, items: int = 0) -> None:
        self.frames += int(frames)
        self.items += int(items)

    def elapsed(self) -> float:
        synchronize(self.context.device)
        return max(time.perf_counter() - self.started, 1e-9)

    def rate(self) -> tuple[float, float]:
        """``(frames/s, items/s)`` summed over processes since the last reset."""
        elapsed = self.elapsed()
        frames, items = self.context.sum_floats([self.frames, self.items])
        return frames / elapsed, items / elapsed


def nvidia_frames_per_s(frames_per_s: float, n_mels: int, frames_per_item: int) -> float:
    """Convert real mel frames/s to NVIDIA HiFi-GAN's unit (``n_mels`` per item; module docstring)."""
    return frames_per_s * n_mels / frames_per_item


# --------------------------------------------------------------------------------------------------
# learning rate
# --------------------------------------------------------------------------------------------------


def learning_rate(optimizer: torch.optim.Optimizer) -> float:
    """The learning rate of the first parameter group."""
    return float(optimizer.param_groups[0]["lr"])


def scale_learning_rate(optimizer: torch.optim.Optimizer, factor: float) -> None:
    """Multiply every parameter group's learning rate by ``factor`` (e.g. once when fine-tuning starts)."""
    for group in optimizer.param_groups:
        group["lr"] = group["lr"] * factor
        if "initial_lr" in group:
            group["initial_lr"] = group["initial_lr"] * factor


def noam_scale(step: int, warmup_steps: int) -> float:
    """Warm-up then inverse square root (FastPitch, reference 3.7): ``step / warmup^1.5`` while
    ``step <= warmup``, else ``1 / sqrt(step)``; multiply by the base learning rate. ``step`` from 1."""
    step = max(int(step), 1)
    if warmup_steps > 0 and step <= warmup_steps:
        return step / warmup_steps**1.5
    return 1.0 / math.sqrt(step)


# --------------------------------------------------------------------------------------------------
# running means for log lines
# --------------------------------------------------------------------------------------------------


class RunningMeans:
    """Means of named per-step figures since the last reset, each over the steps that reported it (a
    step the fp16 gradient scaler skips reports no gradient norm); :attr:`count` counts every step."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.sums: dict[str, float] = {}
        self.counts: dict[str, int] = {}
        self.count = 0

    def add(self, values: Mapping[str, float]) -> None:
        for name, value in values.items():
            self.sums[name] = self.sums.get(name, 0.0) + float(value)
            self.counts[name] = self.counts.get(name, 0) + 1
        self.count += 1

    def means(self, prefix: str = "") -> dict[str, float]:
        return {f"{prefix}{name}": total / self.counts[name] for name, total in self.sums.items()}
