"""Per-symbol durations (from the aligner's attention or from TextGrids) and per-symbol pitch.

Durations are in mel frames of this project's framing (HiFi-GAN's): ``T = n_samples // hop`` frames,
frame ``t`` covering samples ``[hop*t, hop*(t+1))`` with its centre at ``hop*t + hop/2``. Every
duration vector sums exactly to ``T``.

- :func:`durations_from_attention`: MAS on the aligner's log attention (reference section 3.3).
- :func:`durations_from_intervals` / :func:`read_textgrid_durations`: an interval tier (MFA-style
  ``phones``), seconds to frames (see :func:`frame_boundaries`).
- :func:`symbol_pitch`: mean of the voiced frames inside each symbol's frames (reference section 3.5),
  by :func:`tts_pipeline.alignment.symbol_mean`, the average FastPitch's per-token energy uses too.
- :class:`SymbolTable`: the inventory of TextGrid phone labels, built from the training set.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from tts_pipeline.alignment import mas_durations, symbol_mean
from tts_pipeline.data.textgrid import Interval, read_textgrid
from tts_pipeline.errors import UserError

PAD_SYMBOL = "_"
# Every silence label of a TextGrid (MFA writes "" / sil / sp, and spn for spoken noise) becomes
# this one pause symbol.
PAUSE_SYMBOL = "sil"
# A phone label of a val/test TextGrid that the training TextGrids never show (see SymbolTable).
UNKNOWN_SYMBOL = "<unk>"
SILENCE_LABELS = frozenset({"", "sil", "sp", "spn"})


# --------------------------------------------------------------------------------------------------
# from the aligner
# --------------------------------------------------------------------------------------------------


def durations_from_attention(log_attn: np.ndarray) -> np.ndarray:
    """Hard durations from the aligner's log attention ``(T, L)`` by MAS: ``(L,)`` int32, sum ``T``.

    Raises :class:`tts_pipeline.alignment.AlignmentError` when ``T < L``.
    """
    return mas_durations(log_attn)


# --------------------------------------------------------------------------------------------------
# per-symbol pitch
# --------------------------------------------------------------------------------------------------


def symbol_pitch(pitch: np.ndarray, durations: np.ndarray) -> np.ndarray:
    """Mean pitch of the voiced frames (pitch > 0) inside each symbol's span; 0 when none is voiced.

    Args:
        pitch: ``(T,)`` frame pitch in Hz, 0 = unvoiced.
        durations: ``(L,)`` non-negative frames per symbol, summing to ``T``.

    Returns:
        ``(L,)`` float32 in Hz. A zero-length symbol gets 0.
    """
    pitch = np.asarray(pitch, dtype=np.float64)
    # A negative value is no pitch either (pitch trackers never emit one; the guard keeps the rule "> 0").
    return symbol_mean(np.where(pitch > 0, pitch, 0.0), durations, what="pitch frames")


# --------------------------------------------------------------------------------------------------
# from TextGrids
# --------------------------------------------------------------------------------------------------


def frame_boundaries(times: np.ndarray, n_frames: int, hop_length: int, sampling_rate: int) -> np.ndarray:
    """Interval boundaries in seconds ``(K + 1,)`` to frame boundaries ``(K + 1,)`` in ``[0, T]``.

    A frame belongs to the interval that contains its centre. With this project's (HiFi-GAN) framing
    frame ``t`` is centred at ``(t + 1/2) * hop`` samples, so a boundary at ``x = time * sr / hop``
    frames starts at frame ``ceil(x - 1/2)``: ``x`` rounded to the nearest integer (an exact half
    rounds down). NVIDIA's TextGrid rule, ``ceil(x)`` (reference section 3.9), is the same
    centre rule for TacotronSTFT's centred framing, whose frame ``t`` is centred at ``t * hop``;
    used with our framing it would make every boundary late by half a frame on average (on the demo
    corpus's val split: median word-boundary error 5.7 ms with ``ceil``, 2.1 ms with this rule; the
    floor is half a frame, 5.8 ms at most).

    The results are clamped to ``[0, T]``; the first is forced to 0 and the last to ``T`` (frames
    before the tier's start or after its end join the first or last interval), so the durations
    ``np.diff`` of the result sum exactly to ``T``. The reference adds a frame at the end because
    its mels have ``N // hop + 1`` frames; ours have ``N // hop``, which a tier ending at ``N / sr``
    reaches after rounding and clamping. Boundaries closer than a frame may round to the same
    frame: a zero-length interval.
    """
    times = np.asarray(times, dtype=np.float64)
    if times.ndim != 1 or times.size < 2:
        raise ValueError(f"expected at least two boundaries (K + 1,), got shape {times.shape}")
    frames = np.ceil(times * (sampling_rate / hop_length) - 0.5).astype(np.int64)
    frames = np.clip(frames, 0, n_frames)
    frames[0], frames[-1] = 0, n_frames
    return np.maximum.accumulate(frames)  # monotone even if the input times were not


@dataclass(frozen=True)
class TierDurations:
    """Symbols and frame durations read from one interval tier.

    Attributes:
        labels: ``L`` symbol labels, silences already mapped to :data:`PAUSE_SYMBOL`.
        durations: ``(L,)`` int32 frames per interval, summing to ``T``.
        intervals: the ``L`` tier intervals they come from (times in seconds).
    """

    labels: list[str]
    durations: np.ndarray
    intervals: list[Interval]

    @property
    def n_zero(self) -> int:
        """Intervals shorter than what the frame grid resolves (0 frames)."""
        return int((self.durations == 0).sum())


def symbol_label(label: str) -> str:
    """A tier label as a symbol: stripped; every silence label is the pause symbol."""
    label = label.strip()
    return PAUSE_SYMBOL if label.lower() in SILENCE_LABELS else label


def durations_from_intervals(
    intervals: Sequence[Interval], n_frames: int, hop_length: int, sampling_rate: int
) -> TierDurations:
    """Frame durations of a contiguous interval tier; one symbol per interval, sum ``T``."""
    if not intervals:
        raise ValueError("an interval tier without intervals")
    times = np.array([interval.start for interval in intervals] + [intervals[-1].end])
    bounds = frame_boundaries(times, n_frames, hop_length, sampling_rate)
    return TierDurations(
        labels=[symbol_label(interval.label) for interval in intervals],
        durations=np.diff(bounds).astype(np.int32),
        intervals=list(intervals),
    )


def read_textgrid_durations(
    path: str | Path, tier: str, n_frames: int, hop_length: int, sampling_rate: int
) -> TierDurations:
    """:func:`durations_from_intervals` on the tier ``tier`` of a TextGrid file.

    Raises UserError naming the file when it is unreadable, lacks the tier, or its tier is empty.
    """
    tiers = read_textgrid(path)
    if tier not in tiers:
        raise UserError(f"{path}: no tier named {tier!r} (durations.textgrid_tier); tiers: {sorted(tiers)}")
    intervals = tiers[tier]
    if not intervals:
        raise UserError(f"{path}: tier {tier!r} has no intervals")
    return durations_from_intervals(intervals, n_frames, hop_length, sampling_rate)


# --------------------------------------------------------------------------------------------------
# symbol inventory of TextGrid phones
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SymbolTable:
    """Symbols of TextGrid phones, in id order: pad (0), pause (1), unknown (2), then the labels
    seen in the training TextGrids, sorted.

    A val/test phone the training set never shows maps to :data:`UNKNOWN_SYMBOL` (counted and
    reported by the durations stage) instead of stopping the pipeline: small corpora miss rare
    phones, and the model can still be evaluated on the rest of the utterance.
    """

    symbols: tuple[str, ...]

    @classmethod
    def from_labels(cls, labels: Iterable[str]) -> SymbolTable:
        reserved = (PAD_SYMBOL, PAUSE_SYMBOL, UNKNOWN_SYMBOL)
        seen = sorted({symbol_label(label) for label in labels} - set(reserved))
        return cls(symbols=(*reserved, *seen))

    @cached_property
    def _index(self) -> dict[str, int]:
        # The pad is never a phone: a label "_" counts as unknown rather than as padding.
        return {symbol: i for i, symbol in enumerate(self.symbols) if symbol != PAD_SYMBOL}

    def ids(self, labels: Sequence[str]) -> tuple[np.ndarray, list[str]]:
        """``(L,)`` int32 ids of symbol labels, and the labels that were unknown (in order)."""
        index = self._index
        unknown_id = index[UNKNOWN_SYMBOL]
        unknown = [label for label in labels if label not in index]
        ids = np.array([index.get(label, unknown_id) for label in labels], dtype=np.int32)
        return ids, unknown
