"""Text front end: cleaners that turn raw text into its spoken form, and the symbol sets models use.

Typical use::

    cleaned = normalize_text(raw, "english_cleaners_v2")
    if unknown_characters(cleaned, "english_basic"):
        ...  # reject the utterance
    ids = text_to_sequence(cleaned, "english_basic")
    ids = encode(cleaned, "arpabet", "english_basic")  # CMUdict words as phones (text.arpabet)
"""

from __future__ import annotations

from tts_pipeline.errors import UserError
from tts_pipeline.text.cleaners import CLEANERS
from tts_pipeline.text.symbols import (
    get_symbols,
    sequence_to_text,
    symbol_to_id,
    text_to_sequence,
    unknown_characters,
)

__all__ = [
    "CLEANERS",
    "SYMBOL_KINDS",
    "encode",
    "get_symbols",
    "normalize_text",
    "sequence_to_text",
    "symbol_to_id",
    "text_to_sequence",
    "unknown_characters",
]


def normalize_text(text: str, cleaners: str = "english_cleaners_v2") -> str:
    """Clean raw text with the named cleaners; ``{...}`` ARPAbet chunks are kept as they are.

    english_cleaners_v2 leaves no digit outside braces. Raises UserError for an unknown name.
    """
    if cleaners not in CLEANERS:
        allowed = ", ".join(sorted(CLEANERS))
        raise UserError(f"text.cleaners: unknown cleaners {cleaners!r}; expected one of: {allowed}")
    return CLEANERS[cleaners](text)


# What a model's input symbols are: the cleaned text's characters, or CMUdict words as ARPAbet phones.
SYMBOL_KINDS = ("characters", "arpabet")


def encode(text: str, symbols: str, symbol_set: str) -> list[int]:
    """Cleaned text to symbol ids; deterministic.

    ``symbols`` is ``"characters"`` (one id per character, ``{...}`` chunks as phones) or
    ``"arpabet"`` (unambiguous CMUdict words become ARPAbet phones first, see
    :func:`tts_pipeline.text.arpabet.to_arpabet`). Raises UserError for an unknown kind or text the
    symbol set cannot represent.
    """
    if symbols == "arpabet":
        from tts_pipeline.text.arpabet import to_arpabet

        text = to_arpabet(text)
    elif symbols != "characters":
        raise UserError(f"aligner.symbols: unknown kind {symbols!r}; expected one of: {', '.join(SYMBOL_KINDS)}")
    return text_to_sequence(text, symbol_set)
