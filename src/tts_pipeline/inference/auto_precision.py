"""The synthesizer's models prepared for their precision; for ``inference.amp: auto`` on a CPU, the way
to run each one chosen by measurement.

Any other setting (and ``auto`` on CUDA: float32) resolves once (:func:`tts_pipeline.precision.resolve_precision`)
and each kind's ``prepare`` makes the runner, as configured.

``auto`` on a CPU. A CPU's flags say which instructions exist, not which are fast: both an AMD Zen 5 and
an Intel Xeon advertise AVX512-BF16, and the fused bf16 HiFi-GAN runs 2.4x NVIDIA's float32 code on the
first, 0.8x on the second (slower than plain float32 there). So per
model (acoustic model and vocoder may choose differently), every candidate path of its kind
(:func:`tts_pipeline.inference.seams.kind_cpu_paths`; bf16 ones only where the CPU advertises bf16) is

1. prepared (copies made once) and called once untimed on a short probe: the output is compared with
   the plain float32 path's (:func:`tts_pipeline.snr.snr_db`), and the call warms caches and oneDNN's
   kernels;
2. timed in :data:`PROBE_ROUNDS` interleaved rounds of one call (:func:`tts_pipeline.interleaved.interleaved`);
3. judged by :func:`tts_pipeline.inference.precision_choice.choose_path` (fastest whose output holds,
   never slower than plain float32).

The figures and the choice are logged and cached per CPU model and torch version
(:mod:`tts_pipeline.inference.precision_cache`; not a disturbed measurement, whose rounds lie far
apart), and the prepared runner of the chosen path is kept.

Probes, short so that measuring the demo's models takes a fraction of a second on 2 cores:

- the acoustic model: the symbols of :data:`PROBE_TEXT`, one sentence (about 70 symbols, 4 s of speech);
- the vocoder: :data:`PROBE_FRAMES` frames of the acoustic model's float32 mel of that sentence (on a
  real mel the output resembles speech, as in use), or for a vocoder alone a smooth synthetic log-mel.
"""

from __future__ import annotations

import functools
import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from tts_pipeline.config import model_kinds
from tts_pipeline.errors import UserError
from tts_pipeline.inference.precision_cache import choice_key, recall, remember
from tts_pipeline.inference.precision_choice import PathChoice, PathFigures, choose_path
from tts_pipeline.inference.seams import (
    PLAIN_FP32,
    AcousticModelModule,
    CpuPath,
    VocoderModule,
    acoustic_model_module,
    kind_cpu_paths,
    vocoder_module,
)
from tts_pipeline.inference.text import TextEncoder
from tts_pipeline.interleaved import SideBySide, interleaved
from tts_pipeline.precision import Precision, cpu_bf16_instructions, resolve_precision
from tts_pipeline.snr import snr_db

log = logging.getLogger(__name__)

KEY = "inference.amp"
PROBE_TEXT = "Printing, in the only sense with which we are at present concerned."
PROBE_FRAMES = 64  # 0.74 s of audio at 22 kHz
PROBE_ROUNDS = 5

# Runs a prepared runner at its precision on the probe input -> its output tensor (any float dtype).
ProbeCall = Callable[[Any, Precision, Any], torch.Tensor]


@dataclass(frozen=True)
class Prepared:
    """One model ready to run.

    Attributes:
        runner: What the synthesizer calls (the model, or a copy its kind prepared).
        precision: Its precision: the autocast around a vocoder call; its label names the path.
        choice: ``auto``'s figures and choice, when it chose; None when configured.
    """

    runner: Any
    precision: Precision
    choice: PathChoice | None = None


@dataclass(frozen=True)
class PreparedModels:
    """Both models of a synthesizer, ready to run.

    Attributes:
        precision: The synthesizer's precision: as configured, or for ``auto`` on a CPU a summary named
            after both choices (``"auto: FastPitch bf16 held, HiFi-GAN fp32 fused"``; bf16 when either is).
        vocoder: The vocoder.
        acoustic: The acoustic model (None for a vocoder-only synthesizer).
    """

    precision: Precision
    vocoder: Prepared
    acoustic: Prepared | None

    @property
    def choices(self) -> list[PathChoice]:
        """``auto``'s choices, acoustic model first (empty when nothing was chosen by measurement)."""
        return [side.choice for side in (self.acoustic, self.vocoder) if side is not None and side.choice is not None]


