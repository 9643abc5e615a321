"""An exported voice ready to speak: text in, float32 audio out, whole or streamed chunk by chunk.

::

    speaker = Speaker.load("results/demo/export")            # ONNX Runtime; engine="torch" for PyTorch
    audio = speaker.speak("Printing, in the only sense with which we are at present concerned.")
    for chunk in speaker.stream(long_text, speed=1.2):       # the first chunk after one short vocoder call
        ...

It does what ``synthesize`` does to one phrase, with either engine (:mod:`tts_pipeline.serving.engines`):
clean and encode the text as the voice was trained (the card's front end), refuse a phrase over
``max_phrase_symbols`` and split one over ``max_piece_symbols`` at sentence ends, commas, then spaces
(:mod:`tts_pipeline.inference.chunking`); per piece, the acoustic model at pace ``card pace x speed``,
the vocoder (in chunks, :mod:`tts_pipeline.serving.streaming`), the bias denoiser at the card's
strength and the fade-out of its last frames; pieces joined by ``pause_seconds`` of silence. The
audio keeps the voice's level (no peak normalisation: a stream cannot know its peak in advance).

The post-processing settings come from the card's ``synthesis`` section (the ``inference`` section the
voice was exported with); a card without one gets ``synthesize``'s defaults.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from tts_pipeline.errors import UserError
from tts_pipeline.export.voice_card import read_card
from tts_pipeline.inference.chunking import (
    MAX_PHRASE_SYMBOLS,
    MAX_PIECE_SYMBOLS,
    PIECE_PAUSE_SECONDS,
    check_phrase_length,
    split_text,
)
from tts_pipeline.inference.text import TextEncoder
from tts_pipeline.serving.denoise import NumpyDenoiser
from tts_pipeline.serving.engines import Engine, load_engine
from tts_pipeline.serving.streaming import ChunkPlan, vocode_chunks

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SpeechSettings:
    """The card's ``synthesis`` section: what happens around the models (``synthesize``'s meanings)."""

    denoising_strength: float = 0.0
    fade_out_frames: int = 10
    pause_seconds: float = PIECE_PAUSE_SECONDS
    max_piece_symbols: int = MAX_PIECE_SYMBOLS
    max_phrase_symbols: int = MAX_PHRASE_SYMBOLS

    @classmethod
    def from_card(cls, card: Mapping[str, Any]) -> SpeechSettings:
        section = card.get("synthesis") or {}
        known = {field.name for field in fields(cls)}
        return cls(**{key: value for key, value in section.items() if key in known})


class Speaker:
    """A voice card, an engine and the post-processing of ``synthesize`` (module docstring).

    Args:
        card: The voice card (``voice.json``).
        engine: The engine running the models.
        source: The card's path, for error messages.
        plan: How a piece's mel is cut for streaming.
    """

    def __init__(self, card: Mapping[str, Any], engine: Engine, source: str, plan: ChunkPlan | None = None) -> None:
        self.card = card
        self.engine = engine
        self.settings = SpeechSettings.from_card(card)
        self.plan = plan or ChunkPlan()
        audio = card["audio"]
        self.sampling_rate = int(audio["sampling_rate"])
        self.hop = int(audio["hop_length"])
        text = card["text"]
        self.text = TextEncoder(text["cleaners"], text["symbols_kind"], text["symbol_set"], source=source)
        self.pace = float(card["controls"]["pace"])
        self.denoiser = None
        if self.settings.denoising_strength > 0:
            self.denoiser = NumpyDenoiser.from_vocoder(
                engine.probe,
                int(audio["n_mel_channels"]),
                int(audio["filter_length"]),
                self.hop,
                int(audio["win_length"]),
            )

    @classmethod
    def load(cls, folder: str | Path, *, engine: str = "onnx", threads: int | None = None, amp: str = "off") -> Speaker:
        """The export folder ``folder`` with engine ``engine`` (``onnx`` or ``torch``; ``amp`` is the
        torch engine's precision). Errors name the card and the missing key or file."""
        folder = Path(folder)
        card = read_card(folder)
        speaker = cls(card, load_engine(folder, card, engine, threads, amp), str(folder / "voice.json"))
        log.info("speaker: voice %r from %s, %s engine, %d Hz", speaker.name, folder, engine, speaker.sampling_rate)
        return speaker

    @property
    def name(self) -> str:
        return str(self.card["name"])

    @property
    def engine_name(self) -> str:
        return self.engine.name

    def pieces(self, text: str) -> list[str]:
        """The cleaned pieces ``text`` is spoken in, in order (one when it is short enough).

        Raises UserError for text that is empty after cleaning, holds characters the voice has no
        symbol for, or is longer than ``max_phrase_symbols`` (the message names the limit)."""
        whole = self.text.encode(text)
        check_phrase_length(text, len(whole), self.settings.max_phrase_symbols)
        cleaned = self.text.clean(text)
        if len(whole) <= self.settings.max_piece_symbols:
            return [cleaned]
        measure = lambda piece: len(self.text.encode_cleaned(piece))  # noqa: E731
        return split_text(cleaned, self.settings.max_piece_symbols, measure)

    def stream(self, text: str, speed: float = 1.0) -> Iterator[np.ndarray]:
        """``text``'s audio as ``(samples,)`` float32 chunks in order; the text is checked (UserError)
        before any model runs. ``speed`` multiplies the card's pace (2 = twice as fast)."""
        if not speed > 0:
            raise UserError(f"speed: expected > 0, got {speed}")
        pieces = self.pieces(text)
        pause = np.zeros(round(self.settings.pause_seconds * self.sampling_rate / self.hop) * self.hop, np.float32)
        for index, piece in enumerate(pieces):
            if index > 0 and pause.size:
                yield pause
            mel = self.engine.mel(self.text.encode_cleaned(piece), self.pace * speed)
            yield from vocode_chunks(
                mel,
                self.engine.vocode,
                self.hop,
                self.plan,
                finish=self._denoise,
                fade_samples=self.settings.fade_out_frames * self.hop,
                from_start=bool(self.card["vocoder"].get("stream_from_start", False)),
            )

    def speak(self, text: str, speed: float = 1.0) -> np.ndarray:
        """``text``'s whole ``(samples,)`` float32 waveform (the chunks of :meth:`stream`, joined)."""
        chunks = list(self.stream(text, speed))
        return np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.float32)

    def _denoise(self, audio: np.ndarray) -> np.ndarray:
        if self.denoiser is None:
            return audio
        return self.denoiser(audio, self.settings.denoising_strength)
