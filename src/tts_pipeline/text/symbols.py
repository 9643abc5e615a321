"""Symbol sets: the vocabulary a model is trained on, and the text <-> id conversions.

Cleaned text is a string of graphemes in which a ``{...}`` chunk holds ARPAbet phones separated by
spaces (``"say {HH AH0 L OW1}"``); each phone maps to the symbol ``@`` + phone. Unlike NVIDIA's
code, nothing is dropped silently: :func:`unknown_characters` reports what a set cannot represent,
and :func:`text_to_sequence` refuses it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache

from tts_pipeline.errors import UserError

_PAD = "_"
_PHONE_PREFIX = "@"

# CMUdict's 84 valid symbols: 15 vowels with no stress mark and stresses 0-2, then 24 consonants.
# Sorted as strings they fall in CMUdict's own order (AA AA0 AA1 AA2 AE ... ZH).
_VOWELS = "AA AE AH AO AW AY EH ER EY IH IY OW OY UH UW".split()
_CONSONANTS = "B CH D DH F G HH JH K L M N NG P R S SH T TH V W Y Z ZH".split()
ARPABET: tuple[str, ...] = tuple(
    sorted([v + stress for v in _VOWELS for stress in ("", "0", "1", "2")] + _CONSONANTS)
)

_ENGLISH_BASIC: tuple[str, ...] = (
    _PAD,
    "-",
    *"!'(),.:;? ",
    *"ABCDEFGHIJKLMNOPQRSTUVWXYZ",
    *"abcdefghijklmnopqrstuvwxyz",
    *(_PHONE_PREFIX + phone for phone in ARPABET),
)

_SYMBOL_SETS: dict[str, tuple[str, ...]] = {"english_basic": _ENGLISH_BASIC}

# A complete brace chunk; an unmatched brace is an ordinary (unknown) character.
_BRACES = re.compile(r"\{([^{}]*)\}")


def _check_name(name: str) -> tuple[str, ...]:
    """Return the named set, or raise a UserError listing the allowed names."""
    if name not in _SYMBOL_SETS:
        allowed = ", ".join(sorted(_SYMBOL_SETS))
        raise UserError(f"text.symbol_set: unknown symbol set {name!r}; expected one of: {allowed}")
    return _SYMBOL_SETS[name]


def get_symbols(name: str) -> list[str]:
    """The symbols of a set, in id order (id = list index); the pad symbol has id 0."""
    return list(_check_name(name))


@cache
def _ids(name: str) -> dict[str, int]:
    return {symbol: i for i, symbol in enumerate(_check_name(name))}


def symbol_to_id(name: str) -> dict[str, int]:
    """Map each symbol of the set to its id."""
    return dict(_ids(name))


@cache
def _graphemes(name: str) -> frozenset[str]:
    """Single characters that may appear in text; the pad is not one of them."""
    return frozenset(s for s in _check_name(name) if len(s) == 1 and s != _PAD)


def _split(text: str) -> list[tuple[bool, str]]:
    """Split text into (is_arpabet, chunk) pieces; an ARPAbet chunk is the inside of the braces."""
    pieces, start = [], 0
    for match in _BRACES.finditer(text):
        if match.start() > start:
            pieces.append((False, text[start:match.start()]))
        pieces.append((True, match[1]))
        start = match.end()
    if start < len(text):
        pieces.append((False, text[start:]))
    return pieces


def unknown_characters(text: str, symbol_set: str) -> list[str]:
    """Sorted, unique characters of cleaned text that the set cannot represent.

    The pad ``_`` and stray braces count as unknown. An ARPAbet phone the set lacks is reported
    in braces, e.g. ``"{XX1}"``.
    """
    graphemes, ids = _graphemes(symbol_set), _ids(symbol_set)
    unknown: set[str] = set()
    for is_arpabet, chunk in _split(text):
        if is_arpabet:
            unknown.update(f"{{{p}}}" for p in chunk.split() if _PHONE_PREFIX + p.upper() not in ids)
        else:
            unknown.update(c for c in chunk if c not in graphemes)
    return sorted(unknown)


def text_to_sequence(text: str, symbol_set: str) -> list[int]:
    """Convert cleaned text to symbol ids, one per grapheme and one per ARPAbet phone.

    Raises UserError when the text holds anything the set cannot represent (see
    :func:`unknown_characters`); normalise the text first.
    """
    unknown = unknown_characters(text, symbol_set)
    if unknown:
        raise UserError(
            f"text {text[:60]!r} has characters symbol set {symbol_set!r} cannot represent: {unknown}"
        )
    ids = _ids(symbol_set)
    sequence: list[int] = []
    for is_arpabet, chunk in _split(text):
        if is_arpabet:
            sequence.extend(ids[_PHONE_PREFIX + phone.upper()] for phone in chunk.split())
        else:
            sequence.extend(ids[c] for c in chunk)
    return sequence


def sequence_to_text(ids: Iterable[int], symbol_set: str) -> str:
    """Convert ids back to text; consecutive phones are grouped into one ``{...}`` chunk.

    The pad (id 0) reads as ``_``. Raises UserError for an id outside the set.
    """
    symbols = _check_name(symbol_set)
    out: list[str] = []
    phones: list[str] = []
    for i in ids:
        if not 0 <= i < len(symbols):
            raise UserError(f"symbol id {i} is outside symbol set {symbol_set!r} (0..{len(symbols) - 1})")
        symbol = symbols[i]
        if len(symbol) > 1 and symbol.startswith(_PHONE_PREFIX):
            phones.append(symbol[len(_PHONE_PREFIX):])
            continue
        if phones:
            out.append("{" + " ".join(phones) + "}")
            phones = []
        out.append(symbol)
    if phones:
        out.append("{" + " ".join(phones) + "}")
    return "".join(out)