def prepare_models(
    amp: str,
    device: torch.device,
    vocoder: tuple[str, nn.Module],
    acoustic: tuple[str, nn.Module, TextEncoder] | None,
    n_mels: int,
) -> PreparedModels:
    """The runners of ``vocoder`` (kind, model) and ``acoustic`` (kind, model, its text encoder) at
    ``amp`` on ``device`` (module docstring); ``n_mels`` is the mel channels they share."""
    vocoder_kind, vocoder_model = vocoder
    vocoders = vocoder_module(vocoder_kind)
    if amp != "auto" or device.type != "cpu":
        precision = resolve_precision(amp, device, key=KEY)
        vocoder_side = Prepared(vocoders.prepare(vocoder_model, precision), precision)
        acoustic_side = None
        if acoustic is not None:
            acoustic_side = Prepared(acoustic_model_module(acoustic[0]).prepare(acoustic[1], precision), precision)
        return PreparedModels(precision, vocoder_side, acoustic_side)

    acoustic_side, probe_mel = None, functools.partial(synthetic_mel, n_mels)
    if acoustic is not None:
        kind, model, encoder = acoustic
        acoustics = acoustic_model_module(kind)
        label = model_kinds.acoustic_model_kind(kind).label
        tokens = _probe_tokens(encoder, label)
        if tokens is None:
            plain = Precision("off", device, "auto: no probe sentence to measure by")
            acoustic_side = Prepared(acoustics.prepare(model, plain), plain)
        else:
            acoustic_side = measured_path(label, kind, acoustics, model, device, lambda: tokens, _infer_mel)
            probe_mel = functools.partial(_acoustic_mel, acoustics, model, device, tokens)
    label = model_kinds.vocoder_kind(vocoder_kind).label
    vocoder_side = measured_path(label, vocoder_kind, vocoders, vocoder_model, device, probe_mel, _vocode)
    sides = [side for side in (acoustic_side, vocoder_side) if side is not None]
    named = [f"{side.choice.model} {side.choice.chosen}" for side in sides if side.choice is not None]
    summary = Precision(
        "bf16" if any(side.precision.amp == "bf16" for side in sides) else "off",
        device,
        "the fastest way to run each model on this CPU whose output holds, timed once per CPU and torch version",
        name=f"auto: {', '.join(named)}" if named else "",
    )
    log.info("%s: %s on %s (%s)", KEY, summary.label, device.type, summary.reason)
    return PreparedModels(summary, vocoder_side, acoustic_side)


def candidate_paths(module: VocoderModule | AcousticModelModule) -> tuple[CpuPath, ...]:
    """The paths of a kind that this CPU may run: all float32 ones, bf16 ones where the CPU advertises bf16."""
    bf16 = bool(cpu_bf16_instructions())
    return tuple(path for path in kind_cpu_paths(module) if path.amp == "off" or bf16)


def measured_path(
    label: str,
    kind: str,
    module: VocoderModule | AcousticModelModule,
    model: nn.Module,
    device: torch.device,
    probe: Callable[[], Any],
    call: ProbeCall,
) -> Prepared:
    """``model`` prepared on the path ``auto`` chooses (module docstring): from the cache, else measured.

    Args:
        label: How logs name the model (``"HiFi-GAN"``).
        kind: Its kind (part of the cache key).
        module: Its kind's module.
        model: The float32 model, eval mode, on the CPU.
        device: The CPU.
        probe: Makes the probe input (called only when measuring).
        call: Runs a runner at its precision on the probe input.
    """
    paths = candidate_paths(module)
    names = [path.name for path in paths]
    if len(paths) == 1:
        plain = Precision("off", device, "auto: the only way this kind runs on this CPU", name=PLAIN_FP32)
        return Prepared(paths[0].prepare(model, plain), plain)
    key = choice_key(kind, model, names)
    choice = recall(key, names)
    runners: dict[str, Any] = {}
    if choice is None:
        choice, runners = measure_paths(label, paths, model, device, probe(), call)
        remember(key, choice)
    log.info("%s auto: %s", KEY, choice.describe())
    path = paths[names.index(choice.chosen)]
    source = "read from the cache" if choice.cached else "measured"
    precision = Precision(path.amp, device, f"auto: fastest on this CPU, {source}", name=path.name)
    runner = runners[path.name] if path.name in runners else path.prepare(model, precision)
    return Prepared(runner, precision, choice)


