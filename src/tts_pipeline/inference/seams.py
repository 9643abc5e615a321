"""The synthesizer's two seams: what a vocoder and an acoustic model are to it, and how the module of a
kind (a row of :mod:`tts_pipeline.config.model_kinds`) loads one from its file and prepares it to run.

A kind's module provides two functions:

- ``load(path, *, audio, settings, ...)``: the model as its file gives it, in eval mode on the CPU, with
  the audio settings it was trained for (:class:`LoadedVocoder`, :class:`LoadedAcousticModel`); errors
  (UserError) name the file. ``audio`` is the config's audio section, for foreign files that record
  none; None when there is no config. ``settings`` are the ``inference`` keys the kind's row names.
- ``prepare(model, precision)``: what the synthesizer calls to run that model at ``precision``
  (the model itself, or a copy made for it, e.g. HiFi-GAN's fused bf16 CPU generator).

and may provide a third:

- ``cpu_paths()``: the ways it can run a model on a CPU (:class:`CpuPath`), the candidates that
  ``inference.amp: auto`` times there. A module without it has :func:`kind_cpu_paths`'s two: the
  model as it is in float32, and ``prepare`` at bf16.

The synthesizer reaches a module through :func:`vocoder_module` and :func:`acoustic_model_module`, by
the kind's name, so neither it nor its callers name a kind.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import Any, Protocol, cast

import torch
from torch import nn

from tts_pipeline.config import AudioConfig, TextConfig
from tts_pipeline.config.model_kinds import acoustic_model_kind, vocoder_kind
from tts_pipeline.inference.text import TextEncoder
from tts_pipeline.models.fastpitch import PitchTransform
from tts_pipeline.precision import AmpMode, Precision

PLAIN_FP32 = "fp32"
"""The path every kind has and ``auto`` measures the others against: the model as it is, in float32."""


class Vocoder(Protocol):
    """Log-mels to audio: ``(B, n_mels, T)`` float -> ``(B, 1, T * hop)`` float, ``hop`` being the
    ``hop_length`` of the audio settings it was trained for. The synthesizer calls it under the
    precision's autocast, on one utterance at a time or on a padded batch (padding at the log-mel of
    silence). A vocoder with a ``bias_probe`` method is measured through it by the denoiser
    (:meth:`tts_pipeline.models.denoiser.Denoiser.from_vocoder`)."""

    def __call__(self, mel: torch.Tensor) -> torch.Tensor: ...


class MelPrediction(Protocol):
    """What an acoustic model predicts for a batch (more fields, such as durations, where it has them).

    Attributes:
        mel: ``(B, n_mels, T_max)`` float log-mels, 0 on padded frames.
        mel_lengths: ``(B,)`` int64 frames per utterance.

    An autoregressive model may also give ``stopped``: ``(B,)`` bool, False for an utterance it cut at its
    step limit instead of ending it (the synthesizer passes it on: ``Utterance.complete``).
    """

    @property
    def mel(self) -> torch.Tensor: ...

    @property
    def mel_lengths(self) -> torch.Tensor: ...


class AcousticModel(Protocol):
    """Text symbols to log-mels, in the precision it was prepared for (it enters any autocast itself)."""

    def infer(
        self,
        tokens: torch.Tensor,
        token_lengths: torch.Tensor,
        *,
        pace: float,
        pitch_transform: PitchTransform | None,
    ) -> MelPrediction:
        """``(B, N)`` int64 symbol ids (0 = padding) and ``(B,)`` int64 lengths -> mels.

        ``pace`` divides the durations (2 = twice as fast); ``pitch_transform`` changes the predicted
        pitch (None = unchanged). A model without durations or pitch of its own may ignore them.
        """
        ...


@dataclass(frozen=True)
class LoadedVocoder:
    """A vocoder as its file gave it.

    Attributes:
        model: The module (a :class:`Vocoder`), eval mode, on the CPU, ready for inference (weight
            norms folded, noise scale set).
        audio: The audio settings it was trained for (its mels must be these).
        step: The training step of its weights.
        description: How logs and pages name it, with its inference settings (``"WaveGlow (sigma 0.9)"``).
    """

    model: nn.Module
    audio: AudioConfig
    step: int
    description: str


@dataclass(frozen=True)
class LoadedAcousticModel:
    """An acoustic model as its file gave it.

    Attributes:
        model: The module, eval mode, on the CPU, float32 (:class:`AcousticModelModule.prepare` runs it).
        audio: The audio settings of the mels it predicts (the vocoder's must agree).
        text_encoder: How raw text becomes its symbols, as it was trained.
        step: The training step of its weights.
        description: How logs and pages name it.
    """

    model: nn.Module
    audio: AudioConfig
    text_encoder: TextEncoder
    step: int
    description: str


class VocoderModule(Protocol):
    """What the module of a vocoder kind provides (module docstring)."""

    def load(self, path: str | Path, *, audio: AudioConfig | None, settings: Mapping[str, Any]) -> LoadedVocoder:
        """``settings``: the ``inference`` keys its row names, by key (missing ones: its defaults)."""
        ...

    def prepare(self, model: nn.Module, precision: Precision) -> Vocoder: ...


class AcousticModelModule(Protocol):
    """What the module of an acoustic-model kind provides (module docstring)."""

    def load(
        self, path: str | Path, *, audio: AudioConfig | None, text: TextConfig | None, settings: Mapping[str, Any]
    ) -> LoadedAcousticModel:
        """``text``: the config's text section, for a foreign file that records no symbols; ``settings``: the
        ``inference`` keys its row names, by key (missing or None ones: the file's own)."""
        ...

    def prepare(self, model: nn.Module, precision: Precision) -> AcousticModel: ...


@dataclass(frozen=True)
class CpuPath:
    """One way a kind's module runs a model on a CPU: a candidate of ``inference.amp: auto``.

    Attributes:
        name: How logs, the benchmark and the cache of measured choices name it (``"fp32"``,
            ``"fp32 fused"``, ``"bf16 held"``); :data:`PLAIN_FP32` is the model as it is.
        amp: ``"off"`` or ``"bf16"``: the precision it runs at (the autocast the synthesizer enters
            around a vocoder call). bf16 paths are tried only on a CPU that advertises bf16 instructions.
        prepare: ``prepare(model, precision)`` -> the runner, as the module's own ``prepare``; it is
            given a :class:`~tts_pipeline.precision.Precision` of ``amp``.
    """

    name: str
    amp: AmpMode
    prepare: Callable[[nn.Module, Precision], Any]


def kind_cpu_paths(module: VocoderModule | AcousticModelModule) -> tuple[CpuPath, ...]:
    """The CPU paths of a kind's module: its own ``cpu_paths()``, else the model as it is in float32
    and the module's ``prepare`` at bf16. The first is always :data:`PLAIN_FP32`."""
    own = getattr(module, "cpu_paths", None)
    if own is not None:
        paths = tuple(own())
    else:
        paths = (CpuPath(PLAIN_FP32, "off", module.prepare), CpuPath("bf16", "bf16", module.prepare))
    if not paths or paths[0].name != PLAIN_FP32 or paths[0].amp != "off":
        raise ValueError(f"cpu_paths of {module!r}: the first must be {PLAIN_FP32!r} at amp 'off'")
    return paths


def vocoder_module(kind: str) -> VocoderModule:
    """The module of vocoder kind ``kind`` (KeyError naming the known kinds for another name)."""
    return cast(VocoderModule, import_module(vocoder_kind(kind).module))


def acoustic_model_module(kind: str) -> AcousticModelModule:
    """The module of acoustic-model kind ``kind`` (KeyError naming the known kinds for another name)."""
    return cast(AcousticModelModule, import_module(acoustic_model_kind(kind).module))
