"""FastPitch and HiFi-GAN, each timed alone on several engines that run the same weights, all engines in
the same interleaved rounds (:func:`tts_pipeline.interleaved.interleaved`).

An :class:`Engine` is one implementation of both models: ours as the synthesizer runs it (its
precision; with ``auto``, the paths it chose per model), ours in plain float32 (the model as it is:
the reference every output is compared with), NVIDIA's code
(:mod:`tts_pipeline.benchmark.nvidia_inference`), ONNX Runtime on the exported graphs (built by
``bench-inference``, which may import the export package).

- FastPitch: ``(B, L)`` symbols of the phrase -> ``(B, n_mels, T)`` mel. With random weights every
  engine decodes the same number of frames (fixed durations).
- HiFi-GAN: a ``(B, n_mels, hifigan_frames)`` mel: the reference's FastPitch mel, repeated when shorter.

Figures per model and engine: the median seconds per call, its time over ours (above 1: ours is faster),
and its output against the reference's: SNR (:func:`tts_pipeline.snr.snr_db`) and max abs difference
(a float32 engine computing the same function differs by rounding only).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from tts_pipeline.benchmark.nvidia_twins import max_abs_diff
from tts_pipeline.inference import Synthesizer
from tts_pipeline.interleaved import interleaved
from tts_pipeline.snr import snr_db

FASTPITCH, HIFIGAN = "FastPitch", "HiFi-GAN"
OURS, OURS_FP32 = "ours", "ours fp32"


@dataclass(frozen=True)
class Engine:
    """One implementation of both models, with the synthesizer's weights.

    Attributes:
        name: Its key in the figures (``"ours"``, ``"ours fp32"``, ``"onnxruntime"``, ``"nvidia"``).
        fastpitch: ``(B, L)`` int64 symbols, ``(B,)`` lengths -> ``(B, n_mels, T)`` mel (any float dtype).
        vocoder: ``(B, n_mels, T)`` float32 mel -> ``(B, 1, T x hop)`` audio.
        labels: How the table names it per model (``{"HiFi-GAN": "ours (bf16 fused)"}``); default ``name``.
    """

    name: str
    fastpitch: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
    vocoder: Callable[[torch.Tensor], torch.Tensor]
    labels: Mapping[str, str] = field(default_factory=dict)

    def label(self, model: str) -> str:
        return self.labels.get(model, self.name)


def ours_engine(synth: Synthesizer, name: str = OURS) -> Engine:
    """The synthesizer's own path (its runners, inference mode); ``ours`` is labelled with each model's
    precision (``ours (bf16 fused)``), any other name is its own label."""

    def fastpitch(tokens: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        with torch.inference_mode():
            return synth.infer_mels(tokens, lengths).mel

    def vocoder(mel: torch.Tensor) -> torch.Tensor:
        with torch.inference_mode():
            return synth.vocoder_audio(mel)

    if name != OURS:
        return Engine(name, fastpitch, vocoder)
    acoustic = synth.acoustic_precision.label if synth.acoustic_precision is not None else ""
    labels = {FASTPITCH: f"{name} ({acoustic})", HIFIGAN: f"{name} ({synth.vocoder_precision.label})"}
    return Engine(name, fastpitch, vocoder, labels)


@dataclass(frozen=True)
class ModelComparison:
    """One model's figures on every engine.

    Attributes:
        model: ``"FastPitch"`` or ``"HiFi-GAN"``.
        engines: The engines' names, in the table's order.
        labels: How the table names each engine.
        ours: The engine the ratios are against.
        reference: The engine whose output the others are compared with.
        seconds: Median seconds per call, by engine.
        snr_db: Output against the reference's, dB (200 when equal, ``-inf`` for another shape).
        max_abs_diff: Largest absolute difference from the reference's output (``inf`` for another shape).
        audio_seconds: Seconds of audio per call (HiFi-GAN), else None.
        round_medians: ``{engine: [median per round]}``.
    """

    model: str
    engines: list[str]
    labels: dict[str, str]
    ours: str
    reference: str
    seconds: dict[str, float]
    snr_db: dict[str, float]
    max_abs_diff: dict[str, float]
    audio_seconds: float | None
    round_medians: dict[str, list[float]]

    def ratio(self, engine: str) -> float:
        """``engine``'s time over ours: how many times ours outruns it."""
        return self.seconds[engine] / self.seconds[self.ours]

    def as_dict(self) -> dict[str, Any]:
        finite = {name: value if math.isfinite(value) else None for name, value in self.snr_db.items()}
        return {**vars(self), "snr_db": finite, "ratios": {name: self.ratio(name) for name in self.engines}}


