"""The per-symbol files of one utterance, as both duration sources write them, and their counts.

For an utterance ``<id>`` with ``T`` mel frames and ``L`` symbols (see :mod:`.layout`):
``durations/<id>.npy`` int32 ``(L,)`` summing to ``T``, ``symbols/<id>.npy`` int32 ``(L,)`` and
``symbol_pitch/<id>.npy`` float32 ``(L,)`` Hz, each written atomically.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tts_pipeline.data.feature_layout import FeatureLayout
from tts_pipeline.errors import UserError
from tts_pipeline.features.durations import symbol_pitch
from tts_pipeline.files import save_npy


@dataclass(frozen=True)
class Utterance:
    """One manifest record, as the duration sources need it."""

    id: str
    split: str
    text: str


def read_utterances(manifest_dir: Path) -> list[Utterance]:
    """Every utterance of ``manifest.{train,val,test}.jsonl``, split by split."""
    from tts_pipeline.data.manifest import manifest_path, read_manifest
    from tts_pipeline.data.splits import SPLIT_NAMES

    return [
        Utterance(id=record.id, split=split, text=record.text)
        for split in SPLIT_NAMES
        for record in read_manifest(manifest_path(manifest_dir, split))
    ]


@dataclass
class SplitCounts:
    """What one split's durations hold: utterances, symbols, frames, zero durations, unknown labels."""

    n_utterances: int = 0
    n_symbols: int = 0
    n_frames: int = 0
    n_zero_durations: int = 0
    n_unknown_symbols: int = 0
    unknown_labels: Counter[str] = field(default_factory=Counter)

    def add(self, durations: np.ndarray, n_frames: int, unknown: list[str] | None = None) -> None:
        """Count one utterance's ``(L,)`` durations over ``n_frames`` and its unknown labels."""
        self.n_utterances += 1
        self.n_symbols += len(durations)
        self.n_frames += n_frames
        self.n_zero_durations += int((durations == 0).sum())
        self.n_unknown_symbols += len(unknown or ())
        self.unknown_labels.update(unknown or ())

    def as_dict(self) -> dict[str, Any]:
        return {
            "n_utterances": self.n_utterances,
            "n_symbols": self.n_symbols,
            "n_frames": self.n_frames,
            "n_zero_durations": self.n_zero_durations,
            "n_unknown_symbols": self.n_unknown_symbols,
            "unknown_labels": dict(sorted(self.unknown_labels.items())),
        }


def mel_frames(layout: FeatureLayout, utterance_id: str) -> int:
    """``T`` of the utterance's mel (read from the .npy header only)."""
    path = layout.mel(utterance_id)
    try:
        shape = np.load(path, mmap_mode="r").shape
    except (OSError, ValueError) as error:
        raise UserError(f"{utterance_id}: cannot read its mel {path} ({error}); run the features stage") from None
    if len(shape) != 2:
        raise UserError(f"{utterance_id}: mel {path} has shape {shape}, expected (n_mels, T)")
    return int(shape[1])


def write_symbol_files(
    layout: FeatureLayout, utterance_id: str, durations: np.ndarray, symbol_ids: np.ndarray, n_frames: int
) -> None:
    """Check the utterance's ``(L,)`` vectors, compute its per-symbol pitch, and write the three files."""
    if int(durations.sum()) != n_frames or durations.shape != symbol_ids.shape:
        raise AssertionError(f"{utterance_id}: durations sum {durations.sum()} != T {n_frames} or length mismatch")
    pitch_path = layout.pitch(utterance_id)
    try:
        pitch = np.load(pitch_path)
    except (OSError, ValueError) as error:
        raise UserError(
            f"{utterance_id}: cannot read its pitch {pitch_path} ({error}); run the features stage"
        ) from None
    if pitch.shape != (n_frames,):
        raise UserError(
            f"{utterance_id}: pitch {pitch_path} has shape {pitch.shape}, expected ({n_frames},) as its mel"
        )
    save_npy(layout.durations(utterance_id), durations.astype(np.int32))
    save_npy(layout.symbols(utterance_id), symbol_ids.astype(np.int32))
    save_npy(layout.symbol_pitch(utterance_id), symbol_pitch(pitch, durations))
