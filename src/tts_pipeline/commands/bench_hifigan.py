"""Benchmark one HiFi-GAN training step (generator, both discriminators, losses, both optimisers).

Builds the generator and the MPD + MSD of the ``hifigan`` section (``--preset`` swaps in jik876's
v1/v2/v3 generator, ``--discriminator-scale`` the discriminator width), runs ``--warmup`` untimed
steps and then ``--rounds`` rounds of ``--steps`` timed ones on a fixed batch of ``--batch`` random
``segment_size``-sample clips, and prints the median step time and the throughput in mel frames per
second (``batch * segment_size / hop / step seconds``: real frames, not NVIDIA's ``batch x n_mels``
count). The step is the trainer's own (:func:`tts_pipeline.training.hifigan.step.train_step`, see
:mod:`tts_pipeline.commands.hifigan_training_sides`), adversarial, in the precision of ``--amp`` (default:
the section's ``amp``) resolved as training resolves it. CUDA timings synchronise the device.

Against NVIDIA's code. ``--nvidia-root PATH`` (a DeepLearningExamples checkout, or its
``PyTorch/SpeechSynthesis/FastPitch`` folder) also builds NVIDIA's generator, MPD and MSD with the same
initial weights, their losses, mel function and AdamW, and times their ``train.py`` step in fp32 on
the same batch (default 2 x 8192 samples), interleaved with ours round by round; it prints both
medians, the ratio NVIDIA time / ours and, as a check that both start from the same function, the
fp32 max abs differences of the input mel, the generator output and the discriminator scores.
For example::

    tts-pipeline bench-hifigan --nvidia-root ~/DeepLearningExamples --amp bf16 --rounds 3 --steps 2

Speed variants of our step. ``--tf32 on`` lets float32 matrix products and convolutions run in TF32
(:func:`tts_pipeline.precision.allow_tf32`; ``off``, the default, forbids both, so ``--amp off --tf32
on`` is NVIDIA's "TF32" and ``--amp off --tf32 off`` their "FP32"); ``--fused-adamw`` builds both AdamW
with ``fused=True`` through the trainer's :func:`~tts_pipeline.training.hifigan.state.build_state`;
``--compile`` runs the generator, MPD and MSD through ``torch.compile`` (default mode, in place, so the
trainer's step calls the compiled modules). Compilation happens in the warm-up steps, whose seconds the
JSON keeps apart from the timed ones: the first step compiles every graph a step needs (the
discriminators on the real + generated batch, then on the generated one with and without gradients);
give ``--compile`` two or three warm-up steps, so that any late recompilation shows there too.
``--spectral`` times the generator-alone step of the warm-up before ``discriminator_start_step`` (mel L1,
STFT and pitch-head losses, no discriminator) instead of the adversarial one. ``--plain-layout-beside``
also times our step with the generator's resblock convs in the plain ``(B, C, L)`` layout instead of
channels-last rows on a CPU (:mod:`tts_pipeline.models.conv_rows`), same initial weights, interleaved
round by round, and prints the ratio: the check of that choice on another CPU.
Throughput is also given in NVIDIA's unit (:func:`tts_pipeline.training.engine.nvidia_frames_per_s`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tts_pipeline.config import HiFiGANConfig, PipelineConfig


NVIDIA_BATCH = 2
"""Clips per step of the NVIDIA comparison unless ``--batch`` says otherwise (two full steps of both
sides per round stay under a minute on two CPU cores)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from tts_pipeline.precision import AMP_SETTINGS, add_tf32_argument

    parser.add_argument("--config", type=Path, help="pipeline YAML (hifigan and audio sections); default: defaults")
    parser.add_argument("--preset", choices=("v1", "v2", "v3"), help="jik876 generator size instead of the config's")
    parser.add_argument("--discriminator-scale", type=float, help="discriminator width scale instead of the config's")
    parser.add_argument("--batch", type=int, help="clips per step (default: hifigan.batch_size; 2 with --nvidia-root)")
    parser.add_argument("--segment-size", type=int, help="samples per clip (default: hifigan.segment_size)")
    parser.add_argument("--steps", type=int, default=5, help="timed steps per round (default 5)")
    parser.add_argument("--rounds", type=int, default=1, help="rounds, interleaved with NVIDIA's (default 1)")
    parser.add_argument(
        "--amp", choices=AMP_SETTINGS, help="precision of our step (default: the hifigan section's amp)"
    )
    parser.add_argument(
        "--nvidia-root", type=Path, help="DeepLearningExamples checkout: time NVIDIA's training step beside ours"
    )
    parser.add_argument(
        "--warmup", type=int, default=1, help="warm-up steps, timed apart (default 1; 2-3 with --compile)"
    )
    parser.add_argument("--threads", type=int, help="torch intra-op threads (default: torch's choice)")
    parser.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write the results here")
    add_tf32_argument(parser)
    parser.add_argument("--fused-adamw", action="store_true", help="both AdamW with fused=True")
    parser.add_argument("--compile", action="store_true", help="torch.compile the generator, MPD and MSD")
    parser.add_argument(
        "--spectral",
        action="store_true",
        help="time the generator-alone step of the warm-up (before discriminator_start_step) instead",
    )
    parser.add_argument(
        "--plain-layout-beside",
        action="store_true",
        help="also time our step with the generator's convs in the plain (B, C, L) layout, interleaved",
    )


