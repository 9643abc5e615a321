"""What is wrong with an utterance of a corpus: a machine-readable :class:`Reason` and a human detail.

The manifest reports every problem it finds with the utterance id and the file; ``validation.json``
lists them (:meth:`Problem.as_dict`), and :func:`format_problems` groups them for an error message.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class Reason(StrEnum):
    """Why an utterance (or a metadata line) was rejected; the values appear in validation.json."""

    MALFORMED_LINE = "malformed_line"  # wrong number of pipe-separated fields
    INVALID_ID = "invalid_id"  # an id that cannot name a file (path separators, spaces, ...)
    NON_UTF8_TEXT = "non_utf8_text"
    DUPLICATE_ID = "duplicate_id"
    EMPTY_TEXT = "empty_text"
    UNKNOWN_CHARACTERS = "unknown_characters"  # outside the symbol set after cleaning
    MISSING_WAV = "missing_wav"  # metadata row without wavs/<id>.wav
    WAV_WITHOUT_METADATA = "wav_without_metadata"
    OUTSIDE_CORPUS = "outside_corpus"  # wavs/<id>.wav is a link to a file outside the corpus folder
    UNREADABLE_AUDIO = "unreadable_audio"
    EMPTY_AUDIO = "empty_audio"
    NON_FINITE_AUDIO = "non_finite_audio"  # NaN or infinite samples (float WAVs can hold them)
    WRONG_SAMPLE_RATE = "wrong_sample_rate"
    MULTICHANNEL = "multichannel"
    CLIPPED = "clipped"
    TOO_SHORT = "too_short"
    TOO_LONG = "too_long"


@dataclass(frozen=True)
class Problem:
    """One thing wrong with one utterance. ``id`` is None for a line whose id cannot be read."""

    id: str | None
    file: str
    reason: Reason
    detail: str

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "file": self.file, "reason": self.reason.value, "detail": self.detail}


def format_problems(problems: Iterable[Problem]) -> str:
    """Every problem, grouped by reason with a count: ``<id>  <file>  <detail>`` per line."""
    by_reason: dict[str, list[Problem]] = defaultdict(list)
    for problem in problems:
        by_reason[problem.reason.value].append(problem)
    lines = []
    for reason in sorted(by_reason):
        group = sorted(by_reason[reason], key=lambda p: (p.id or "", p.detail))
        lines.append(f"  {reason} ({len(group)}):")
        lines.extend(f"    {p.id or '<no id>'}  {p.file}  {p.detail}" for p in group)
    return "\n".join(lines)


def shorten(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
