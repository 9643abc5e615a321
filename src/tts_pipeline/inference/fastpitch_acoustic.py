"""FastPitch behind the acoustic-model seam (:mod:`tts_pipeline.inference.seams`): the ``fastpitch``
row of :mod:`tts_pipeline.config.model_kinds`.

On a CPU in bf16 FastPitch runs from a copy held in bf16 (:mod:`tts_pipeline.models.fastpitch.bf16`),
without autocast, which would cast the predictors' float32 output layers down too; everywhere else the
float32 model runs under the precision's autocast. ``inference.amp: auto`` on a CPU times the two
(:func:`cpu_paths`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

from tts_pipeline.config import AudioConfig, TextConfig
from tts_pipeline.errors import UserError
from tts_pipeline.inference.seams import PLAIN_FP32, CpuPath, LoadedAcousticModel
from tts_pipeline.inference.text import TextEncoder
from tts_pipeline.models.fastpitch import FastPitch, FastPitchInference, PitchTransform
from tts_pipeline.models.fastpitch.bf16 import bf16_inference_copy, is_held_in_bf16
from tts_pipeline.models.fastpitch.model_file import FastPitchInfo, load_fastpitch
from tts_pipeline.precision import Precision


def load(
    path: str | Path, *, audio: AudioConfig | None, text: TextConfig | None, settings: Mapping[str, Any]
) -> LoadedAcousticModel:
    """This pipeline's model file or NVIDIA's checkpoint (whose symbols come from ``text``, its audio
    settings from ``audio``); its text encoder is the one it was trained with. ``settings["speaker"]``
    (``inference.speaker``) chooses the voice of a multi-speaker model (:func:`_as_voice`)."""
    model, info = load_fastpitch(path, text=text, audio=audio)
    model, description = _as_voice(model, info, settings.get("speaker"), path)
    return LoadedAcousticModel(model, info.audio, TextEncoder.from_settings(info.text, path), info.step, description)


def voices(path: str | Path, *, audio: AudioConfig | None, text: TextConfig | None) -> tuple[str, ...]:
    """The voices of the FastPitch in ``path`` as ``inference.speaker`` names them (:func:`_as_voice`):
    for a multi-speaker model the speakers its file names, or for a file that names none (NVIDIA's) the
    ids ``0 .. n_speakers - 1``; ``()`` for a single-speaker model, whose one voice needs no name. The
    benchmark judges each voice of a multi-speaker model."""
    _, info = load_fastpitch(path, text=text, audio=audio)
    if info.n_speakers <= 1:
        return ()
    return info.speakers or tuple(str(speaker) for speaker in range(info.n_speakers))


def _as_voice(model: FastPitch, info: FastPitchInfo, speaker: str | None, path: str | Path) -> tuple[FastPitch, str]:
    """``model`` as the voice ``inference.speaker`` names, and how logs name it.

    A multi-speaker model becomes a single-speaker copy speaking as that speaker (None: speaker 0), with
    the speaker's own pitch statistics (:meth:`FastPitch.as_speaker`): synthesis, the bf16 copy and the
    export then treat it as any one-voice model. A speaker is a name the file records, or for a file
    that records none (NVIDIA's) an id ``0 .. n_speakers - 1``. UserError naming ``inference.speaker``,
    the file and its speakers for one it does not have."""
    if speaker is None and model.n_speakers <= 1:
        return model, "FastPitch"
    if speaker is None:
        speaker_id = 0
    elif info.speakers:
        try:
            speaker_id = info.speaker_id(speaker)
        except ValueError as error:
            raise UserError(f"inference.speaker: {error} ({path})") from None
    elif speaker.isdigit() and int(speaker) < model.n_speakers:
        speaker_id = int(speaker)
    else:
        which = (
            f"names no speakers: give an id 0 .. {model.n_speakers - 1}"
            if model.n_speakers > 1
            else "is a single-speaker model: leave inference.speaker null"
        )
        raise UserError(f"inference.speaker {speaker!r}: {path} {which}")
    name = info.speakers[speaker_id] if info.speakers else str(speaker_id)
    pitch = info.pitch_of(speaker_id)
    return model.as_speaker(speaker_id, pitch.mean, pitch.std), f"FastPitch (speaker {name})"


class FastPitchRunner:
    """FastPitch's ``infer`` at one precision.

    Attributes:
        model: What runs: the float32 model as given, or on a CPU in bf16 its copy held in bf16.
        precision: The precision whose autocast the float32 model runs under.
    """

    def __init__(self, model: FastPitch, precision: Precision) -> None:
        self.model = model
        self.precision = precision

    def infer(
        self, tokens: torch.Tensor, token_lengths: torch.Tensor, *, pace: float, pitch_transform: PitchTransform | None
    ) -> FastPitchInference:
        """``(B, N)`` symbols -> :class:`~tts_pipeline.models.fastpitch.FastPitchInference` (``mel`` ``(B,
        n_mels, T_max)``, ``mel_lengths``, ``durations``, ``pitch``, ``energy``)."""
        held = is_held_in_bf16(self.model)
        with contextlib.nullcontext() if held else self.precision.autocast():
            return self.model.infer(tokens, token_lengths, pace=pace, pitch_transform=pitch_transform)


def prepare(model: FastPitch, precision: Precision) -> FastPitchRunner:
    """``model`` to run at ``precision``; the bf16 copy is made here, so the float32 model stays shared
    by the synthesizers of other precisions."""
    if precision.amp == "bf16" and precision.device.type == "cpu":
        return FastPitchRunner(bf16_inference_copy(model), precision)
    return FastPitchRunner(model, precision)


def cpu_paths() -> tuple[CpuPath, ...]:
    """The float32 model as it is, and its copy held in bf16."""
    return (CpuPath(PLAIN_FP32, "off", prepare), CpuPath("bf16 held", "bf16", prepare))
