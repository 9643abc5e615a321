"""Our FastPitch and HiFi-GAN inference against NVIDIA's own code on the same weights, model by model.

Ours runs as the :class:`~tts_pipeline.inference.Synthesizer` runs it (``torch.inference_mode()``,
the synthesizer's precision: ``auto`` is bf16 on a CPU with native bf16); NVIDIA's runs as their
``inference.py`` runs it on a CPU (``torch.no_grad()``, float32, no TorchScript). Each model is timed
alone, the two sides interleaved (:mod:`tts_pipeline.benchmark.side_by_side`):

- FastPitch: ``infer`` on the phrase's symbols, ``(B, L)`` -> ``(B, n_mels, T)`` mel. With random
  weights both sides get the same fixed durations (ours from :class:`FixedDurations`, theirs as
  ``dur_tgt``), so both decode the same number of frames.
- HiFi-GAN: the generator (weight norm folded on both sides) on a ``(B, n_mels, hifigan_frames)``
  mel: the first frames of FastPitch's fp32 mel for the phrase, repeated when it is shorter.

Checks: the fp32 max abs difference of each model's output between the sides (ours forced to fp32:
the same function, so only rounding differs), and the SNR of ours in its precision against NVIDIA's
fp32 output (what the precision costs in accuracy).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from tts_pipeline.benchmark.nvidia_code import NvidiaCode
from tts_pipeline.benchmark.nvidia_twins import fastpitch_twin, generator_twin, max_abs_diff, snr_db
from tts_pipeline.benchmark.side_by_side import interleaved
from tts_pipeline.inference import Synthesizer
from tts_pipeline.models.fastpitch import FastPitch
from tts_pipeline.precision import Precision

OURS, NVIDIA = "ours", "nvidia"


@dataclass(frozen=True)
class ModelComparison:
    """One model's figures: medians in seconds per call, ratio, accuracy checks.

    Attributes:
        model: ``"FastPitch"`` or ``"HiFi-GAN"``.
        ours_s, nvidia_s: Median seconds per call.
        ratio: ``nvidia_s / ours_s`` (above 1: ours is faster).
        snr_db: Our output in our precision against NVIDIA's fp32 output.
        fp32_max_abs_diff: Our fp32 output against NVIDIA's fp32 output.
        audio_seconds: Seconds of audio per call (HiFi-GAN), else None.
        round_medians: ``{side: [median per round]}``.
    """

    model: str
    ours_s: float
    nvidia_s: float
    ratio: float
    snr_db: float
    fp32_max_abs_diff: float
    audio_seconds: float | None
    round_medians: dict[str, list[float]]

    def as_dict(self) -> dict[str, Any]:
        return dict(vars(self))


def _fp32(precision: Precision) -> Precision:
    return Precision("off", precision.device, "fp32 check")


def compare_inference(
    synth: Synthesizer,
    tokens: Sequence[int],
    code: NvidiaCode,
    *,
    batch_size: int = 1,
    hifigan_frames: int = 500,
    rounds: int = 3,
    repeats: int = 10,
    warmup: int = 2,
    on_row: Callable[[ModelComparison], None] = lambda row: None,
) -> list[ModelComparison]:
    """FastPitch then HiFi-GAN of ``synth`` against NVIDIA's (module docstring); both models' rows,
    each also handed to ``on_row`` as soon as it is measured."""
    if not isinstance(synth.acoustic_model, FastPitch):
        raise ValueError("compare_inference: the synthesizer has no FastPitch model")
    device = synth.device
    batch = torch.tensor([list(tokens)] * batch_size, dtype=torch.int64, device=device)
    lengths = torch.full((batch_size,), len(tokens), dtype=torch.int64, device=device)
    their_fastpitch, durations = fastpitch_twin(code, synth.acoustic_model)
    their_fastpitch.to(device)
    dur_tgt = None if durations is None else durations[: len(tokens)].expand(batch_size, -1).to(device)

    # Ours as the pipeline runs it (the synthesizer's own path: bf16 copies on a CPU), and the
    # float32 model it was given for the exactness check.
    fp32 = synth.with_options(synth.options, "off")

    def ours(precision: Precision) -> Synthesizer:
        return synth if precision.amp == synth.precision.amp else fp32

    def measure(
        model: str,
        ours_call: Callable[[Precision], torch.Tensor],
        nvidia_call: Callable[[], torch.Tensor],
        audio_seconds: float | None,
    ) -> ModelComparison:
        # Both models are timed alike: the synthesizer's precision, the same rounds, repeats and warm-up.
        row = _compare(
            model,
            ours=ours_call,
            nvidia=nvidia_call,
            precision=synth.precision,
            rounds=rounds,
            repeats=repeats,
            warmup=warmup,
            audio_seconds=audio_seconds,
        )
        on_row(row)
        return row

    def ours_fastpitch(precision: Precision) -> torch.Tensor:
        with torch.inference_mode():
            return ours(precision).infer_mels(batch, lengths).mel

    def nvidia_fastpitch() -> torch.Tensor:
        with torch.no_grad():
            return their_fastpitch.infer(batch, dur_tgt=dur_tgt)[0]

    reference_mel = nvidia_fastpitch()
    fastpitch = measure("FastPitch", ours_fastpitch, nvidia_fastpitch, None)

    their_vocoder = generator_twin(code, synth.vocoder).to(device).eval()
    repeat = -(-hifigan_frames // reference_mel.shape[-1])
    mel = reference_mel.float().repeat(1, 1, repeat)[..., :hifigan_frames].contiguous()

    def ours_vocoder(precision: Precision) -> torch.Tensor:
        with torch.inference_mode():
            return ours(precision).vocoder_audio(mel)

    def nvidia_vocoder() -> torch.Tensor:
        with torch.no_grad():
            return their_vocoder(mel)

    audio_seconds = hifigan_frames * synth.audio.hop_length / synth.audio.sampling_rate * batch_size
    return [fastpitch, measure("HiFi-GAN", ours_vocoder, nvidia_vocoder, audio_seconds)]


def _compare(
    model: str,
    *,
    ours: Callable[[Precision], torch.Tensor],
    nvidia: Callable[[], torch.Tensor],
    precision: Precision,
    rounds: int,
    repeats: int,
    warmup: int,
    audio_seconds: float | None,
) -> ModelComparison:
    reference = nvidia().float()
    fp32_diff = max_abs_diff(ours(_fp32(precision)).float(), reference)
    snr = snr_db(reference, ours(precision).float())
    synchronize = torch.cuda.synchronize if precision.device.type == "cuda" else (lambda: None)
    timing = interleaved(
        {OURS: lambda: ours(precision), NVIDIA: nvidia},
        rounds=rounds,
        repeats=repeats,
        warmup=warmup,
        synchronize=synchronize,
    )
    return ModelComparison(
        model=model,
        ours_s=timing.median(OURS),
        nvidia_s=timing.median(NVIDIA),
        ratio=timing.ratio(NVIDIA, OURS),
        snr_db=snr,
        fp32_max_abs_diff=fp32_diff,
        audio_seconds=audio_seconds,
        round_medians={side: timing.round_medians(side) for side in (OURS, NVIDIA)},
    )


def format_comparison(row: ModelComparison, precision_label: str) -> str:
    """A small table of one model: ours, NVIDIA's, ratio, SNR (and x real time for a vocoder)."""
    ours_head, theirs_head = f"ours ({precision_label})", "NVIDIA (fp32)"
    lines = [
        f"{row.model}: median per call over interleaved rounds",
        f"  {'':<16}{ours_head:>16}{theirs_head:>16}",
        f"  {'latency ms':<16}{1000 * row.ours_s:>16.1f}{1000 * row.nvidia_s:>16.1f}",
    ]
    if row.audio_seconds is not None:
        ours_rt, theirs_rt = row.audio_seconds / row.ours_s, row.audio_seconds / row.nvidia_s
        lines.append(f"  {'x real time':<16}{ours_rt:>16.2f}{theirs_rt:>16.2f}")
    lines += [
        f"  ratio NVIDIA time / ours: {row.ratio:.2f}x",
        f"  SNR ours ({precision_label}) vs NVIDIA fp32: {row.snr_db:.1f} dB; "
        f"fp32 max abs diff {row.fp32_max_abs_diff:.3g}",
        "  round medians ms: ours "
        + ", ".join(f"{1000 * s:.1f}" for s in row.round_medians[OURS])
        + "; NVIDIA "
        + ", ".join(f"{1000 * s:.1f}" for s in row.round_medians[NVIDIA]),
    ]
    return "\n".join(lines)
