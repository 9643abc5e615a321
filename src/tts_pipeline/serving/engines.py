"""The two engines that run an exported voice's models: ONNX Runtime (the ``.onnx`` files, numpy
only) and the project's PyTorch path (the ``.pt`` files through :class:`tts_pipeline.inference.Synthesizer`'s
loaders and its prepared runners: fused vocoder copies, the precision of ``amp``).

Both take the same thing and give the same thing, so :class:`tts_pipeline.serving.speaker.Speaker`
does the text, the chunking, the denoiser and the fade once for either:

- :meth:`Engine.mel`: one piece's symbol ids and a pace -> its log-mel ``(n_mels, T)`` float32
  (cropped to its length), with the voice card's pitch controls;
- :meth:`Engine.vocode`: ``(n_mels, T)`` -> ``(T * hop,)`` float32 audio, nothing else;
- :attr:`Engine.probe`: what the denoiser measures the vocoder's bias with (the fp32 vocoder).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from tts_pipeline.errors import UserError

ENGINES = ("onnx", "torch")
# the card's file format each engine reads
ENGINE_FORMATS = {"onnx": "onnx", "torch": "pytorch"}


class Engine(Protocol):
    name: str

    def mel(self, symbols: Sequence[int], pace: float) -> np.ndarray: ...

    def vocode(self, mel: np.ndarray) -> np.ndarray: ...

    def probe(self, mel: np.ndarray) -> np.ndarray: ...


def model_files(folder: Path, card: Mapping[str, Any], engine: str) -> tuple[Path, Path]:
    """The acoustic model's and the vocoder's files of ``engine`` in ``folder`` (UserError naming the
    card key when the export has none)."""
    if engine not in ENGINES:
        raise UserError(f"engine: expected one of {', '.join(ENGINES)}, got {engine!r}")
    fmt = ENGINE_FORMATS[engine]
    paths = []
    for role in ("acoustic_model", "vocoder"):
        name = card[role]["files"].get(fmt)
        if not name or not (folder / name).is_file():
            raise UserError(
                f"{folder / 'voice.json'}: {role}.files.{fmt}: no {fmt} file ({name or 'not exported'}) for the "
                f"{engine} engine"
            )
        paths.append(folder / name)
    return paths[0], paths[1]


def available_engines(folder: Path, card: Mapping[str, Any]) -> list[str]:
    """The engines whose files the export folder holds."""
    return [
        engine
        for engine, fmt in ENGINE_FORMATS.items()
        if all((folder / str(card[role]["files"].get(fmt, ""))).is_file() for role in ("acoustic_model", "vocoder"))
    ]


def _controls(card: Mapping[str, Any]) -> tuple[float, float, float]:
    controls = card["controls"]
    return float(controls["pace"]), float(controls["pitch_shift_hz"]), float(controls["pitch_scale"])


class OnnxEngine:
    """The ONNX files in ONNX Runtime sessions (:class:`tts_pipeline.export.runtime.OnnxVoice`)."""

    name = "onnx"

    def __init__(self, folder: Path, card: Mapping[str, Any], threads: int | None = None) -> None:
        from tts_pipeline.export.runtime import OnnxModel, OnnxVoice

        acoustic, vocoder = model_files(folder, card, self.name)
        self.voice = OnnxVoice(card, OnnxModel(acoustic, threads=threads), OnnxModel(vocoder, threads=threads))
        _, self.pitch_shift_hz, self.pitch_scale = _controls(card)

    def mel(self, symbols: Sequence[int], pace: float) -> np.ndarray:
        tokens = np.array([symbols], dtype=np.int64)
        controls = tuple(np.array([value], dtype=np.float32) for value in (pace, self.pitch_shift_hz, self.pitch_scale))
        mel, lengths, _ = self.voice.mels(tokens, np.array([len(symbols)], dtype=np.int64), controls)
        return np.ascontiguousarray(mel[0, :, : int(lengths[0])])

    def vocode(self, mel: np.ndarray) -> np.ndarray:
        return self.voice.audio(mel[None])[0, 0]

    probe = vocode


class TorchEngine:
    """The pipeline's model files through the synthesizer's loaders and prepared runners.

    Args:
        amp: ``"off"`` (fp32), ``"auto"``, ``"bf16"``: as ``inference.amp`` (:mod:`tts_pipeline.precision`).
    """

    name = "torch"

    def __init__(self, folder: Path, card: Mapping[str, Any], threads: int | None = None, amp: str = "off") -> None:
        import torch

        from tts_pipeline.config import AudioConfig, TextConfig
        from tts_pipeline.inference import SynthesisOptions, Synthesizer
        from tts_pipeline.models.fastpitch import PitchTransform

        if threads is not None:
            torch.set_num_threads(threads)
        acoustic, vocoder = model_files(folder, card, self.name)
        text = card["text"]
        self.synth = Synthesizer.load(
            acoustic,
            vocoder,
            SynthesisOptions(),  # the speaker post-processes; the synthesizer only runs the models
            acoustic_model_kind=card["acoustic_model"]["kind"],
            vocoder_kind=card["vocoder"]["kind"],
            foreign_audio=AudioConfig(**card["audio"]),
            text=TextConfig(cleaners=text["cleaners"], symbol_set=text["symbol_set"]),
            amp=amp,
        )
        _, shift, scale = _controls(card)
        transform = PitchTransform(amplify=scale, shift_hz=shift)
        self.pitch_transform = None if transform.is_identity else transform
        self._torch = torch

    def mel(self, symbols: Sequence[int], pace: float) -> np.ndarray:
        torch = self._torch
        tokens = torch.tensor([list(symbols)], dtype=torch.int64)
        with torch.inference_mode():
            inferred = self.synth.acoustic_runner.infer(  # type: ignore[union-attr]
                tokens, torch.tensor([len(symbols)]), pace=pace, pitch_transform=self.pitch_transform
            )
        return inferred.mel[0, :, : int(inferred.mel_lengths[0])].float().numpy()

    def vocode(self, mel: np.ndarray) -> np.ndarray:
        with self._torch.inference_mode():
            return self.synth.vocoder_audio(self._torch.from_numpy(mel)[None]).reshape(-1).numpy()

    def probe(self, mel: np.ndarray) -> np.ndarray:
        """The fp32 vocoder, as :meth:`tts_pipeline.models.denoiser.Denoiser.from_vocoder` measures it."""
        run = getattr(self.synth.vocoder, "bias_probe", self.synth.vocoder)  # WaveGlow: without noise
        with self._torch.inference_mode():
            return run(self._torch.from_numpy(mel)[None]).float().reshape(-1).numpy()


def load_engine(
    folder: Path, card: Mapping[str, Any], engine: str, threads: int | None = None, amp: str = "off"
) -> Engine:
    """Engine ``engine`` (:data:`ENGINES`) on the export folder ``folder`` with card ``card``."""
    if engine == "onnx":
        return OnnxEngine(folder, card, threads)
    if engine == "torch":
        return TorchEngine(folder, card, threads, amp)
    raise UserError(f"engine: expected one of {', '.join(ENGINES)}, got {engine!r}")