def compare_models(
    engines: Sequence[Engine],
    tokens: Sequence[int],
    *,
    device: torch.device,
    hop_length: int,
    sampling_rate: int,
    ours: str = OURS,
    reference: str = OURS_FP32,
    batch_size: int = 1,
    hifigan_frames: int = 500,
    rounds: int = 3,
    repeats: int = 10,
    warmup: int = 2,
    on_row: Callable[[ModelComparison], None] = lambda row: None,
) -> list[ModelComparison]:
    """FastPitch's then HiFi-GAN's figures on ``engines`` (module docstring), each row also handed to
    ``on_row`` as soon as it is measured. ``ours`` and ``reference`` name two of the engines."""
    by_name = {engine.name: engine for engine in engines}
    if ours not in by_name or reference not in by_name:
        raise ValueError(f"compare_models: {ours!r} and {reference!r} must be among {list(by_name)}")
    batch = torch.tensor([list(tokens)] * batch_size, dtype=torch.int64, device=device)
    lengths = torch.full((batch_size,), len(tokens), dtype=torch.int64, device=device)
    settings = {"ours": ours, "reference": reference, "rounds": rounds, "repeats": repeats, "warmup": warmup}

    fastpitch_calls = {name: _bind(engine.fastpitch, batch, lengths) for name, engine in by_name.items()}
    reference_mel = fastpitch_calls[reference]().float()
    labels = {name: engine.label(FASTPITCH) for name, engine in by_name.items()}
    fastpitch = _compare(FASTPITCH, fastpitch_calls, labels, device=device, audio_seconds=None, **settings)
    on_row(fastpitch)

    repeat = -(-hifigan_frames // reference_mel.shape[-1])
    mel = reference_mel.repeat(1, 1, repeat)[..., :hifigan_frames].contiguous()
    vocoder_calls = {name: _bind(engine.vocoder, mel) for name, engine in by_name.items()}
    labels = {name: engine.label(HIFIGAN) for name, engine in by_name.items()}
    audio_seconds = hifigan_frames * hop_length / sampling_rate * batch_size
    vocoder = _compare(HIFIGAN, vocoder_calls, labels, device=device, audio_seconds=audio_seconds, **settings)
    on_row(vocoder)
    return [fastpitch, vocoder]


def _bind(function: Callable[..., torch.Tensor], *args: torch.Tensor) -> Callable[[], torch.Tensor]:
    return lambda: function(*args)


def _compare(
    model: str,
    calls: Mapping[str, Callable[[], torch.Tensor]],
    labels: dict[str, str],
    *,
    ours: str,
    reference: str,
    device: torch.device,
    rounds: int,
    repeats: int,
    warmup: int,
    audio_seconds: float | None,
) -> ModelComparison:
    outputs = {name: call().float().cpu() for name, call in calls.items()}
    expected = outputs[reference]
    synchronize = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    timing = interleaved(calls, rounds=rounds, repeats=repeats, warmup=warmup, synchronize=synchronize)
    return ModelComparison(
        model=model,
        engines=list(calls),
        labels=labels,
        ours=ours,
        reference=reference,
        seconds={name: timing.median(name) for name in calls},
        snr_db={name: snr_db(expected.numpy(), output.numpy()) for name, output in outputs.items()},
        max_abs_diff={
            name: max_abs_diff(expected, output) if output.shape == expected.shape else math.inf
            for name, output in outputs.items()
        },
        audio_seconds=audio_seconds,
        round_medians={name: timing.round_medians(name) for name in calls},
    )


def format_comparison(row: ModelComparison) -> str:
    """A table of one model: per engine its latency, x real time (a vocoder), time over ours, SNR and
    max abs difference against the reference; then each engine's round medians."""
    reference = row.labels[row.reference]
    width = max(len(label) for label in row.labels.values()) + 2
    head = f"  {'engine':<{width}}{'latency ms':>12}"
    head += f"{'x real time':>13}" if row.audio_seconds is not None else ""
    head += f"{'time / ours':>13}{'SNR dB':>9}{'max abs diff':>14}"
    lines = [f"{row.model}: median per call over interleaved rounds; SNR and difference against {reference}", head]
    for name in row.engines:
        line = f"  {row.labels[name]:<{width}}{1000 * row.seconds[name]:>12.1f}"
        if row.audio_seconds is not None:
            line += f"{row.audio_seconds / row.seconds[name]:>13.2f}"
        line += f"{row.ratio(name):>13.2f}{row.snr_db[name]:>9.1f}{row.max_abs_diff[name]:>14.3g}"
        lines.append(line)
    medians = "; ".join(
        f"{name} " + ", ".join(f"{1000 * s:.1f}" for s in row.round_medians[name]) for name in row.engines
    )
    lines.append(f"  round medians ms: {medians}")
    return "\n".join(lines)
