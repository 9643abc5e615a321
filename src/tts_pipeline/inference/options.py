"""How text becomes audio: :class:`SynthesisOptions`, the ``inference`` section minus device and precision."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from tts_pipeline.config.model_kinds import ACOUSTIC_MODELS, VOCODERS
from tts_pipeline.inference.chunking import MAX_PHRASE_SYMBOLS, MAX_PIECE_SYMBOLS, PIECE_PAUSE_SECONDS
from tts_pipeline.models.fastpitch import PitchTransform

if TYPE_CHECKING:
    from tts_pipeline.config import InferenceConfig

VocoderBatching = Literal["exact", "padded"]


@dataclass(frozen=True)
class SynthesisOptions:
    """How text becomes audio (the ``inference`` section, minus device and precision).

    Attributes:
        batch_size: Utterances per acoustic-model call.
        pace: Speaking rate (durations are divided by it).
        pitch_transform: Applied to the predicted pitch; None = unchanged.
        denoising_strength: Bias-spectrum subtraction strength; 0 = off.
        fade_out_frames: Frames of linear fade-out at the end of each utterance.
        normalize_peak: Scale each utterance to a peak of 1.
        vocoder_batching: ``"exact"`` (one vocoder call per utterance) or ``"padded"`` (one per batch).
        max_piece_symbols: Longer texts are split into pieces of at most this many symbols.
        max_phrase_symbols: Longer texts are refused (UserError) before any model runs.
        pause_seconds: Silence between the pieces of one text.
        vocoder_settings: The ``inference`` keys the vocoder kinds read when they load a file (each
            row's ``settings`` in :mod:`tts_pipeline.config.model_kinds`, e.g. ``waveglow_sigma``); a
            kind uses its own default for a key missing here.
        acoustic_settings: The same for the acoustic-model kinds (e.g. ``tacotron2_gate_threshold``).
    """

    batch_size: int = 8
    pace: float = 1.0
    pitch_transform: PitchTransform | None = None
    denoising_strength: float = 0.0
    fade_out_frames: int = 10
    normalize_peak: bool = False
    vocoder_batching: VocoderBatching = "exact"
    max_piece_symbols: int = MAX_PIECE_SYMBOLS
    max_phrase_symbols: int = MAX_PHRASE_SYMBOLS
    pause_seconds: float = PIECE_PAUSE_SECONDS
    vocoder_settings: Mapping[str, Any] = field(default_factory=dict)
    acoustic_settings: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.batch_size < 1:
            raise ValueError(f"batch_size: expected >= 1, got {self.batch_size}")
        if self.pace <= 0:
            raise ValueError(f"pace: expected > 0, got {self.pace}")
        if self.denoising_strength < 0 or self.fade_out_frames < 0:
            raise ValueError("denoising_strength and fade_out_frames: expected >= 0")
        if self.vocoder_batching not in ("exact", "padded"):
            raise ValueError(f"vocoder_batching: expected 'exact' or 'padded', got {self.vocoder_batching!r}")
        if not 1 <= self.max_piece_symbols <= self.max_phrase_symbols:
            raise ValueError("max_piece_symbols, max_phrase_symbols: expected 1 <= piece <= phrase")
        if self.pause_seconds < 0:
            raise ValueError(f"pause_seconds: expected >= 0, got {self.pause_seconds}")

    @classmethod
    def from_config(cls, cfg: InferenceConfig, vocoder_batching: VocoderBatching = "exact") -> SynthesisOptions:
        """The options of an ``inference`` section (with the settings of every kind: the benchmark loads
        the others beside the ones synthesis uses)."""
        transform = PitchTransform(
            flatten=cfg.pitch_flatten, invert=cfg.pitch_invert, amplify=cfg.pitch_amplify, shift_hz=cfg.pitch_shift_hz
        )
        return cls(
            batch_size=cfg.batch_size,
            pace=cfg.pace,
            pitch_transform=None if transform.is_identity else transform,
            denoising_strength=cfg.denoising_strength,
            fade_out_frames=cfg.fade_out_frames,
            normalize_peak=cfg.normalize_peak,
            vocoder_batching=vocoder_batching,
            vocoder_settings={key: getattr(cfg, key) for kind in VOCODERS for key in kind.settings},
            acoustic_settings={key: getattr(cfg, key) for kind in ACOUSTIC_MODELS for key in kind.settings},
        )

    def speaking_as(self, speaker: str | None) -> SynthesisOptions:
        """These options with ``speaker`` as the acoustic model's voice: its ``speaker`` setting
        (``inference.speaker``), which a multi-speaker FastPitch is loaded with
        (:func:`tts_pipeline.inference.fastpitch_acoustic.load`); None = speaker 0."""
        return dataclasses.replace(self, acoustic_settings={**self.acoustic_settings, "speaker": speaker})
