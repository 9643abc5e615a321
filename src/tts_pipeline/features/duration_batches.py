"""What the two model-based duration sources (the aligner and Tacotron 2) share: padded model inputs,
and running a model over every utterance in batches of similar length, writing each one's files.

A job is one utterance with its mel's frame count ``T`` and its symbol ids ``(L,)``. Jobs are sorted
by ``(T, id)``, so that similar lengths share a batch (little padding) and reruns give the same
batches; what a batch's durations are is the source's own (MAS on soft attention, or attention argmax).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from tts_pipeline.data.feature_layout import FeatureLayout
from tts_pipeline.features.symbol_files import SplitCounts, Utterance, write_symbol_files

# ``B`` symbol-id sequences and ``B`` mels ``(n_mels, T_b)`` -> ``B`` int32 ``(L_b,)`` durations.
BatchDurations = Callable[[list[list[int]], list[np.ndarray]], list[np.ndarray]]


class DurationJob(NamedTuple):
    """One utterance to find durations for: ``T`` of its mel, the utterance, its ``L`` symbol ids."""

    n_frames: int
    utterance: Utterance
    ids: list[int]


class PaddedBatch(NamedTuple):
    """A batch of texts and mels, zero-padded to the longest of each.

    Attributes:
        text: ``(B, max L_b)`` int64 symbol ids.
        mel: ``(B, n_mels, max T_b)`` float32 log-mels.
        text_lengths: ``B`` values ``L_b``.
        mel_lengths: ``B`` values ``T_b``.
    """

    text: np.ndarray
    mel: np.ndarray
    text_lengths: list[int]
    mel_lengths: list[int]


def pad_batch(texts: Sequence[Sequence[int]], mels: Sequence[np.ndarray]) -> PaddedBatch:
    """``B`` symbol-id sequences and ``B`` log-mels ``(n_mels, T_b)`` as one zero-padded batch."""
    text_lengths = [len(text) for text in texts]
    mel_lengths = [mel.shape[1] for mel in mels]
    batch, n_mels = len(texts), mels[0].shape[0]
    text = np.zeros((batch, max(text_lengths)), dtype=np.int64)
    mel = np.zeros((batch, n_mels, max(mel_lengths)), dtype=np.float32)
    for index, (ids, features) in enumerate(zip(texts, mels, strict=True)):
        text[index, : len(ids)] = ids
        mel[index, :, : features.shape[1]] = features
    return PaddedBatch(text, mel, text_lengths, mel_lengths)


def write_in_batches(
    jobs: list[DurationJob],
    layout: FeatureLayout,
    batch_size: int,
    counts: dict[str, SplitCounts],
    durations_of: BatchDurations,
) -> None:
    """Sort ``jobs`` by length (in place), then, ``batch_size`` at a time, load their mels, find their
    durations with ``durations_of`` and write each utterance's files, counting them in ``counts``."""
    # Similar lengths share a batch (little padding); the order is fixed, so reruns give the same batches.
    jobs.sort(key=lambda job: (job.n_frames, job.utterance.id))
    for start in range(0, len(jobs), batch_size):
        batch = jobs[start : start + batch_size]
        mels = [np.load(layout.mel(job.utterance.id)) for job in batch]
        durations = durations_of([job.ids for job in batch], mels)
        for job, duration in zip(batch, durations, strict=True):
            write_symbol_files(layout, job.utterance.id, duration, np.asarray(job.ids, dtype=np.int32), job.n_frames)
            counts[job.utterance.split].add(duration, job.n_frames)