def hifigan_config(args: argparse.Namespace) -> tuple[PipelineConfig, HiFiGANConfig]:
    """The pipeline config and its ``hifigan`` section with the command line's overrides."""
    from tts_pipeline.config import HiFiGANConfig, PipelineConfig, load_config
    from tts_pipeline.models.hifigan.presets import preset

    config = load_config(args.config) if args.config is not None else PipelineConfig(experiment="bench")
    overrides: dict[str, Any] = {"seed": args.seed}
    if args.preset is not None:
        overrides.update(preset(args.preset))
    if args.discriminator_scale is not None:
        overrides["discriminator_channels_scale"] = args.discriminator_scale
    return config, HiFiGANConfig(**{**config.hifigan.model_dump(), **overrides})


def check_arguments(args: argparse.Namespace, cfg: HiFiGANConfig, hop: int) -> tuple[int, int]:
    """``(batch, segment_size)`` of the run; UserError naming the option that is out of range, or
    that NVIDIA's networks cannot follow."""
    from tts_pipeline.errors import UserError

    if min(args.steps, args.rounds) < 1 or args.warmup < 0:
        raise UserError("--steps and --rounds must be >= 1, --warmup >= 0")
    batch = args.batch or (NVIDIA_BATCH if args.nvidia_root is not None else cfg.batch_size)
    segment = args.segment_size or cfg.segment_size
    if batch < 1:
        raise UserError(f"--batch: expected >= 1, got {batch}")
    if segment < 1 or segment % hop:
        raise UserError(f"--segment-size: expected a positive multiple of the hop ({hop}), got {segment}")
    if args.nvidia_root is not None:
        if args.spectral:
            raise UserError("--spectral: NVIDIA's train.py has no generator-alone warm-up; drop --nvidia-root")
        if cfg.discriminator_channels_scale != 1.0:
            raise UserError(
                f"--discriminator-scale / hifigan.discriminator_channels_scale {cfg.discriminator_channels_scale:g}: "
                "NVIDIA's discriminators have the paper's widths only; expected 1 with --nvidia-root"
            )
        if cfg.stft_loss_scale != 0.0:
            raise UserError(
                f"hifigan.stft_loss_scale {cfg.stft_loss_scale:g}: NVIDIA's objective has no STFT loss; "
                "expected 0 with --nvidia-root"
            )
    return batch, segment


def run(args: argparse.Namespace) -> None:
    from tts_pipeline.precision import tf32_allowed

    with tf32_allowed(args.tf32 == "on"):  # process-wide: restored for whatever runs next in this process
        _run(args)


