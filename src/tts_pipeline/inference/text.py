"""Raw text to the symbol ids a FastPitch model was trained on.

Training symbols come from the ``durations`` stage: the manifest's cleaned text encoded as characters
or as CMUdict ARPAbet (``tts_pipeline.text.encode``), or the phone labels of TextGrids. Inference
must repeat exactly that: the same cleaners, the same kind of symbols, the same symbol set, and a
symbol table identical to the one the model's embedding was trained on. A model trained on TextGrid
phones has no text front end (its symbols came from an external aligner), so it cannot read text.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tts_pipeline.errors import UserError
from tts_pipeline.text import SYMBOL_KINDS, encode, get_symbols, normalize_text

if TYPE_CHECKING:
    from tts_pipeline.models.fastpitch.data import TextSettings


@dataclass(frozen=True)
class TextEncoder:
    """Cleans and encodes text the way a model's training symbols were made.

    Build it from a model file with :meth:`from_settings`, or directly for a known front end.

    Attributes:
        cleaners: Cleaner name (``text.cleaners`` at training time).
        symbols: ``"characters"`` or ``"arpabet"`` (``tts_pipeline.text.SYMBOL_KINDS``).
        symbol_set: Symbol-set name (``text.symbol_set``).
        source: The model file, for error messages.
    """

    cleaners: str
    symbols: str
    symbol_set: str
    source: str = "<model>"

    @classmethod
    def from_settings(cls, settings: TextSettings, source: str | Path) -> TextEncoder:
        """The encoder of a FastPitch model file's text settings; checks that they still hold.

        Raises UserError naming ``source`` when the symbols are TextGrid phones (no text front end),
        the kind is unknown, the cleaners or symbol set are missing or unknown, or the recorded symbol
        table differs from the symbol set as this version of the package defines it.
        """
        kind = settings.symbols_kind
        if kind == "textgrid":
            raise UserError(
                f"{source}: this FastPitch model was trained on TextGrid phone labels (durations.source "
                "'textgrid'), which new text cannot produce without an external aligner; it cannot synthesise "
                "raw text. Train it with durations.source 'aligner' to synthesise text, or vocode "
                "ground-truth mels with --mels"
            )
        if kind not in SYMBOL_KINDS:
            raise UserError(f"{source}: unknown symbols_kind {kind!r}; expected one of {list(SYMBOL_KINDS)}")
        if not settings.cleaners or not settings.symbol_set:
            raise UserError(f"{source}: the model file does not record its text cleaners and symbol set")
        table = get_symbols(settings.symbol_set)
        if list(settings.symbols) != table:
            raise UserError(
                f"{source}: its symbol table ({len(settings.symbols)} symbols) differs from symbol set "
                f"{settings.symbol_set!r} as this version defines it ({len(table)} symbols); the ids would not "
                "match its embedding"
            )
        normalize_text("", settings.cleaners)  # an unknown cleaner name fails here, before any synthesis
        return cls(cleaners=settings.cleaners, symbols=kind, symbol_set=settings.symbol_set, source=str(source))

    def clean(self, text: str) -> str:
        """The spoken form of ``text`` (numbers, abbreviations expanded; lower case)."""
        return normalize_text(text, self.cleaners)

    def encode(self, text: str) -> list[int]:
        """Raw text -> symbol ids (``1 <= id < n_symbols``; no padding).

        Raises UserError when nothing is left after cleaning or the cleaned text holds characters the
        symbol set cannot represent (NVIDIA drops them silently; here they are reported).
        """
        cleaned = self.clean(text)
        if not cleaned.strip():
            raise UserError(f"text {text[:60]!r} is empty after the {self.cleaners} cleaners")
        return self.encode_cleaned(cleaned)

    def encode_cleaned(self, cleaned: str) -> list[int]:
        """Already cleaned text (:meth:`clean`) -> symbol ids; for pieces of a cleaned text."""
        return encode(cleaned, self.symbols, self.symbol_set)