def measure_paths(
    label: str, paths: Sequence[CpuPath], model: nn.Module, device: torch.device, probe: Any, call: ProbeCall
) -> tuple[PathChoice, dict[str, Any]]:
    """Every path's figures on ``probe`` and the choice; also each path's prepared runner, by name."""
    precisions = {path.name: Precision(path.amp, device, "auto: measuring", name=path.name) for path in paths}
    runners = {path.name: path.prepare(model, precisions[path.name]) for path in paths}

    def run(name: str) -> torch.Tensor:
        return call(runners[name], precisions[name], probe)

    with torch.inference_mode():
        outputs = {name: run(name).float().numpy() for name in runners}  # also each path's warm-up
        timing = interleaved(
            {name: functools.partial(run, name) for name in runners}, rounds=PROBE_ROUNDS, repeats=1, warmup=0
        )
    figures = tuple(
        PathFigures(name, timing.median(name), snr_db(outputs[PLAIN_FP32], outputs[name]), _spread(timing, name))
        for name in runners
    )
    return PathChoice(label, choose_path(figures), figures, cached=False), runners


def _spread(timing: SideBySide, name: str) -> float:
    """The slowest round of ``name`` over its fastest."""
    rounds = timing.round_medians(name)
    return max(rounds) / min(rounds) if min(rounds) > 0 else math.inf


def synthetic_mel(n_mels: int, frames: int = PROBE_FRAMES, seed: int = 0) -> torch.Tensor:
    """A smooth random log-mel, ``(1, n_mels, frames)`` float32 around the level of speech (-4, falling
    by 4 towards the top band): a vocoder's probe when there is no acoustic model to make a real one.
    Smoothed over 5 frames and 5 bands, since white noise in the log-mel is no input a vocoder met."""
    generator = torch.Generator().manual_seed(seed)
    noise = torch.randn(1, 1, n_mels, frames, generator=generator)
    smooth = F.avg_pool2d(noise, 5, stride=1, padding=2, count_include_pad=False)[:, 0]
    tilt = torch.linspace(0.0, -4.0, n_mels)[None, :, None]
    return (1.5 * smooth / smooth.std() - 4.0 + tilt).contiguous()


def _probe_tokens(encoder: TextEncoder, label: str) -> tuple[torch.Tensor, torch.Tensor] | None:
    """``(1, N)`` int64 symbols of :data:`PROBE_TEXT` and ``(1,)`` their count; None (logged) when the
    model's text front end cannot encode it."""
    try:
        symbols = encoder.encode(PROBE_TEXT)
    except UserError as error:
        log.warning("%s auto: %s runs float32, its symbols cannot encode the probe sentence (%s)", KEY, label, error)
        return None
    return torch.tensor([symbols], dtype=torch.int64), torch.tensor([len(symbols)], dtype=torch.int64)


def _infer_mel(runner: Any, precision: Precision, tokens: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
    """An acoustic runner on the probe: ``(1, n_mels, T)`` mel (it enters its own autocast)."""
    return runner.infer(*tokens, pace=1.0, pitch_transform=None).mel


def _vocode(runner: Any, precision: Precision, mel: torch.Tensor) -> torch.Tensor:
    """A vocoder runner on the probe mel under its precision's autocast, as the synthesizer calls it."""
    with precision.autocast():
        return runner(mel)


def _acoustic_mel(
    module: AcousticModelModule, model: nn.Module, device: torch.device, tokens: tuple[torch.Tensor, torch.Tensor]
) -> torch.Tensor:
    """The acoustic model's float32 mel of the probe sentence, ``(1, n_mels, PROBE_FRAMES)``: cut, or
    repeated when shorter (a synthetic one when it predicts no frame at all)."""
    plain = Precision("off", device, "auto: the vocoder's probe")
    with torch.inference_mode():
        mel = _infer_mel(module.prepare(model, plain), plain, tokens).float()
    if mel.shape[-1] == 0:
        return synthetic_mel(mel.shape[1])
    return mel.repeat(1, 1, math.ceil(PROBE_FRAMES / mel.shape[-1]))[..., :PROBE_FRAMES].clone()
