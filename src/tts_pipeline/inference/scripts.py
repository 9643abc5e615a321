"""Which phrases the text front end transliterates: letters of another script than Latin, and bidi marks.

The models read the ASCII letters of the symbol set, so the cleaners turn every other script into ASCII
(unidecode: Arabic ``مرحبا`` becomes ``mrhb``, Chinese ``你好`` becomes ``ni hao``) and drop the invisible
bidirectional controls (U+200E, U+200F, U+202A-U+202E, U+2066-U+2069, U+061C). That is rarely what the
writer meant to hear, and nothing in the audio says it happened, so synthesis warns, naming each such
line (``file:line``), the script and what the model read instead. Accented Latin letters (``café``) lose
their accents quietly, as they always have: the word is still read as written.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BIDI_MARKS = frozenset("\u200e\u200f\u061c\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
"""The bidirectional formatting characters: marks, embeddings, overrides and isolates."""

# At most this many lines are named one by one; the rest are counted.
LISTED_LINES = 20


@dataclass(frozen=True)
class ScriptNote:
    """What transliteration does to one text.

    Attributes:
        scripts: The scripts of its letters other than Latin, in order of appearance (``("Arabic",)``).
        right_to_left: Whether any of them is written right to left.
        bidi_marks: How many bidirectional controls it holds.
    """

    scripts: tuple[str, ...]
    right_to_left: bool
    bidi_marks: int

    def describe(self) -> str:
        """``Arabic, right-to-left``, ``CJK``, ``2 bidi marks``, or a mix of them."""
        parts = [", ".join(self.scripts)] if self.scripts else []
        if self.right_to_left:
            parts.append("right-to-left")
        if self.bidi_marks:
            parts.append(f"{self.bidi_marks} bidi mark{'s' if self.bidi_marks > 1 else ''} dropped")
        return "; ".join(parts)


def _script(character: str) -> str | None:
    """The script of a non-Latin letter (the first word of its Unicode name), or None."""
    if not unicodedata.category(character).startswith("L"):
        return None
    name = unicodedata.name(character, "")
    if not name or "LATIN" in name:
        return None
    first = name.split(" ")[0]
    return first if first == "CJK" else first.capitalize()


def script_note(text: str) -> ScriptNote | None:
    """What transliteration does to ``text``, or None when it is ASCII or accented Latin only."""
    scripts: dict[str, None] = {}
    right_to_left, bidi_marks = False, 0
    for character in text:
        if character.isascii():
            continue
        if character in BIDI_MARKS:
            bidi_marks += 1
            continue
        script = _script(character)
        if script is None:
            continue
        scripts.setdefault(script)
        right_to_left = right_to_left or unicodedata.bidirectional(character) in ("R", "AL")
    if not scripts and not bidi_marks:
        return None
    return ScriptNote(tuple(scripts), right_to_left, bidi_marks)


def transliteration_warning(
    path: str | Path, phrases: Sequence[Any], reading: Callable[[str], str] | None = None
) -> str | None:
    """One warning naming every phrase (``file:line``) whose text was transliterated, or None.

    Args:
        path: The phrase file.
        phrases: Its phrases (:class:`tts_pipeline.inference.Phrase`: ``name``, ``text``, ``line``).
        reading: The text front end (``TextEncoder.clean``): each entry then quotes what the model read.
    """
    entries = []
    for phrase in phrases:
        note = script_note(phrase.text)
        if note is None:
            continue
        entry = f"{path}:{phrase.line} {phrase.name!r} ({note.describe()})"
        if reading is not None and note.scripts:
            entry += f" read as {_shorten(reading(phrase.text))!r}"
        entries.append(entry)
    if not entries:
        return None
    listed = entries[:LISTED_LINES]
    more = len(entries) - len(listed)
    return (
        f"{len(entries)} phrase{'s' if len(entries) > 1 else ''} of {path} hold text the model cannot read as "
        "written (it reads ASCII letters): other scripts were transliterated to ASCII and bidi marks dropped, "
        "which rarely sounds as meant: " + "; ".join(listed) + (f"; and {more} more lines" if more else "")
    )


def _shorten(text: str, limit: int = 50) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
