"""Manifest records paired with their mels for the models that read text and mel (the aligner,
Tacotron 2): every record checked once, up front, and every problem reported together."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from tts_pipeline.data.manifest_record import ManifestRecord
from tts_pipeline.errors import UserError


class TextMelIndex:
    """Ids, symbol ids and mel lengths of the usable records.

    Args:
        records: Manifest records (their ``id`` and ``text`` are used).
        mels_dir: Folder of ``<id>.npy`` mels, ``(n_mels, T)``.
        n_mels: Expected mel channels.
        symbols: ``"characters"`` or ``"arpabet"`` (:func:`tts_pipeline.text.encode`).
        symbol_set: Symbol set name (``text.symbol_set``).
        what: Names the data in the error (``"aligner data"``).
        frame_per_symbol: Also require at least one mel frame per symbol (a hard alignment needs it).

    Raises:
        UserError: listing every unusable record (missing mel, wrong channels, text without symbols, ...).
    """

    def __init__(
        self,
        records: Sequence[ManifestRecord],
        mels_dir: str | Path,
        n_mels: int,
        symbols: str,
        symbol_set: str,
        *,
        what: str,
        frame_per_symbol: bool = False,
    ) -> None:
        from tts_pipeline.text import encode

        self.mels_dir = Path(mels_dir)
        self.ids: list[str] = []
        self.texts: list[list[int]] = []
        self.mel_lengths: list[int] = []
        problems: list[str] = []
        for record in records:
            utterance_id = record.id
            path = self.mels_dir / f"{utterance_id}.npy"
            try:
                sequence = encode(record.text, symbols, symbol_set)
                shape = np.load(path, mmap_mode="r").shape
            except (UserError, OSError, ValueError) as error:
                problems.append(f"{utterance_id}: {error}")
                continue
            if len(shape) != 2 or shape[0] != n_mels or shape[1] < 1:
                problems.append(f"{utterance_id}: {path} has shape {shape}, expected ({n_mels}, T >= 1)")
            elif not sequence:
                problems.append(f"{utterance_id}: text {record.text!r} encodes to no symbols")
            elif frame_per_symbol and shape[1] < len(sequence):
                problems.append(
                    f"{utterance_id}: {shape[1]} mel frames for {len(sequence)} symbols (needs >= 1 frame each)"
                )
            else:
                self.ids.append(utterance_id)
                self.texts.append(sequence)
                self.mel_lengths.append(int(shape[1]))
        if problems:
            shown = "\n  ".join(problems[:20])
            more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
            raise UserError(f"{what} in {self.mels_dir}: {len(problems)} unusable utterances:\n  {shown}{more}")

    def __len__(self) -> int:
        return len(self.ids)

    def load(self, index: int) -> tuple[str, torch.Tensor, torch.Tensor]:
        """``(id, symbol ids (L,) int64, mel (n_mels, T) float32)`` of record ``index``."""
        mel = np.load(self.mels_dir / f"{self.ids[index]}.npy")
        text = torch.tensor(self.texts[index], dtype=torch.long)
        return self.ids[index], text, torch.from_numpy(np.ascontiguousarray(mel, dtype=np.float32))
