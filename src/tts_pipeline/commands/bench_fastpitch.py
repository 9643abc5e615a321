"""Benchmark FastPitch training steps: mel frames per second and optimiser steps per second.

Model. ``--preset demo`` times the ``fastpitch`` section of ``config/demo.yaml`` (3.0 M parameters),
``--preset recipe`` the ``FastPitchConfig()`` defaults: NVIDIA's FastPitch 1.1 with energy conditioning
(about 45 M parameters). ``--config`` times the ``fastpitch`` section of another pipeline YAML instead
(its ``audio`` and ``text`` sections give the mel channels and the symbol table); the batch shapes stay
the preset's. The optimiser is the section's (LAMB for both presets), at the Noam rate of each step.

Step. One step is the trainer's own :func:`tts_pipeline.training.fastpitch.train_step` on the trainer's
state (:func:`tts_pipeline.training.fastpitch.build_state`): teacher-forced forward and loss, backward,
NaN/Inf guard, gradient clip to ``grad_clip``, optimiser update. Each step takes one micro-batch of
``--batch`` utterances; training with ``global_batch_size > batch_size`` runs several micro-batches per
optimiser step, which divides steps/s by their number and leaves frames/s nearly unchanged (only the
optimiser update is shared).

Batches. Synthetic utterances, padded by the trainer's own ``collate``: per utterance a symbol count and
a mel length drawn uniformly from the preset's ranges (:data:`SHAPES`, or ``--tokens`` / ``--frames``),
random symbol ids, durations that split the frames over the symbols at random (a Dirichlet split, so
some symbols get 0 frames as in real alignments), a log-mel of ``N(-5, 2^2)`` values, per-symbol pitch
with 30 % unvoiced symbols, and the energy target computed from that mel as the dataset does. The
ranges: demo 45-75 symbols and 220-340 frames (the demo corpus averages about 55 symbols and 280
frames); recipe 90-150 symbols and 600-850 frames, the longer half of LJSpeech (24 h over 13,100 clips
is 6.6 s or 570 frames on average, 10.1 s or 870 frames at most). Real LJSpeech batches mix short and
long clips, so they carry more padding than these, and their frames/s is lower at the same padded length.
Everything is drawn from ``--seed``; every run uses the same sequence of batches.

Procedure. ``--runs`` runs on one model, each of ``--warmup`` untimed steps then ``--steps`` timed
ones, every step timed with the device synchronised. Throughput counts what the trainer counts: real
mel frames (padding excluded) over the timed steps, divided by their time. Printed per run: the step
times, mel frames/s and steps/s; then the medians over the runs.

Speed variants. ``--amp`` overrides the section's precision; ``--tf32 on`` lets float32 matrix products
and convolutions run in TF32 (:func:`tts_pipeline.precision.allow_tf32`; ``off``, the default, forbids
both, so ``--amp off --tf32 on`` is NVIDIA's "TF32"); ``--compile`` runs the model through
``torch.compile(dynamic=True)`` (every batch has other lengths). The optimiser stays LAMB (no fused
kernel). Even with ``dynamic=True`` the FFT layers' graph (after its break at ``padding_mask``) is
recompiled for each new sequence length (torch 2.13 specialises the length while compiling the
backward), so the first run compiles in its timed steps too, and dynamo runs that graph eagerly once
it holds ``torch._dynamo.config.recompile_limit`` (8) lengths, encoder's and decoder's together. Every
run replays the same batches, so from the second run on the steps run compiled: with ``--compile``
give ``--runs 3`` or more (the median is then a compiled run) and at most 4 batches per run
(``--warmup`` + ``--steps``). The warm-up steps' seconds are in the JSON apart from the timed ones.
"""

from __future__ import annotations

import argparse
import statistics
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    import numpy as np
    import torch

    from tts_pipeline.config import PipelineConfig
    from tts_pipeline.models.fastpitch.data import FastPitchBatch, FastPitchItem
    from tts_pipeline.training.fastpitch import FastPitchState, Runtime

PRESETS = ("demo", "recipe")
DEMO_CONFIG = Path("config/demo.yaml")
# The model keeps pitch statistics in buffers only; LJSpeech's (reference 3.5) stand in for a corpus's.
PITCH_MEAN_HZ, PITCH_STD_HZ = 214.72203, 65.72038
UNVOICED_FRACTION = 0.3
LOG_MEL_MEAN, LOG_MEL_STD = -5.0, 2.0
OPTIMIZER_NAMES = {"lamb": "LAMB", "adam": "AdamW"}  # what training.optimizers builds for each


