"""How an aligner batch is built: symbol ids and log-mels of manifest records, padded, with priors.

Mels come from the features stage (``<features_dir>/mels/<id>.npy``, float32 ``(n_mels, T)``).
Batches group utterances of similar length (:class:`LengthBucketBatchSampler`), which wastes little
compute on padding; the grouping is a pure function of ``(seed, epoch)``, so a resumed run sees the
same batches in the same order.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch.utils.data import Dataset, Sampler

from tts_pipeline.data.manifest_record import ManifestRecord
from tts_pipeline.models.aligner.prior import batch_prior
from tts_pipeline.models.text_mel_index import TextMelIndex


def encode_text(text: str, symbols: str, symbol_set: str) -> list[int]:
    """Symbol ids of cleaned text (a manifest record's ``text``).

    Args:
        text: Cleaned text.
        symbols: ``"characters"`` (one id per grapheme) or ``"arpabet"`` (CMUdict words as phones).
        symbol_set: Symbol set name (``text.symbol_set``).
    """
    from tts_pipeline.text import encode

    return encode(text, symbols, symbol_set)


@dataclass(frozen=True)
class AlignerItem:
    """One utterance: ``text`` ``(T_text,)`` int64 symbol ids, ``mel`` ``(n_mels, T_mel)`` float32."""

    id: str
    text: torch.Tensor
    mel: torch.Tensor


class AlignerDataset(Dataset[AlignerItem]):
    """Manifest records paired with their mels.

    Every record is checked when the dataset is built (mel present, right channel count, text
    encodable, at least one frame per token), and all problems are reported together.

    Args:
        records: Manifest records (``id``, ``text``, ...).
        mels_dir: Folder of ``<id>.npy`` mels.
        n_mels: Expected mel channels.
        symbols: Symbol mode, see :func:`encode_text`.
        symbol_set: Symbol set name.
    """

    def __init__(
        self, records: Sequence[ManifestRecord], mels_dir: str | Path, n_mels: int, symbols: str, symbol_set: str
    ) -> None:
        self.index = TextMelIndex(
            records, mels_dir, n_mels, symbols, symbol_set, what="aligner data", frame_per_symbol=True
        )
        self.mels_dir, self.ids = self.index.mels_dir, self.index.ids
        self.texts, self.mel_lengths = self.index.texts, self.index.mel_lengths

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, index: int) -> AlignerItem:
        utterance_id, text, mel = self.index.load(index)
        return AlignerItem(id=utterance_id, text=text, mel=mel)


@dataclass
class AlignerBatch:
    """A padded batch.

    Attributes:
        ids: Utterance ids, ``B`` of them.
        text: ``(B, T_text)`` int64 symbol ids, 0-padded.
        text_lengths: ``(B,)`` int64.
        mels: ``(B, n_mels, T_mel)`` float32, 0-padded.
        mel_lengths: ``(B,)`` int64.
        prior: ``(B, T_mel, T_text)`` float32 beta-binomial prior (0 on padding), or None.
    """

    ids: list[str]
    text: torch.Tensor
    text_lengths: torch.Tensor
    mels: torch.Tensor
    mel_lengths: torch.Tensor
    prior: torch.Tensor | None

    def to(self, device: torch.device | str) -> AlignerBatch:
        non_blocking = torch.device(device).type == "cuda"

        def move(tensor: torch.Tensor) -> torch.Tensor:
            return tensor.to(device, non_blocking=non_blocking)

        return AlignerBatch(
            ids=self.ids,
            text=move(self.text),
            text_lengths=move(self.text_lengths),
            mels=move(self.mels),
            mel_lengths=move(self.mel_lengths),
            prior=None if self.prior is None else move(self.prior),
        )

    def pin_memory(self) -> AlignerBatch:
        """Called by the DataLoader with ``pin_memory=True``."""
        return AlignerBatch(
            ids=self.ids,
            text=self.text.pin_memory(),
            text_lengths=self.text_lengths.pin_memory(),
            mels=self.mels.pin_memory(),
            mel_lengths=self.mel_lengths.pin_memory(),
            prior=None if self.prior is None else self.prior.pin_memory(),
        )


class AlignerCollate:
    """Pads items into an :class:`AlignerBatch` (a class, not a closure, so worker processes can pickle it).

    Args:
        prior_scaling: Beta-binomial scaling; 0 means no prior.
    """

    def __init__(self, prior_scaling: float) -> None:
        self.prior_scaling = prior_scaling

    def __call__(self, items: Sequence[AlignerItem]) -> AlignerBatch:
        text_lengths = torch.tensor([len(item.text) for item in items], dtype=torch.long)
        mel_lengths = torch.tensor([item.mel.shape[1] for item in items], dtype=torch.long)
        n_mels = items[0].mel.shape[0]
        text = torch.zeros(len(items), int(text_lengths.max()), dtype=torch.long)
        mels = torch.zeros(len(items), n_mels, int(mel_lengths.max()), dtype=torch.float32)
        for index, item in enumerate(items):
            text[index, : len(item.text)] = item.text
            mels[index, :, : item.mel.shape[1]] = item.mel
        prior = batch_prior(mel_lengths, text_lengths, self.prior_scaling) if self.prior_scaling > 0 else None
        return AlignerBatch(
            ids=[item.id for item in items],
            text=text,
            text_lengths=text_lengths,
            mels=mels,
            mel_lengths=mel_lengths,
            prior=prior,
        )


class LengthBucketBatchSampler(Sampler[list[int]]):
    """Batches of similar length, reshuffled every epoch, reproducibly.

    The indices are shuffled with a generator seeded by ``(seed, epoch)``, cut into buckets of
    ``bucket_batches`` batches, sorted by length inside each bucket and cut into batches; the batch
    order is then shuffled. Without ``shuffle`` the batches are simply consecutive in length order.

    Args:
        lengths: Length of each item (e.g. mel frames).
        batch_size: Items per batch (the last batch may be smaller).
        seed: Base seed.
        shuffle: False for evaluation.
        bucket_batches: Batches per bucket; larger = less padding, less randomness.
    """

    def __init__(
        self, lengths: Sequence[int], batch_size: int, seed: int = 0, shuffle: bool = True, bucket_batches: int = 8
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size: expected >= 1, got {batch_size}")
        self.lengths = np.asarray(lengths)
        self.batch_size = batch_size
        self.seed = seed
        self.shuffle = shuffle
        self.bucket_batches = bucket_batches
        self.epoch = 1
        self.skip = 0

    def set_epoch(self, epoch: int, skip: int = 0) -> None:
        """Iterate the batches of ``epoch`` (from 1), leaving out its first ``skip`` (a resumed epoch)."""
        self.epoch = epoch
        self.skip = skip

    def __len__(self) -> int:
        return math.ceil(len(self.lengths) / self.batch_size)

    def batches(self, epoch: int) -> list[list[int]]:
        """The batches of ``epoch``, in order."""
        if not self.shuffle:
            order = np.argsort(self.lengths, kind="stable")
            return [order[i : i + self.batch_size].tolist() for i in range(0, len(order), self.batch_size)]
        rng = np.random.default_rng([self.seed, epoch])
        order = rng.permutation(len(self.lengths))
        bucket = self.batch_size * self.bucket_batches
        batches: list[list[int]] = []
        for start in range(0, len(order), bucket):
            chunk = order[start : start + bucket]
            chunk = chunk[np.argsort(self.lengths[chunk], kind="stable")]
            batches.extend(chunk[i : i + self.batch_size].tolist() for i in range(0, len(chunk), self.batch_size))
        return [batches[i] for i in rng.permutation(len(batches))]

    def __iter__(self) -> Iterator[list[int]]:
        return iter(self.batches(self.epoch)[self.skip :])
