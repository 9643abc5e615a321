"""What `make gpu-check` runs, in which order, under which time limits, and what it compares with.

The plan is data, so that a fast test can check it without a GPU (steps, limits, record fields) and
the rehearsal on a CPU walks exactly the same steps at tiny sizes. Standard library only: the plan is
read before the kit that brings the project's dependencies is installed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

TOTAL_LIMIT_S = 480
"""The whole check, all steps together: 8 minutes, so that a 10-minute command on a lent GPU ends
with time to spare for the record to come back, and a 15-minute loan leaves room for the start."""


@dataclass(frozen=True)
class Step:
    """One step of the check: its name in the record, its time limit and what it proves."""

    name: str
    limit_s: int
    title: str
    purpose: str


STEPS: tuple[Step, ...] = (
    Step("environment", 15, "Environment",
         "GPU, driver, CUDA, cuDNN, NCCL, torch, Python, the image's packages, commit"),
    Step("kit", 40, "Kit", "the kit's wheels installed with pip --no-index --no-deps --target; pip check; imports"),
    Step("gpu-tests", 60, "GPU tests", "pytest -m gpu: AMP training steps, GradScaler overflow, TF32, torchrun + NCCL, "
         "lease-gpus, and the stages' CUDA tests"),
    Step("train-hifigan", 60, "HiFi-GAN v1 training throughput", "one adversarial training step (generator, MPD, MSD, "
         "both optimisers) at batch 128 or the largest that fits, per precision and speed variant"),
    Step("train-fastpitch", 45, "FastPitch 1.1 training throughput", "one training step of the recipe's FastPitch at "
         "batch 128, per precision and speed variant"),
    Step("inference", 45, "Inference latency", "FastPitch + HiFi-GAN v1 on the 128-character phrase, batch 1/2/4/8, "
         "fp16 / bf16 / TF32, and CUDA graphs or torch.compile at batch 1"),
    Step("demo", 215, "Demo DAG on the GPU", "the whole demo workflow with --resources gpu=1 and config/gpu-demo.yaml; "
         "its WAVs, models and benchmark report come back for listening tests on a CPU"),
)
"""In order; each step starts whatever happened to the one before (a failed step is recorded, not fatal)."""

RECORD_FIELDS = ("mode", "command", "started", "finished", "wall_s", "commit", "device", "total_limit_s", "steps")
"""Top-level keys of the JSON record."""

STEP_FIELDS = ("name", "title", "status", "seconds", "limit_s", "rows", "notes")
"""Keys of each step's entry in the JSON record. ``status`` is one of :data:`STATUSES`."""

STATUSES = ("ok", "failed", "timed out", "skipped")


@dataclass(frozen=True)
class NvidiaFigure:
    """A published NVIDIA figure the record puts beside ours (1 x A100 80 GB unless ``setup`` says)."""

    what: str
    value: float
    unit: str
    setup: str = "1 x A100 80 GB"


NVIDIA = {
    "hifigan_tf32": NvidiaFigure("HiFi-GAN v1 training, TF32", 12_055, "frames/s (NVIDIA's unit)"),
    "hifigan_amp": NvidiaFigure("HiFi-GAN v1 training, AMP", 15_579, "frames/s (NVIDIA's unit)"),
    "fastpitch_tf32": NvidiaFigure("FastPitch 1.1 training, TF32", 113_725, "mel frames/s"),
    "fastpitch_amp": NvidiaFigure("FastPitch 1.1 training, AMP", 164_955, "mel frames/s"),
    "inference_fp16_b1": NvidiaFigure(
        "FastPitch + HiFi-GAN, FP16, batch 1", 0.019, "s", "1 x A100 80 GB, TorchScript, RTF 404"
    ),
}


@dataclass(frozen=True)
class Sizes:
    """How big each measurement is: the GPU's figures, or tiny ones for the rehearsal on a CPU."""

    device: str
    hifigan_args: tuple[str, ...]
    hifigan_batches: tuple[int, ...]
    fastpitch_args: tuple[str, ...]
    fastpitch_batches: tuple[int, ...]
    inference_args: tuple[str, ...]
    inference_batches: tuple[int, ...]
    demo_overlays: tuple[str, ...]
    demo_cores: int
    gpu_resources: int
    limit_scale: float = 1.0
    precisions: tuple[str, ...] = field(default=("fp16", "bf16", "tf32"))


GPU = Sizes(
    device="cuda",
    # Batch 128 as NVIDIA's 1 x A100 figures; halved on an out-of-memory error.
    hifigan_args=("--preset", "v1", "--warmup", "2", "--steps", "3"),
    hifigan_batches=(128, 64, 32, 16),
    fastpitch_args=("--preset", "recipe", "--warmup", "2", "--steps", "4", "--runs", "1"),
    fastpitch_batches=(128, 64, 32),
    inference_args=("--warmup", "3", "--repeats", "20", "--runs", "1"),
    inference_batches=(1, 2, 4, 8),
    demo_overlays=("config/demo.yaml", "config/gpu-demo.yaml"),
    demo_cores=16,
    gpu_resources=1,
)