class BatchShape(NamedTuple):
    """Inclusive ranges each synthetic utterance's symbol count and mel length are drawn from."""

    tokens: tuple[int, int]
    frames: tuple[int, int]


SHAPES = {
    "demo": BatchShape(tokens=(45, 75), frames=(220, 340)),
    "recipe": BatchShape(tokens=(90, 150), frames=(600, 850)),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from tts_pipeline.precision import AMP_SETTINGS, add_tf32_argument

    parser.add_argument(
        "--preset", choices=PRESETS, default="demo",
        help="demo: fastpitch section of config/demo.yaml, demo-corpus shapes; recipe: FastPitch 1.1 "
        "(FastPitchConfig() defaults), LJSpeech-like shapes (default demo)",
    )  # fmt: skip
    parser.add_argument("--config", type=Path, help="pipeline YAML whose fastpitch section is timed instead")
    parser.add_argument("--batch", type=int, help="utterances per step (default: fastpitch.batch_size)")
    parser.add_argument("--tokens", type=int, nargs=2, metavar=("MIN", "MAX"), help="symbols per utterance")
    parser.add_argument("--frames", type=int, nargs=2, metavar=("MIN", "MAX"), help="mel frames per utterance")
    parser.add_argument("--steps", type=int, default=5, help="timed steps per run (default 5)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed steps per run first (default 1)")
    parser.add_argument("--runs", type=int, default=3, help="runs; medians over them are printed (default 3)")
    parser.add_argument("--threads", type=int, default=2, help="torch intra-op threads (default 2)")
    parser.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    parser.add_argument("--seed", type=int, default=0, help="seed of the synthetic batches")
    parser.add_argument("--json", type=Path, help="also write every run's figures here")
    parser.add_argument("--amp", choices=AMP_SETTINGS, help="precision of the step (default: the fastpitch section's)")
    add_tf32_argument(parser)
    parser.add_argument("--compile", action="store_true", help="torch.compile the model (dynamic=True)")


# --------------------------------------------------------------------------------------------------
# synthetic batches
# --------------------------------------------------------------------------------------------------


def synthetic_item(
    rng: np.random.Generator, name: str, n_tokens: int, n_frames: int, n_symbols: int, n_mels: int, energy: bool
) -> FastPitchItem:
    """One utterance with every input and target a real one has (module docstring), ``(n_mels, n_frames)`` mel."""
    import numpy as np
    import torch

    from tts_pipeline.models.fastpitch.data import FastPitchItem, PitchStats, token_energy

    durations = rng.multinomial(n_frames, rng.dirichlet(np.full(n_tokens, 2.0))).astype(np.int64)
    mel = rng.normal(LOG_MEL_MEAN, LOG_MEL_STD, size=(n_mels, n_frames)).astype(np.float32)
    voiced = rng.random(n_tokens) >= UNVOICED_FRACTION
    pitch_hz = np.where(voiced, np.maximum(rng.normal(PITCH_MEAN_HZ, PITCH_STD_HZ, n_tokens), 60.0), 0.0)
    stats = PitchStats(PITCH_MEAN_HZ, PITCH_STD_HZ)
    return FastPitchItem(
        id=name,
        tokens=torch.from_numpy(rng.integers(1, n_symbols, size=n_tokens, dtype=np.int64)),
        durations=torch.from_numpy(durations),
        pitch=torch.from_numpy(stats.normalise(pitch_hz)),
        energy=torch.from_numpy(token_energy(mel, durations)) if energy else None,
        mel=torch.from_numpy(mel),
    )


def synthetic_batches(
    count: int, batch: int, shape: BatchShape, *, n_symbols: int, n_mels: int, energy: bool, seed: int
) -> list[FastPitchBatch]:
    """``count`` padded batches of ``batch`` utterances of ``shape``, drawn from ``seed``."""
    import numpy as np

    from tts_pipeline.models.fastpitch.data import collate

    rng = np.random.default_rng(seed)
    batches = []
    for index in range(count):
        items = []
        for row in range(batch):
            n_tokens = int(rng.integers(shape.tokens[0], shape.tokens[1] + 1))
            n_frames = int(rng.integers(shape.frames[0], shape.frames[1] + 1))
            items.append(synthetic_item(rng, f"synthetic_{index}_{row}", n_tokens, n_frames, n_symbols, n_mels, energy))
        batches.append(collate(items))
    return batches


# --------------------------------------------------------------------------------------------------
# timing
# --------------------------------------------------------------------------------------------------


@dataclass
class RunFigures:
    """One run's timed steps.

    Attributes:
        warmup_seconds: Seconds of each warm-up step (with ``--compile``, the compilation).
        step_seconds: Seconds of each timed step.
        frames: Real mel frames of the timed steps together.
        frames_per_s: ``frames / sum(step_seconds)``.
        steps_per_s: ``len(step_seconds) / sum(step_seconds)``.
        loss: Total loss of the last step.
    """

    warmup_seconds: list[float]
    step_seconds: list[float]
    frames: int
    frames_per_s: float
    steps_per_s: float
    loss: float


def optimiser_step(state: FastPitchState, runtime: Runtime, batch: FastPitchBatch) -> dict[str, float]:
    """The trainer's step on one micro-batch, then the step counter moved on as the epoch loop does."""
    from tts_pipeline.training.fastpitch import train_step

    figures = train_step(state, runtime, [batch], checkpoints=[])
    state.step += 1
    return figures


def time_run(
    state: FastPitchState, runtime: Runtime, batches: list[FastPitchBatch], warmup: int, device: torch.device
) -> RunFigures:
    """``warmup`` warm-up steps on the first batches (timed apart), then one timed step on each remaining batch."""
    from tts_pipeline.timers import timed

    warmup_seconds = [
        timed(lambda batch=batch: optimiser_step(state, runtime, batch), device=device).seconds
        for batch in batches[:warmup]
    ]
    seconds: list[float] = []
    frames = 0
    figures: dict[str, float] = {}
    for batch in batches[warmup:]:
        result = timed(lambda batch=batch: optimiser_step(state, runtime, batch), device=device)
        figures = result.value
        seconds.append(result.seconds)
        frames += batch.frames
    total = sum(seconds)
    return RunFigures(warmup_seconds, seconds, frames, frames / total, len(seconds) / total, figures["loss"])


# --------------------------------------------------------------------------------------------------
# the command
# --------------------------------------------------------------------------------------------------


def pipeline_config(args: argparse.Namespace) -> PipelineConfig:
    """The config whose sections are timed: ``--config``, else the preset's (module docstring)."""
    from tts_pipeline.config import PipelineConfig, load_config
    from tts_pipeline.errors import UserError

    if args.config is not None:
        return load_config(args.config)
    if args.preset == "recipe":
        return PipelineConfig(experiment="bench")
    if not DEMO_CONFIG.exists():
        raise UserError(f"--preset demo reads {DEMO_CONFIG}: run from the repository or pass --config")
    return load_config(DEMO_CONFIG)


def batch_shape(args: argparse.Namespace) -> BatchShape:
    """The preset's ranges with ``--tokens`` / ``--frames`` applied; raises UserError on an empty range."""
    from tts_pipeline.errors import UserError

    preset = SHAPES[args.preset]
    shape = BatchShape(
        tokens=tuple(args.tokens) if args.tokens else preset.tokens,  # type: ignore[arg-type]
        frames=tuple(args.frames) if args.frames else preset.frames,  # type: ignore[arg-type]
    )
    for option, (low, high) in (("--tokens", shape.tokens), ("--frames", shape.frames)):
        if not 1 <= low <= high:
            raise UserError(f"{option}: expected 1 <= MIN <= MAX, got {low} {high}")
    if shape.frames[0] < shape.tokens[1]:
        # Not required by the model (symbols may get 0 frames), but then most symbols would be silent.
        raise UserError(f"--frames MIN ({shape.frames[0]}) is below --tokens MAX ({shape.tokens[1]})")
    return shape


def run(args: argparse.Namespace) -> None:
    from tts_pipeline.precision import tf32_allowed

    with tf32_allowed(args.tf32 == "on"):  # process-wide: restored for whatever runs next in this process
        _run(args)


def _run(args: argparse.Namespace) -> None:
    import torch

    from tts_pipeline.benchmark.environment import command_environment
    from tts_pipeline.errors import UserError
    from tts_pipeline.models.fastpitch.data import PitchStats
    from tts_pipeline.precision import resolve_precision
    from tts_pipeline.text import get_symbols
    from tts_pipeline.training.distributed import DistributedContext
    from tts_pipeline.training.fastpitch import Runtime, build_state

    if min(args.threads, args.steps, args.runs) < 1 or args.warmup < 0 or (args.batch is not None and args.batch < 1):
        raise UserError("--threads, --steps, --runs and --batch must be >= 1, --warmup >= 0")
    config = pipeline_config(args)
    cfg = config.fastpitch
    shape = batch_shape(args)
    batch = args.batch or cfg.batch_size
    n_symbols = len(get_symbols(config.text.symbol_set))
    n_mels = config.audio.n_mel_channels
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)

    amp, key = (args.amp, "--amp") if args.amp else (cfg.amp, "fastpitch.amp")
    precision = resolve_precision(amp, device, key=key)
    state = build_state(cfg, n_symbols, n_mels, PitchStats(PITCH_MEAN_HZ, PITCH_STD_HZ), precision)
    state.model.train()
    if args.compile:  # in place: the step calls the model through runtime.model, the optimiser holds its parameters
        state.model.compile(dynamic=True)
    runtime = Runtime(DistributedContext(device=device), precision, state.model, cfg, accumulation=1)
    batches = [
        b.to(device)
        for b in synthetic_batches(
            args.warmup + args.steps, batch, shape, n_symbols=n_symbols, n_mels=n_mels,
            energy=cfg.energy_conditioning, seed=args.seed,
        )
    ]  # fmt: skip
    padded = sum(b.size * int(b.mels.shape[-1]) for b in batches[args.warmup :])
    real = sum(b.frames for b in batches[args.warmup :])
    n_params = sum(p.numel() for p in state.model.parameters())
    source = str(args.config) if args.config is not None else args.preset
    print(
        f"FastPitch training step on {device} ({torch.get_num_threads()} threads): {source} fastpitch section, "
        f"{n_params:,} params, energy conditioning {'on' if cfg.energy_conditioning else 'off'}, "
        f"{OPTIMIZER_NAMES.get(cfg.optimizer, cfg.optimizer)}, {precision.label}, TF32 {args.tf32}, "
        f"torch.compile {'on' if args.compile else 'off'}"
    )
    print(
        f"batch {batch} utterances of {shape.tokens[0]}-{shape.tokens[1]} symbols and {shape.frames[0]}-"
        f"{shape.frames[1]} mel frames (seed {args.seed}): {real} real of {padded} padded frames in the timed "
        f"steps; {args.runs} runs of {args.warmup} warm-up + {args.steps} timed steps"
    )
    runs: list[RunFigures] = []
    for number in range(1, args.runs + 1):
        figures = time_run(state, runtime, batches, args.warmup, device)
        runs.append(figures)
        print(
            f"run {number}: step seconds " + ", ".join(f"{t:.3f}" for t in figures.step_seconds)
            + f"; {figures.frames_per_s:.1f} mel frames/s, {figures.steps_per_s:.3f} steps/s (loss {figures.loss:.3f})"
        )  # fmt: skip
    frames_per_s = statistics.median(r.frames_per_s for r in runs)
    steps_per_s = statistics.median(r.steps_per_s for r in runs)
    print(f"median of {args.runs} runs: {frames_per_s:.1f} mel frames/s, {steps_per_s:.3f} steps/s")
    if args.json is not None:
        from tts_pipeline.files import write_json

        payload: dict[str, Any] = {
            **command_environment(device, precision.label, args.tf32),
            "compile": args.compile,
            "source": source,
            "preset": args.preset,
            "n_params": n_params,
            "optimizer": cfg.optimizer,
            "batch": batch,
            "tokens": list(shape.tokens),
            "frames": list(shape.frames),
            "seed": args.seed,
            "warmup": args.warmup,
            "real_frames": real,
            "padded_frames": padded,
            "runs": [asdict(r) for r in runs],
            "median_frames_per_s": frames_per_s,
            "median_steps_per_s": steps_per_s,
        }
        write_json(args.json, payload)
