"""How good are the durations? Word boundaries they imply against ground-truth word timings.

For each utterance, the per-symbol durations give every symbol a frame span; a word's predicted
start is the first frame boundary of its first symbol and its end the last boundary of its last
symbol, in seconds ``frame * hop / sr`` (frame ``t`` covers samples ``[hop*t, hop*(t+1))``). Each is
compared with the start and end of the same word in a ground-truth ``words`` tier (the demo corpus
writes eSpeak's own timings to ``<corpus root>/alignments/<id>.TextGrid``).

Which symbols form a word depends on where the symbols came from:

- characters (aligner): a word is a run of letters, joined across a single ``'`` or ``-`` between
  letters (``don't``, ``well-known``: eSpeak and most aligners write such words as one). Spaces and
  punctuation belong to no word; their frames are the gaps between words.
- ARPAbet (aligner): the same rule with every ``@`` phone symbol counting as a letter, so a
  ``{...}`` chunk is one word, and so is a word left as graphemes; ``{...}-{...}`` is one word.
- TextGrid phones: a phone belongs to the word of the source TextGrid's ``words`` tier that
  contains its midpoint; silent words (empty, sil, sp, spn) are not words.

When the number of predicted words differs from the number of ground-truth words, the utterance
is skipped and counted (with the reason), never guessed at. Statistics are measured percentiles
(``numpy.percentile``) over all word boundaries of a split.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from tts_pipeline.data.feature_layout import FeatureLayout
from tts_pipeline.data.textgrid import Interval, read_textgrid
from tts_pipeline.errors import UserError
from tts_pipeline.features.durations import SILENCE_LABELS

WORDS_TIER = "words"
_WORD_CLASSES = re.compile(r"a+(?:['-]a+)*")


# --------------------------------------------------------------------------------------------------
# which symbols make a word
# --------------------------------------------------------------------------------------------------


def _symbol_class(symbol: str) -> str:
    if (len(symbol) == 1 and symbol.isalpha()) or (len(symbol) > 1 and symbol.startswith("@")):
        return "a"
    return symbol if symbol in ("'", "-") else " "


def word_spans_from_symbols(
    symbols: Sequence[str], *, space_joins_next_word: bool = False
) -> list[tuple[int, int]]:
    """Words of a character or ARPAbet symbol sequence as ``(first, stop)`` symbol indices.

    Args:
        symbols: ``L`` symbol strings in the symbol set's spelling (``"a"``, ``" "``, ``"@AH0"``).
        space_joins_next_word: Count a lone space between two words as the start of the second.
            In connected speech two words meet at one instant, but the space symbol must take at
            least one frame; ground truth that puts a stop's closure inside the word (eSpeak's
            timings do) matches this convention. A space after punctuation stays outside.

    Returns:
        One ``(first, stop)`` per word, in order; symbols ``first .. stop - 1`` belong to it.
    """
    classes = "".join(_symbol_class(symbol) for symbol in symbols)
    spans = [(match.start(), match.end()) for match in _WORD_CLASSES.finditer(classes)]
    if space_joins_next_word:
        def joins(first: int) -> bool:
            return first >= 2 and symbols[first - 1] == " " and classes[first - 2] == "a"

        spans = [(first - 1, stop) if joins(first) else (first, stop) for first, stop in spans]
    return spans


def is_silence(label: str) -> bool:
    return label.strip().lower() in SILENCE_LABELS


def word_spans_from_tiers(phones: Sequence[Interval], words: Sequence[Interval]) -> list[tuple[int, int]]:
    """Words of a phone tier as ``(first, stop)`` phone indices, from a words tier of the same file.

    A phone belongs to the non-silent word that contains its midpoint; a word without phones is
    left out (the word counts then differ and the utterance is skipped).
    """
    spoken = [word for word in words if not is_silence(word.label)]
    if not spoken or not phones:
        return []
    starts = np.array([word.start for word in spoken])
    ends = np.array([word.end for word in spoken])
    midpoints = np.array([(phone.start + phone.end) / 2 for phone in phones])
    owner = np.searchsorted(starts, midpoints, side="right") - 1
    inside = (owner >= 0) & (midpoints < ends[np.clip(owner, 0, None)])
    owner = np.where(inside, owner, -1)
    spans: list[tuple[int, int]] = []
    for word_index in np.unique(owner[owner >= 0]):
        members = np.flatnonzero(owner == word_index)
        spans.append((int(members[0]), int(members[-1]) + 1))
    return spans


# --------------------------------------------------------------------------------------------------
# times and errors
# --------------------------------------------------------------------------------------------------


def predicted_word_times(
    durations: np.ndarray, spans: Sequence[tuple[int, int]], hop_length: int, sampling_rate: int
) -> np.ndarray:
    """Start and end of each word in seconds from per-symbol frame durations.

    Args:
        durations: ``(L,)`` frames per symbol.
        spans: ``W`` ``(first, stop)`` symbol index ranges.

    Returns:
        ``(W, 2)`` float64: ``[start, end]`` per word.
    """
    bounds = np.concatenate(([0], np.cumsum(np.asarray(durations, dtype=np.int64))))
    if not spans:
        return np.zeros((0, 2))
    index = np.asarray(spans, dtype=np.int64)
    if index.min() < 0 or index.max() > len(durations):
        raise ValueError(f"word spans {index.min()}..{index.max()} leave the {len(durations)} symbols")
    return bounds[index].astype(np.float64) * (hop_length / sampling_rate)


def truth_word_times(words: Sequence[Interval]) -> np.ndarray:
    """``(W, 2)`` start and end (seconds) of the non-silent intervals of a words tier."""
    spoken = [(word.start, word.end) for word in words if not is_silence(word.label)]
    return np.array(spoken, dtype=np.float64).reshape(-1, 2)


@dataclass(frozen=True)
class UtteranceErrors:
    """Absolute word-boundary errors of one utterance, seconds: ``starts`` and ``ends`` ``(W,)``."""

    id: str
    starts: np.ndarray
    ends: np.ndarray

    @property
    def n_words(self) -> int:
        return int(self.starts.size)

    @property
    def mean(self) -> float:
        return float(np.concatenate([self.starts, self.ends]).mean()) if self.n_words else 0.0


def word_errors(utterance_id: str, predicted: np.ndarray, truth: np.ndarray) -> UtteranceErrors:
    """|predicted - truth| of word starts and ends; both ``(W, 2)`` with the same ``W``."""
    if predicted.shape != truth.shape:
        raise ValueError(f"{utterance_id}: {len(predicted)} predicted words but {len(truth)} in the truth")
    error = np.abs(predicted - truth)
    return UtteranceErrors(utterance_id, starts=error[:, 0], ends=error[:, 1])


def _stats_ms(seconds: np.ndarray) -> dict[str, float] | None:
    if seconds.size == 0:
        return None
    ms = seconds * 1000.0
    median, p90 = np.percentile(ms, [50, 90])
    return {
        "median": round(float(median), 3),
        "mean": round(float(ms.mean()), 3),
        "p90": round(float(p90), 3),
        "max": round(float(ms.max()), 3),
    }


@dataclass
class SplitReport:
    """Word-boundary errors over a split, and the utterances that could not be compared."""

    split: str
    utterances: list[UtteranceErrors] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)

    def skip(self, utterance_id: str, reason: str) -> None:
        self.skipped.append({"id": utterance_id, "reason": reason})

    def summary(self) -> dict[str, Any]:
        """JSON-ready figures in milliseconds: pooled over every word start and end of the split."""
        empty = np.zeros(0)
        starts = np.concatenate([u.starts for u in self.utterances]) if self.utterances else empty
        ends = np.concatenate([u.ends for u in self.utterances]) if self.utterances else empty
        return {
            "split": self.split,
            "n_utterances": len(self.utterances) + len(self.skipped),
            "n_evaluated": len(self.utterances),
            "n_skipped": len(self.skipped),
            "n_words": int(starts.size),
            "boundary_error_ms": _stats_ms(np.concatenate([starts, ends])),
            "start_error_ms": _stats_ms(starts),
            "end_error_ms": _stats_ms(ends),
            "utterance_mean_error_ms": _stats_ms(np.array([u.mean for u in self.utterances])),
            "skipped": self.skipped,
            "per_utterance": [
                {"id": u.id, "n_words": u.n_words, "mean_error_ms": round(u.mean * 1000.0, 3)} for u in self.utterances
            ],
        }


def format_summary(summary: dict[str, Any]) -> str:
    """A small plain-text table of :meth:`SplitReport.summary`."""
    lines = [
        f"alignment error on {summary['split']}: {summary['n_evaluated']} of {summary['n_utterances']} utterances"
        f" ({summary['n_skipped']} skipped), {summary['n_words']} words",
        f"{'boundaries':<12}{'median':>9}{'mean':>9}{'p90':>9}{'max':>9}   (ms)",
    ]
    for name, key in (("starts", "start_error_ms"), ("ends", "end_error_ms"), ("all", "boundary_error_ms")):
        stats = summary[key]
        if stats is None:
            lines.append(f"{name:<12}{'-':>9}{'-':>9}{'-':>9}{'-':>9}")
        else:
            lines.append(
                f"{name:<12}{stats['median']:>9.2f}{stats['mean']:>9.2f}{stats['p90']:>9.2f}{stats['max']:>9.2f}"
            )
    for skipped in summary["skipped"][:10]:
        lines.append(f"skipped {skipped['id']}: {skipped['reason']}")
    if summary["boundary_error_ms"] is not None:
        lines.append(f"median word-boundary error: {summary['boundary_error_ms']['median']:.2f} ms")
    joined = summary.get("space_joins_next_word")
    if joined and joined.get("boundary_error_ms"):
        lines.append(
            f"median with a lone space counted in the following word: {joined['boundary_error_ms']['median']:.2f} ms"
            f" (starts {joined['start_error_ms']['median']:.2f}, ends {joined['end_error_ms']['median']:.2f})"
        )
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------------
# a split, from the files the durations stage wrote
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DurationSource:
    """What :func:`evaluate_split` needs to know about how durations were made.

    Attributes:
        source: ``"aligner"`` or ``"tacotron2"`` (word spans from the symbols) or ``"textgrid"`` (from the source
            TextGrid's phones and words tiers).
        symbols: The symbol table, in id order.
        hop_length, sampling_rate: The frame grid.
        textgrid_dir: Source TextGrids (``"textgrid"`` only).
        textgrid_tier: The phones tier the durations came from (``"textgrid"`` only).
    """

    source: str
    symbols: Sequence[str]
    hop_length: int
    sampling_rate: int
    textgrid_dir: Path | None = None
    textgrid_tier: str = "phones"
    space_joins_next_word: bool = False


class _Incomparable(Exception):
    """An utterance that cannot be compared; the message is the reason recorded in the report."""


def _word_spans(utterance_id: str, symbol_ids: np.ndarray, how: DurationSource) -> list[tuple[int, int]]:
    if how.source == "textgrid":
        assert how.textgrid_dir is not None
        path = how.textgrid_dir / f"{utterance_id}.TextGrid"
        tiers = read_textgrid(path)
        if WORDS_TIER not in tiers or how.textgrid_tier not in tiers:
            raise _Incomparable(f"{path} lacks a {WORDS_TIER!r} or {how.textgrid_tier!r} tier")
        phones = tiers[how.textgrid_tier]
        if len(phones) != len(symbol_ids):
            raise UserError(f"{utterance_id}: {len(symbol_ids)} symbols but {len(phones)} phones in {path}")
        return word_spans_from_tiers(phones, tiers[WORDS_TIER])
    if symbol_ids.size and (symbol_ids.min() < 0 or symbol_ids.max() >= len(how.symbols)):
        raise UserError(f"{utterance_id}: symbol ids outside the table of {len(how.symbols)} symbols")
    return word_spans_from_symbols(
        [how.symbols[i] for i in symbol_ids], space_joins_next_word=how.space_joins_next_word
    )


def evaluate_utterance(
    utterance_id: str,
    durations: np.ndarray,
    symbol_ids: np.ndarray,
    truth_path: Path,
    how: DurationSource,
    report: SplitReport,
) -> None:
    """Compare one utterance with its ground truth; add it to ``report`` (or record why not)."""
    if not truth_path.is_file():
        report.skip(utterance_id, f"no ground-truth TextGrid {truth_path}")
        return
    truth_tiers = read_textgrid(truth_path)
    if WORDS_TIER not in truth_tiers:
        report.skip(utterance_id, f"{truth_path} has no {WORDS_TIER!r} tier")
        return
    truth = truth_word_times(truth_tiers[WORDS_TIER])
    try:
        spans = _word_spans(utterance_id, symbol_ids, how)
    except _Incomparable as reason:
        report.skip(utterance_id, str(reason))
        return
    if len(spans) != len(truth):
        report.skip(utterance_id, f"{len(spans)} predicted words, {len(truth)} ground-truth words")
        return
    predicted = predicted_word_times(durations, spans, how.hop_length, how.sampling_rate)
    report.utterances.append(word_errors(utterance_id, predicted, truth))


def evaluate_split(
    split: str, ids: Sequence[str], layout: FeatureLayout, truth_dir: Path, how: DurationSource
) -> SplitReport:
    """Word-boundary errors of every utterance of a split, from the features folder's files.

    Args:
        ids: Utterance ids of the split.
        layout: The features folder: ``durations/<id>.npy`` int ``(L,)`` frame durations and
            ``symbols/<id>.npy`` int ``(L,)`` symbol ids.
        truth_dir: ``<id>.TextGrid`` ground truth with a ``words`` tier.
    """
    report = SplitReport(split)
    for utterance_id in ids:
        durations = np.load(layout.durations(utterance_id))
        symbol_ids = np.load(layout.symbols(utterance_id))
        if durations.shape != symbol_ids.shape:
            raise UserError(
                f"{utterance_id}: durations {durations.shape} and symbols {symbol_ids.shape} differ in length"
            )
        evaluate_utterance(utterance_id, durations, symbol_ids, truth_dir / f"{utterance_id}.TextGrid", how, report)
    return report


def alignment_quality(
    index: dict[str, Any], ids: Sequence[str], layout: FeatureLayout, truth_dir: Path, split: str = "val"
) -> dict[str, Any]:
    """Summary of the word-boundary errors of one split's ``ids`` against ``truth_dir``.

    ``index`` is the durations stage's ``durations.json`` (source, symbol table, frame grid). For
    durations from symbols, the summary also holds the errors under the other word convention
    (``space_joins_next_word``; see :func:`word_spans_from_symbols`).
    """
    how = DurationSource(
        source=index["source"],
        symbols=index["symbols"],
        hop_length=index["hop_length"],
        sampling_rate=index["sampling_rate"],
        textgrid_dir=Path(index["textgrid_dir"]) if index.get("textgrid_dir") else None,
        textgrid_tier=index.get("textgrid_tier") or "phones",
    )
    report = evaluate_split(split, ids, layout, truth_dir, how)
    summary: dict[str, Any] = {"truth_dir": str(truth_dir), **report.summary()}
    if how.source != "textgrid":
        joined = evaluate_split(split, ids, layout, truth_dir, replace(how, space_joins_next_word=True))
        keys = ("n_words", "boundary_error_ms", "start_error_ms", "end_error_ms")
        summary["space_joins_next_word"] = {key: value for key, value in joined.summary().items() if key in keys}
    return summary