def _run(args: argparse.Namespace) -> None:
    import time

    import torch

    from tts_pipeline.benchmark.environment import command_environment
    from tts_pipeline.benchmark.side_by_side import interleaved
    from tts_pipeline.commands.hifigan_training_sides import NvidiaTraining, OurTraining, fp32_differences
    from tts_pipeline.precision import resolve_precision
    from tts_pipeline.training.engine import nvidia_frames_per_s

    config, cfg = hifigan_config(args)
    audio_cfg = config.audio
    batch, segment = check_arguments(args, cfg, audio_cfg.hop_length)
    code = None
    if args.nvidia_root is not None:  # a wrong path fails before any model is built
        from tts_pipeline.benchmark.nvidia_code import load_nvidia_code

        code = load_nvidia_code(args.nvidia_root)
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    precision = resolve_precision(args.amp or cfg.amp, device, key="--amp")
    ours = OurTraining.build(cfg, audio_cfg, precision, fused_adamw=args.fused_adamw)
    audio = (0.1 * torch.randn(batch, segment, generator=torch.Generator().manual_seed(args.seed))).to(device)
    adversarial = not args.spectral
    calls = {"ours": lambda: losses["ours"].append(ours.step(audio, adversarial=adversarial))}
    losses: dict[str, list[dict[str, float]]] = {"ours": []}
    ours_sides = [ours]
    if args.plain_layout_beside:
        # The same seed, so the same initial weights; only the generator's conv layout differs.
        plain = OurTraining.build(cfg, audio_cfg, precision, fused_adamw=args.fused_adamw)
        plain.state.generator.cpu_rows = False
        calls["plain"] = lambda: losses["plain"].append(plain.step(audio, adversarial=adversarial))
        losses["plain"] = []
        ours_sides.append(plain)
    differences = None
    if code is not None:
        theirs = NvidiaTraining.twin_of(code, ours, cfg, audio_cfg)
        differences = fp32_differences(ours, theirs, audio)  # plain calls, no autocast: fp32 on both sides
        calls["nvidia"] = lambda: losses["nvidia"].append(theirs.step(audio))
        losses["nvidia"] = []
    if args.compile:  # after the fp32 check, which then runs eager and compiles nothing
        for side in ours_sides:
            for module in (side.state.generator, side.state.discriminators.mpd, side.state.discriminators.msd):
                module.compile()
    frames = batch * segment // audio_cfg.hop_length
    audio_seconds = batch * segment / audio_cfg.sampling_rate

    def count(module: torch.nn.Module) -> int:
        return sum(p.numel() for p in module.parameters())

    discriminators = ours.state.discriminators
    params = {
        "generator": count(ours.state.generator),
        "mpd": count(discriminators.mpd),
        "msd": count(discriminators.msd),
    }
    print(
        f"HiFi-GAN training step on {device} ({torch.get_num_threads()} threads), ours in {precision.label} "
        f"({precision.reason}): generator {params['generator']:,} params (upsample_initial_channel "
        f"{cfg.upsample_initial_channel}), MPD {params['mpd']:,} + MSD {params['msd']:,} "
        f"(scale {cfg.discriminator_channels_scale:g})"
    )
    print(
        f"batch {batch} x {segment} samples ({frames} mel frames), {args.rounds} rounds x {args.steps} timed steps "
        f"per side after {args.warmup} warm-up; TF32 {args.tf32}, fused AdamW {'on' if args.fused_adamw else 'off'}, "
        f"torch.compile {'on' if args.compile else 'off'}; "
        + ("generator-alone (spectral) steps" if args.spectral else "adversarial steps")
    )
    if differences is not None:  # before timing: a wrong twin shows at once
        print(
            "fp32 max abs diff, ours vs NVIDIA at the start: "
            + ", ".join(f"{k} {v:.3g}" for k, v in differences.items())
        )
    synchronize = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)

    def seconds_of(call: Any) -> float:
        synchronize()
        start = time.perf_counter()
        call()
        synchronize()
        return time.perf_counter() - start

    # Warm-up timed apart: with --compile its steps carry the compilation, which the timed steps must not.
    warmup_seconds = {side: [seconds_of(call) for _ in range(args.warmup)] for side, call in calls.items()}
    if args.warmup:
        print(
            "warm-up step seconds: "
            + "; ".join(f"{side} " + ", ".join(f"{t:.3f}" for t in times) for side, times in warmup_seconds.items())
        )
    timing = interleaved(calls, rounds=args.rounds, repeats=args.steps, warmup=0, synchronize=synchronize)

    result: dict[str, Any] = {
        **command_environment(device, precision.label, args.tf32),
        "fused_adamw": args.fused_adamw,
        "compile": args.compile,
        "step": "spectral" if args.spectral else "adversarial",
        "generator_cpu_layout": "rows" if ours.state.generator.cpu_rows else "plain",
        "batch": batch,
        "segment_size": segment,
        "preset": args.preset or "config",
        "upsample_initial_channel": cfg.upsample_initial_channel,
        "discriminator_channels_scale": cfg.discriminator_channels_scale,
        "parameters": params,
        "fp32_max_abs_diff": differences,
    }
    for side in calls:
        median = timing.median(side)
        nvidia_units = nvidia_frames_per_s(frames / median, audio_cfg.n_mel_channels, segment // audio_cfg.hop_length)
        name = {
            "ours": f"ours ({precision.label})",
            "plain": f"ours ({precision.label}), generator convs in the plain layout",
            "nvidia": "NVIDIA (fp32)",
        }[side]
        print(
            f"{name}: median {median:.3f} s/step = {frames / median:.1f} mel frames/s "
            f"({nvidia_units:.1f} in NVIDIA's unit, {audio_seconds / median:.3f} s of audio per s); round medians "
            + ", ".join(f"{t:.3f}" for t in timing.round_medians(side))
            + "; last losses "
            + ", ".join(
                f"{k} {v:.3f}" for k, v in losses[side][-1].items() if k in ("loss_discrim", "loss_gen", "loss_mel")
            )
        )
        result[side] = {
            "warmup_step_seconds": warmup_seconds[side],
            "step_seconds": timing.seconds[side],
            "median_step_seconds": median,
            "frames_per_s": frames / median,  # real mel frames, beside NVIDIA's unit as in the trainer's metrics.json
            "frames_per_s_nvidia_units": nvidia_units,
            "audio_seconds_per_second": audio_seconds / median,
            "last_losses": losses[side][-1],
        }
    if "plain" in calls:
        result["ratio_plain_over_ours"] = timing.ratio("plain", "ours")
        print(f"ratio plain layout time / ours: {result['ratio_plain_over_ours']:.2f}x")
    if "nvidia" in calls:
        result["ratio_nvidia_over_ours"] = timing.ratio("nvidia", "ours")
        print(f"ratio NVIDIA time / ours: {result['ratio_nvidia_over_ours']:.2f}x")
    if args.json is not None:
        from tts_pipeline.files import write_json

        write_json(args.json, result)
