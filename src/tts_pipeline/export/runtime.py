"""An exported voice run with ONNX Runtime and numpy alone (no torch): the reference a server reuses,
and what the export's own check runs the ONNX files with.

::

    voice = OnnxVoice.load("results/demo/export")
    audio = voice.speak("Printing, in the only sense with which we are at present concerned.")
    # float32 waveform at voice.sampling_rate, in [-1, 1]

The voice card (``voice.json``) names the files and the text front end; :meth:`OnnxVoice.symbols` cleans
and encodes text with this package's front end (pure Python). Long texts are one piece here: a server
splits them first (``tts_pipeline.inference.chunking`` does it for synthesis).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from tts_pipeline.errors import UserError
from tts_pipeline.export.voice_card import read_card


class OnnxModel:
    """One ONNX file in an ONNX Runtime session.

    Args:
        path: The ``.onnx`` file.
        threads: Intra-op threads (None: ONNX Runtime's default, every core).
        providers: Execution providers, best first (default: the CPU's).
    """

    def __init__(self, path: str | Path, *, threads: int | None = None, providers: list[str] | None = None) -> None:
        import onnxruntime

        options = onnxruntime.SessionOptions()
        if threads is not None:
            options.intra_op_num_threads = threads
        try:
            self.session = onnxruntime.InferenceSession(
                str(path), options, providers=providers or ["CPUExecutionProvider"]
            )
        except Exception as error:  # onnxruntime raises its own exception types
            raise UserError(f"{path}: ONNX Runtime cannot load it ({error})") from None
        self.path = Path(path)
        self.input_names = [node.name for node in self.session.get_inputs()]
        self.output_names = [node.name for node in self.session.get_outputs()]

    def __call__(self, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """Inputs in the file's order -> outputs in the file's order."""
        if len(inputs) != len(self.input_names):
            raise ValueError(f"{self.path.name}: expected inputs {self.input_names}, got {len(inputs)}")
        return tuple(self.session.run(self.output_names, dict(zip(self.input_names, inputs, strict=True))))


class OnnxVoice:
    """An export folder: its voice card and the ONNX files of its acoustic model and vocoder.

    Attributes:
        card: ``voice.json`` as read (:func:`tts_pipeline.export.voice_card.read_card`).
        acoustic: Symbols and controls -> ``(mel, mel_lengths, durations)``.
        vocoder: ``(B, n_mels, T)`` log-mel -> ``(B, 1, T * hop)`` audio.
    """

    def __init__(self, card: Mapping[str, Any], acoustic: OnnxModel, vocoder: OnnxModel) -> None:
        self.card = card
        self.acoustic = acoustic
        self.vocoder = vocoder

    @classmethod
    def load(cls, folder: str | Path, *, threads: int | None = None) -> OnnxVoice:
        """Read ``folder/voice.json`` and open the ONNX files it names (errors name the file)."""
        folder = Path(folder)
        card = read_card(folder)
        files = []
        for role in ("acoustic_model", "vocoder"):
            name = card[role]["files"].get("onnx")
            if not name or not (folder / name).is_file():
                raise UserError(f"{folder / 'voice.json'}: {role}.files.onnx: no ONNX file ({name or 'not exported'})")
            files.append(folder / name)
        return cls(card, OnnxModel(files[0], threads=threads), OnnxModel(files[1], threads=threads))

    @property
    def sampling_rate(self) -> int:
        return int(self.card["audio"]["sampling_rate"])

    @property
    def hop_length(self) -> int:
        return int(self.card["audio"]["hop_length"])

    def symbols(self, text: str) -> list[int]:
        """Raw text -> symbol ids, cleaned and encoded as the voice was trained (UserError when nothing
        is left or a character has no symbol)."""
        from tts_pipeline.text import encode, normalize_text

        front = self.card["text"]
        cleaned = normalize_text(text, front["cleaners"])
        if not cleaned.strip():
            raise UserError(f"text {text[:60]!r} is empty after the {front['cleaners']} cleaners")
        return encode(cleaned, front["symbols_kind"], front["symbol_set"])

    def mels(
        self, tokens: np.ndarray, token_lengths: np.ndarray, controls: tuple[np.ndarray, ...] | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(B, N)`` int64 symbols, ``(B,)`` lengths and the ``(B,)`` float32 controls (pace, pitch shift,
        pitch scale; default: the card's) -> mel ``(B, n_mels, T)``, mel lengths, durations ``(B, N)``."""
        if controls is None:
            defaults = self.card["controls"]
            controls = tuple(
                np.full(len(tokens), defaults[name], dtype=np.float32)
                for name in ("pace", "pitch_shift_hz", "pitch_scale")
            )
        if float(np.min(controls[0])) <= 0:
            raise UserError(f"pace: expected > 0, got {controls[0].tolist()}")
        mel, mel_lengths, durations = self.acoustic(tokens.astype(np.int64), token_lengths.astype(np.int64), *controls)
        return mel, mel_lengths, durations

    def audio(self, mel: np.ndarray) -> np.ndarray:
        """``(B, n_mels, T)`` float32 log-mel -> ``(B, 1, T * hop)`` audio."""
        return self.vocoder(mel.astype(np.float32))[0]

    def speak(self, text: str) -> np.ndarray:
        """One text -> its ``(samples,)`` float32 waveform with the card's controls (no denoiser or fade)."""
        symbols = np.array([self.symbols(text)], dtype=np.int64)
        mel, mel_lengths, _ = self.mels(symbols, np.array([symbols.shape[1]], dtype=np.int64))
        frames = int(mel_lengths[0])
        return self.audio(mel[:, :, :frames])[0, 0, : frames * self.hop_length]
