"""Text front end: cleaners that turn raw text into its spoken form, and the symbol sets models use.

Typical use::

    cleaned = normalize_text(raw, "english_cleaners_v2")
    if unknown_characters(cleaned, "english_basic"):
        ...  # reject the utterance
    ids = text_to_sequence(cleaned, "english_basic")
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
