"""Speed of FastPitch + HiFi-GAN inference on a :class:`~tts_pipeline.inference.Synthesizer`: NVIDIA's
benchmark procedure (reference 5.3) over batch sizes and precisions.

One timed call synthesises a batch of B copies of the benchmark phrase: FastPitch ``infer`` then the
vocoder (and the denoiser, when its strength is above 0), each timed with the device synchronised,
under ``torch.inference_mode()`` (:meth:`Synthesizer.run_batch`). The copies have the same length, so
the vocoder runs once on the whole batch (``vocoder_batching="padded"``, NVIDIA's way) and no frame
is padding. A call's audio is ``sum(mel_lengths) x hop`` samples, NVIDIA's count.

Precision. ``fp32`` runs the models as they are; ``fp16`` and ``bf16`` run them under CUDA autocast
(NVIDIA's script converts the models with ``.half()`` instead). On the CPU ``fp32`` and ``bf16`` run
(bf16 labelled ``native`` or ``emulated`` after the CPU's instructions; emulated bf16 is timed at the
smallest batch size only, see :func:`plan_precisions`); ``fp16`` is skipped. On a
GPU of compute capability 8.0 or newer, PyTorch may carry out float32 convolutions and matrix products
in TF32 (``torch.backends.cudnn.allow_tf32``, on by default, and
``torch.backends.cuda.matmul.allow_tf32``, off by default). Those switches are left as the process has
them and recorded; the row label says what actually ran: ``tf32`` with both on, ``fp32 (TF32
convolutions)`` with only cuDNN's, and so on. NVIDIA's published "TF32" row is an A100 with both on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import torch

from tts_pipeline.benchmark.runner import BenchmarkRun, CallResult, benchmark
from tts_pipeline.inference.batching import pad_tokens
from tts_pipeline.inference.synthesizer import Synthesizer
from tts_pipeline.precision import cpu_bf16_instructions
from tts_pipeline.timers import Timer

PRECISION_AMP = {"fp32": "off", "fp16": "fp16", "bf16": "bf16"}
"""Benchmark precision name -> the synthesizer's ``amp`` mode."""

BASELINE_PRECISION = "fp32"
"""The precision speed-ups are measured against (same batch size)."""

TF32_CAPABILITY = 8
"""The first CUDA compute capability (major) with TF32 tensor cores (Ampere)."""


@dataclass(frozen=True)
class PrecisionChoice:
    """A precision the device runs.

    Attributes:
        name: ``fp32``, ``fp16`` or ``bf16`` (``benchmark.precisions``).
        amp: The synthesizer's ``amp`` mode for it.
        label: What the report's table shows (it says when float32 work runs in TF32).
        emulated: The device has no instructions for it (bf16 on a CPU without AVX512-BF16 or AMX):
            timed at the smallest batch size only, and its quality not measured.
    """

    name: str
    amp: str
    label: str
    emulated: bool = False


class SkippedPrecision(NamedTuple):
    """A requested precision the device cannot run, and why."""

    precision: str
    reason: str


class PrecisionPlan(NamedTuple):
    """The requested precisions split into those that run (in request order) and those skipped."""

    runnable: list[PrecisionChoice]
    skipped: list[SkippedPrecision]

    def judged_against_fp32(self) -> list[PrecisionChoice]:
        """The runnable precisions whose quality the benchmark measures against fp32: all but fp32 itself
        and an emulated one (it runs other kernels than a device with the instructions; 77 s of the demo's
        benchmark on a 2-core AVX2 EPYC for a figure that describes no device's product)."""
        return [choice for choice in self.runnable if choice.name != "fp32" and not choice.emulated]


def tf32_flags() -> dict[str, bool]:
    """The process's TF32 switches: ``{"cuda_matmul": ..., "cudnn": ...}``."""
    return {
        "cuda_matmul": bool(torch.backends.cuda.matmul.allow_tf32),
        "cudnn": bool(torch.backends.cudnn.allow_tf32),
    }


def fp32_label(device: torch.device) -> str:
    """What float32 inference really runs as on ``device`` (module docstring)."""
    if device.type != "cuda" or torch.cuda.get_device_capability(device)[0] < TF32_CAPABILITY:
        return "fp32"
    flags = tf32_flags()
    if flags["cuda_matmul"] and flags["cudnn"]:
        return "tf32"
    if flags["cudnn"]:
        return "fp32 (TF32 convolutions)"
    if flags["cuda_matmul"]:
        return "fp32 (TF32 matmul)"
    return "fp32"


