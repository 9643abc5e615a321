"""Where an epoch loop's optimiser steps get their batches.

A :class:`BatchSource` yields, for each optimiser step, the list of micro-batches that step trains on,
and can start an epoch part-way through, so that a resumed run continues with the batches an
uninterrupted run would have seen. :class:`SampledBatches` is the source of the fixed-global-batch
trainers (HiFi-GAN, FastPitch, Tacotron 2, WaveGlow): ``k`` equal micro-batches per step from this rank's
share of a :class:`tts_pipeline.training.distributed.ResumableSampler` permutation.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

from torch.utils.data import Dataset

from tts_pipeline.config import EpochLoopSettings
from tts_pipeline.errors import UserError
from tts_pipeline.training.distributed import DistributedContext, LengthBuckets
from tts_pipeline.training.engine import accumulation_steps, grouped, make_loader


class BatchSource(Protocol):
    """The batches of an epoch loop, step by step.

    Attributes:
        steps_per_epoch: Optimiser steps in one epoch.
        accumulation: Micro-batches per step (``k``; 1 for a source of one batch per step).
        global_batch_size: Items per step over every process, or None where batch sizes vary.
    """

    steps_per_epoch: int
    accumulation: int
    global_batch_size: int | None

    def set_position(self, epoch: int, steps_done: int) -> None:
        """Make :meth:`steps` yield ``epoch``'s steps (from 1), leaving out its first ``steps_done``."""

    def steps(self) -> Iterator[list[Any]]:
        """The micro-batches of each remaining step of the epoch set by :meth:`set_position`."""


class SampledBatches:
    """``k`` micro-batches of ``batch_size`` items per step from a resumable distributed sampler.

    Args:
        cfg: The trainer's section (``global_batch_size``, ``batch_size``, ``num_workers``, ``seed``).
        section: Its name, for messages.
        train_set: Training items.
        context: Processes and device (this rank's share, pinned memory).
        buckets: Group the items by length (global batches of similar lengths); None = random batches.
        loader_options: More DataLoader options (``collate_fn``).

    Raises:
        UserError: The training set gives no full global batch.
    """

    def __init__(
        self,
        cfg: EpochLoopSettings,
        section: str,
        train_set: Dataset[Any],
        context: DistributedContext,
        *,
        buckets: LengthBuckets | None = None,
        **loader_options: Any,
    ) -> None:
        self.batch_size = cfg.batch_size
        self.global_batch_size: int | None = cfg.global_batch_size
        world_size = context.world_size
        self.accumulation = accumulation_steps(cfg.global_batch_size, cfg.batch_size, world_size, section=section)
        self.sampler = context.sampler(train_set, seed=cfg.seed, buckets=buckets)
        self.loader = make_loader(
            train_set,
            cfg.batch_size,
            cfg.num_workers,
            context.device,
            sampler=self.sampler,
            drop_last=True,
            **loader_options,
        )
        # Full global batches per epoch: the same with length buckets, which keep every full global batch
        # of the epoch's items in front of the few left over (bucketed_order).
        self.steps_per_epoch = len(self.sampler) // cfg.batch_size // self.accumulation
        if self.steps_per_epoch == 0:
            raise UserError(
                f"{section}: {len(train_set)} training utterances give no full global batch of "  # type: ignore[arg-type]
                f"{cfg.global_batch_size} ({context.world_size} process(es) x batch {cfg.batch_size} x "
                f"{self.accumulation} accumulation); lower {section}.global_batch_size"
            )

    def set_position(self, epoch: int, steps_done: int) -> None:
        # The sampler skips items: every step took k micro-batches of batch_size items on this rank.
        self.sampler.set_position(epoch, skip=steps_done * self.accumulation * self.batch_size)

    def steps(self) -> Iterator[list[Any]]:
        return grouped(self.loader, self.accumulation)