REHEARSAL = Sizes(
    device="cpu",
    # The demo config's small HiFi-GAN and FastPitch: the same code paths at CPU-seconds per step.
    hifigan_args=("--config", "config/demo.yaml", "--segment-size", "2048", "--warmup", "0", "--steps", "1"),
    hifigan_batches=(2,),
    fastpitch_args=("--preset", "demo", "--warmup", "0", "--steps", "1", "--runs", "1"),
    fastpitch_batches=(2,),
    inference_args=("--warmup", "0", "--repeats", "1", "--runs", "1"),
    inference_batches=(1, 2),
    demo_overlays=("config/demo.yaml", "config/gpu-demo.yaml", "tools/gpucheck/rehearsal-demo.yaml"),
    demo_cores=2,
    gpu_resources=0,
    # Two CPU cores do in a few minutes what the GPU does in seconds: the same steps, three times the time.
    limit_scale=3.0,
    precisions=("fp32", "bf16"),
)


def sizes(rehearsal: bool) -> Sizes:
    """The GPU's sizes, or the rehearsal's."""
    return REHEARSAL if rehearsal else GPU


def check_plan() -> None:
    """Raise ValueError if the plan breaks its own rules (unique names, limits within the total)."""
    names = [step.name for step in STEPS]
    if len(set(names)) != len(names):
        raise ValueError(f"step names repeat: {names}")
    total = sum(step.limit_s for step in STEPS)
    if total > TOTAL_LIMIT_S:
        raise ValueError(f"step limits add up to {total} s, over the {TOTAL_LIMIT_S} s of the whole check")


@dataclass(frozen=True)
class Variant:
    """One measurement of a benchmark step: a ``tts-pipeline`` command line and the batches to try.

    ``batches`` are tried in order until one fits in memory; ``flag`` names the option the batch goes to.
    ``nvidia`` names the :data:`NVIDIA` figure the row is compared with, if any. ``gpu_only`` variants
    are recorded as skipped in the rehearsal: ``torch.compile`` spends minutes per model compiling on a
    CPU (its CPU path is tested by ``tests/unit/test_bench_variants.py``, marked slow), CUDA graphs need CUDA.
    """

    name: str
    argv: tuple[str, ...]
    batches: tuple[int, ...]
    flag: str
    nvidia: str | None = None
    gpu_only: bool = False


PRECISION_ARGS = {
    "fp32": ("--amp", "off", "--tf32", "off"),
    "tf32": ("--amp", "off", "--tf32", "on"),
    "fp16": ("--amp", "fp16", "--tf32", "off"),
    "bf16": ("--amp", "bf16", "--tf32", "off"),
}
"""NVIDIA's "TF32" runs are float32 with TF32 matrix units allowed; "AMP" is fp16 autocast."""


def benchmark_variants(step: str, size: Sizes) -> tuple[Variant, ...]:
    """The measurements of a benchmark step, in the order they run: plain precisions first, then the
    speed variants (the slowest to start, ``--compile``, last, so that a step cut short loses only it)."""
    device = ("--device", size.device)
    fast = size.precisions[0]  # fp16 on a GPU (NVIDIA's AMP), fp32 in the rehearsal
    if step == "train-hifigan":
        base = ("bench-hifigan", *size.hifigan_args, *device)
        rows = [
            Variant(p, (*base, *PRECISION_ARGS[p]), size.hifigan_batches, "--batch", _nvidia("hifigan", p))
            for p in size.precisions
        ]
        rows += [
            Variant(f"{fast} + fused AdamW", (*base, *PRECISION_ARGS[fast], "--fused-adamw"), size.hifigan_batches,
                    "--batch", _nvidia("hifigan", fast)),
            Variant(f"{fast} + torch.compile", (*base, *PRECISION_ARGS[fast], "--compile"), size.hifigan_batches,
                    "--batch", _nvidia("hifigan", fast), gpu_only=True),
        ]
        return tuple(rows)
    if step == "train-fastpitch":
        base = ("bench-fastpitch", *size.fastpitch_args, *device)
        rows = [
            Variant(p, (*base, *PRECISION_ARGS[p]), size.fastpitch_batches, "--batch", _nvidia("fastpitch", p))
            for p in size.precisions
        ]
        rows.append(Variant(f"{fast} + torch.compile", (*base, *PRECISION_ARGS[fast], "--compile"),
                            size.fastpitch_batches, "--batch", _nvidia("fastpitch", fast), gpu_only=True))
        return tuple(rows)
    if step == "inference":
        base = ("bench-inference", *size.inference_args, *device)
        rows = [
            Variant(f"{p} batch {b}", (*base, *PRECISION_ARGS[p]), (b,), "--batch-size",
                    "inference_fp16_b1" if (p, b) == ("fp16", 1) else None)
            for b in size.inference_batches
            for p in size.precisions
        ]
        rows.append(Variant(f"{fast} batch 1 + CUDA graph", (*base, *PRECISION_ARGS[fast], "--cuda-graph"), (1,),
                            "--batch-size", "inference_fp16_b1" if fast == "fp16" else None, gpu_only=True))
        rows.append(Variant(f"{fast} batch 1 + torch.compile", (*base, *PRECISION_ARGS[fast], "--compile"), (1,),
                            "--batch-size", "inference_fp16_b1" if fast == "fp16" else None, gpu_only=True))
        return tuple(rows)
    raise ValueError(f"no benchmark variants for step {step!r}")


def _nvidia(model: str, precision: str) -> str | None:
    """The NVIDIA figure a training row compares with: AMP for fp16, TF32 for TF32, none otherwise."""
    return {"fp16": f"{model}_amp", "tf32": f"{model}_tf32"}.get(precision)
