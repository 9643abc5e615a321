"""How a Tacotron 2 batch is built: symbol ids of the cleaned text and the features stage's log-mels,
padded, with the stop-gate targets.

Text is encoded exactly as the aligner path encodes it (:func:`tts_pipeline.text.encode` with the
``symbols`` kind and ``text.symbol_set``), so the attention's symbols are the ones FastPitch trains on.
Mels are ``<features_dir>/mels/<id>.npy`` float32 ``(n_mels, T)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from torch.utils.data import Dataset

from tts_pipeline.data.manifest_record import ManifestRecord
from tts_pipeline.models.mel_batch import MelBatchCounts
from tts_pipeline.models.tacotron2.loss import gate_targets
from tts_pipeline.models.text_mel_index import TextMelIndex


@dataclass(frozen=True)
class Tacotron2Item:
    """One utterance: ``text`` ``(L,)`` int64 symbol ids, ``mel`` ``(n_mels, T)`` float32."""

    id: str
    text: torch.Tensor
    mel: torch.Tensor


class Tacotron2Dataset(Dataset[Tacotron2Item]):
    """Manifest records paired with their mels, every record checked up front (all problems reported together).

    Args:
        records: Manifest records (``id``, ``text``).
        mels_dir: Folder of ``<id>.npy`` mels.
        n_mels: Expected mel channels.
        symbols: ``"characters"`` or ``"arpabet"`` (:func:`tts_pipeline.text.encode`).
        symbol_set: Symbol set name (``text.symbol_set``).
    """

    def __init__(
        self, records: Sequence[ManifestRecord], mels_dir: str | Path, n_mels: int, symbols: str, symbol_set: str
    ) -> None:
        self.index = TextMelIndex(
            records, mels_dir, n_mels, symbols, symbol_set, what="Tacotron 2 data", frame_per_symbol=False
        )
        self.mels_dir, self.ids = self.index.mels_dir, self.index.ids
        self.texts, self.mel_lengths = self.index.texts, self.index.mel_lengths

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, index: int) -> Tacotron2Item:
        utterance_id, text, mel = self.index.load(index)
        return Tacotron2Item(id=utterance_id, text=text, mel=mel)


@dataclass
class Tacotron2Batch(MelBatchCounts):
    """A padded batch.

    Attributes:
        ids: ``B`` utterance ids.
        text: ``(B, L)`` int64 symbol ids, 0-padded.
        text_lengths: ``(B,)`` int64.
        mels: ``(B, n_mels, T)`` float32, 0-padded.
        mel_lengths: ``(B,)`` int64.
        gates: ``(B, T)`` float32 stop targets (:func:`gate_targets`).
    """

    ids: list[str]
    text: torch.Tensor
    text_lengths: torch.Tensor
    mels: torch.Tensor
    mel_lengths: torch.Tensor
    gates: torch.Tensor

    def to(self, device: torch.device | str, non_blocking: bool = False) -> Tacotron2Batch:
        def move(tensor: torch.Tensor) -> torch.Tensor:
            return tensor.to(device, non_blocking=non_blocking)

        return Tacotron2Batch(self.ids, *(move(tensor) for tensor in self._tensors()))

    def pin_memory(self) -> Tacotron2Batch:
        """Called by the DataLoader with ``pin_memory=True``."""
        return Tacotron2Batch(self.ids, *(tensor.pin_memory() for tensor in self._tensors()))

    def _tensors(self) -> tuple[torch.Tensor, ...]:
        return (self.text, self.text_lengths, self.mels, self.mel_lengths, self.gates)


def collate(items: Sequence[Tacotron2Item], frames_per_step: int = 1) -> Tacotron2Batch:
    """Pad items into a :class:`Tacotron2Batch` (in the given order: the model needs no sorting), with
    the stop targets of a decoder making ``frames_per_step`` frames a step."""
    text_lengths = torch.tensor([len(item.text) for item in items], dtype=torch.long)
    mel_lengths = torch.tensor([item.mel.shape[1] for item in items], dtype=torch.long)
    text = torch.zeros(len(items), int(text_lengths.max()), dtype=torch.long)
    mels = torch.zeros(len(items), items[0].mel.shape[0], int(mel_lengths.max()), dtype=torch.float32)
    for index, item in enumerate(items):
        text[index, : len(item.text)] = item.text
        mels[index, :, : item.mel.shape[1]] = item.mel
    gates = gate_targets(mel_lengths, mels.shape[2], frames_per_step)
    return Tacotron2Batch([item.id for item in items], text, text_lengths, mels, mel_lengths, gates)
