"""Long text in pieces FastPitch handles well, and a cap on the length of one phrase.

FastPitch attends over a whole utterance at once, so its memory grows with the square of the length:
a pasted page of 20,000 characters asks for tens of gigabytes. Its training sentences (LJSpeech) are
at most about 190 characters, and it speaks best near that length. So a phrase longer than
:data:`MAX_PIECE_SYMBOLS` symbols is split, in order, at sentence ends (``. ! ? ; :``), then at
commas, then at spaces, and never inside a word unless one word alone exceeds the limit; adjacent
short parts are packed back together up to the limit. The synthesizer speaks the pieces and joins
them with :data:`PIECE_PAUSE_SECONDS` of silence. A phrase over :data:`MAX_PHRASE_SYMBOLS` symbols is
refused before any model runs.

Lengths are counted in model symbols (after the text front end: cleaners, then characters or ARPAbet
phones), through the ``measure`` function the caller passes.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from tts_pipeline.errors import UserError

# Symbols per piece: LJSpeech's longest sentences are about 190 characters.
MAX_PIECE_SYMBOLS = 200
# Symbols per phrase: about five minutes of speech at LJSpeech's 15 characters per second.
MAX_PHRASE_SYMBOLS = 5000
# Silence between the pieces of one phrase.
PIECE_PAUSE_SECONDS = 0.2

# Where to split, most natural first: the whitespace after a sentence end (optionally followed by a
# closing quote or bracket), after a comma, then any whitespace outside {ARPAbet} braces.
SPLIT_PATTERNS = (
    re.compile(r"(?:(?<=[.!?;:])|(?<=[.!?;:][\"')\]]))\s+"),
    re.compile(r"(?<=,)\s+"),
    re.compile(r"\s+(?![^{]*\})"),
)

Measure = Callable[[str], int]


def split_text(text: str, limit: int = MAX_PIECE_SYMBOLS, measure: Measure = len) -> list[str]:
    """Split ``text`` into pieces of at most ``limit`` symbols (``measure(piece)``), in order.

    A text within the limit comes back whole (stripped). Otherwise it is split at the first level of
    :data:`SPLIT_PATTERNS` that splits it, each part is split further the same way, and adjacent
    parts are packed (joined by a space) while they fit. A single word over the limit is cut.
    """
    if limit < 1:
        raise ValueError(f"piece limit: expected >= 1 symbol, got {limit}")
    text = text.strip()
    if measure(text) <= limit:
        return [text] if text else []
    for pattern in SPLIT_PATTERNS:
        parts = [part for part in pattern.split(text) if part.strip()]
        if len(parts) > 1:
            return _pack([piece for part in parts for piece in split_text(part, limit, measure)], limit, measure)
    return _cut_word(text, limit, measure)


def check_phrase_length(text: str, n_symbols: int, limit: int = MAX_PHRASE_SYMBOLS) -> None:
    """Raise UserError quoting the start of ``text`` when its ``n_symbols`` exceed ``limit``."""
    if n_symbols > limit:
        start = text if len(text) <= 40 else text[:37] + "..."
        raise UserError(
            f"text {start!r} is {n_symbols} symbols long after the text front end, more than the limit of "
            f"{limit} symbols per phrase (about {limit / 15 / 60:.0f} minutes of speech); split it into "
            "several phrases"
        )


def _pack(pieces: list[str], limit: int, measure: Measure) -> list[str]:
    """Join adjacent pieces with a space while the result stays within ``limit``."""
    packed: list[str] = []
    for piece in pieces:
        if packed and measure(joined := f"{packed[-1]} {piece}") <= limit:
            packed[-1] = joined
        else:
            packed.append(piece)
    return packed


def _cut_word(word: str, limit: int, measure: Measure) -> list[str]:
    """Cut one over-long word into the longest prefixes that fit."""
    pieces, start = [], 0
    while start < len(word):
        end = start + 1
        while end < len(word) and measure(word[start : end + 1]) <= limit:
            end += 1
        pieces.append(word[start:end])
        start = end
    return pieces