def plan_precisions(requested: Sequence[str], device: torch.device) -> PrecisionPlan:
    """Which of ``requested`` (duplicates dropped) ``device`` runs; the others with the reason.

    bf16 on a CPU without native bf16 instructions runs, emulated, and is timed at the smallest batch
    size only: there it is many times slower than fp32 (17 x at batch 1 on a 2-core AVX2 EPYC), which
    one row shows, and its larger batches would take minutes of the benchmark. Its quality against fp32
    is not measured either (:meth:`PrecisionPlan.judged_against_fp32`). The plan's skipped list says so.
    """
    runnable: list[PrecisionChoice] = []
    skipped: list[SkippedPrecision] = []
    for name in dict.fromkeys(requested):
        if name not in PRECISION_AMP:
            raise ValueError(f"benchmark.precisions: unknown precision {name!r}; expected one of {list(PRECISION_AMP)}")
        if name == "fp32":
            runnable.append(PrecisionChoice(name, PRECISION_AMP[name], fp32_label(device)))
        elif device.type != "cuda" and name == "bf16":
            native = cpu_bf16_instructions()
            label = f"bf16 (native: {', '.join(native)})" if native else "bf16 (emulated: no native bf16 on this CPU)"
            runnable.append(PrecisionChoice(name, PRECISION_AMP[name], label, emulated=not native))
            if not native:
                skipped.append(
                    SkippedPrecision(
                        f"{name} beyond the smallest batch",
                        "emulated on this CPU (no AVX512-BF16 or AMX): timed at the smallest batch size only, "
                        "where it is already slower than fp32; larger batches would add minutes to the benchmark. "
                        "Its quality against fp32 is not measured either: emulated bf16 takes other kernels than "
                        "a bf16 CPU's (on an AVX2-only CPU HiFi-GAN even runs under autocast instead of the fused "
                        "bf16 copy), so the figure would describe neither what this CPU runs (fp32) nor what a "
                        "bf16 CPU runs",
                    )
                )
        elif device.type != "cuda":
            skipped.append(SkippedPrecision(name, f"fp16 autocast is CUDA-only here; the {device.type} runs fp32"))
        elif name == "bf16" and not torch.cuda.is_bf16_supported():
            skipped.append(SkippedPrecision(name, f"{torch.cuda.get_device_name(device)} does not support bf16"))
        else:
            runnable.append(PrecisionChoice(name, PRECISION_AMP[name], name))
    return PrecisionPlan(runnable, skipped)


def time_synthesis(
    synth: Synthesizer, tokens: Sequence[int], batch_size: int, *, warmup: int, repeats: int
) -> BenchmarkRun:
    """Time ``synth`` on a batch of ``batch_size`` copies of one encoded phrase.

    Args:
        synth: FastPitch + vocoder on their device; its precision, pace, pitch transform and denoiser apply.
        tokens: The phrase's symbol ids ``(L,)``.
        batch_size: B, the copies per call.
        warmup: Untimed calls first.
        repeats: Timed calls; each records ``"fastpitch"`` and ``"vocoder"`` seconds.
    """
    if not tokens:
        raise ValueError("benchmark phrase: no symbols to synthesise")
    batch, lengths = pad_tokens([list(tokens)] * batch_size, synth.device)
    hop = synth.audio.hop_length
    own_timer = synth.timer

    def call(timer: Timer) -> CallResult:
        synth.timer = timer  # the synthesizer times its two models on the runner's timer
        output = synth.run_batch(batch, lengths)
        return CallResult(utterances=batch_size, audio_samples=int(output.mel_lengths.sum()) * hop)

    try:
        return benchmark(call, warmup=warmup, repeats=repeats, device=synth.device)
    finally:
        synth.timer = own_timer


def speed_rows(
    synthesizer_for: Callable[[PrecisionChoice], Synthesizer],
    plan: PrecisionPlan,
    tokens: Sequence[int],
    batch_sizes: Sequence[int],
    *,
    warmup: int,
    repeats: int,
    on_row: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """One row per runnable precision and batch size (precision-major order), with speed-ups.

    Each row is :meth:`BenchmarkRun.summarize` (components ``fastpitch`` and ``vocoder``, whichever vocoder
    the synthesizer holds) plus ``precision``, ``precision_label``, ``tokens``, ``frames_per_utterance``
    (mean), ``latencies`` (per-call seconds of each component, for re-analysis) and ``speed_up`` against
    the ``fp32`` row of the same batch size (when there is one). An emulated precision
    (:attr:`PrecisionChoice.emulated`) gets the smallest batch size only. ``on_row`` sees each row as soon
    as it is measured (for log lines).
    """
    from tts_pipeline.benchmark.report import add_speed_up

    rows: list[dict[str, Any]] = []
    for choice in plan.runnable:
        synth = synthesizer_for(choice)
        for batch_size in [min(batch_sizes)] if choice.emulated else batch_sizes:
            run = time_synthesis(synth, tokens, batch_size, warmup=warmup, repeats=repeats)
            rate = synth.audio.sampling_rate
            summary = run.summarize(rate)
            row: dict[str, Any] = {
                "precision": choice.name,
                "precision_label": choice.label,
                **summary,
                "tokens": len(tokens),
                "frames_per_utterance": summary["audio_seconds_per_utterance"] * rate / synth.audio.hop_length,
                "latencies": run.latencies.as_dict(),
            }
            rows.append(row)
            if on_row is not None:
                on_row(row)
    return add_speed_up(rows, BASELINE_PRECISION)
