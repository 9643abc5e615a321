"""Benchmark one HiFi-GAN training step (generator, both discriminators, losses, both optimisers).

Builds the generator and the MPD + MSD of the ``hifigan`` section (``--preset`` swaps in jik876's
v1/v2/v3 generator, ``--discriminator-scale`` the discriminator width), runs ``--warmup`` untimed
steps and then ``--steps`` timed ones on a fixed batch of ``--batch`` random ``segment_size``-sample
clips, and prints the median step time and the throughput in mel frames per second
(``batch * segment_size / hop / step seconds``: real frames, not NVIDIA's ``batch x n_mels`` count).
A step is what training does: input mel of the real audio, generator forward, discriminator loss on
the detached output and its AdamW step, then (discriminators frozen) the generator's adversarial,
feature-matching and 45 x mel losses and its AdamW step. CUDA timings synchronise the device.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

    from tts_pipeline.config import AudioConfig, HiFiGANConfig


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", type=Path, help="pipeline YAML (hifigan and audio sections); default: defaults")
    parser.add_argument("--preset", choices=("v1", "v2", "v3"), help="jik876 generator size instead of the config's")
    parser.add_argument("--discriminator-scale", type=float, help="discriminator width scale instead of the config's")
    parser.add_argument("--batch", type=int, help="clips per step (default: hifigan.batch_size)")
    parser.add_argument("--segment-size", type=int, help="samples per clip (default: hifigan.segment_size)")
    parser.add_argument("--steps", type=int, default=5, help="timed steps (default 5)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed steps first (default 1)")
    parser.add_argument("--threads", type=int, help="torch intra-op threads (default: torch's choice)")
    parser.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write the results here")


@dataclass
class StepLosses:
    """Losses of one training step (Python floats)."""

    discriminator: float
    generator: float
    mel: float


@dataclass
class HiFiGANTrainer:
    """The networks, optimisers and mel functions one training step needs.

    Attributes:
        generator, mpd, msd: The networks (in train mode).
        optim_g: AdamW of the generator.
        optim_d: AdamW of MPD and MSD together.
        mel: Input mel function (``fmax = audio.mel_fmax``).
        loss_mel: Loss mel function (``fmax = audio.mel_fmax_loss`` or Nyquist).
    """

    generator: torch.nn.Module
    mpd: torch.nn.Module
    msd: torch.nn.Module
    optim_g: torch.optim.Optimizer
    optim_d: torch.optim.Optimizer
    mel: torch.nn.Module
    loss_mel: torch.nn.Module

    @classmethod
    def build(cls, cfg: HiFiGANConfig, audio: AudioConfig, device: str | torch.device = "cpu") -> HiFiGANTrainer:
        """Networks of ``cfg`` on ``device`` with the recipe's optimisers (lr, betas, weight decay of ``cfg``)."""
        import torch

        from tts_pipeline.audio import MelSpectrogram
        from tts_pipeline.models.hifigan import Generator, MultiPeriodDiscriminator, MultiScaleDiscriminator

        generator = Generator(cfg, audio.n_mel_channels).to(device)
        mpd = MultiPeriodDiscriminator(cfg.mpd_periods, cfg.discriminator_channels_scale).to(device)
        msd = MultiScaleDiscriminator(cfg.discriminator_channels_scale).to(device)
        options: dict[str, Any] = {"lr": cfg.learning_rate, "betas": cfg.adam_betas, "weight_decay": cfg.weight_decay}
        optim_g = torch.optim.AdamW(generator.parameters(), **options)
        optim_d = torch.optim.AdamW([*mpd.parameters(), *msd.parameters()], **options)
        return cls(generator, mpd, msd, optim_g, optim_d, MelSpectrogram(audio), MelSpectrogram.for_loss(audio))

    def step(self, audio: torch.Tensor) -> StepLosses:
        """One update of the discriminators, then of the generator, on ``audio`` ``(B, N)``."""
        import torch

        from tts_pipeline.models.hifigan import discriminator_loss, generator_losses

        real = audio.unsqueeze(1)  # (B, 1, N)
        fake = self.generator(self.mel(audio))  # (B, 1, N)

        self.optim_d.zero_grad(set_to_none=True)
        detached = fake.detach()
        loss_d = discriminator_loss(self.mpd(real), self.mpd(detached)) + discriminator_loss(
            self.msd(real), self.msd(detached)
        )
        loss_d.backward()
        self.optim_d.step()

        discriminator_params = [*self.mpd.parameters(), *self.msd.parameters()]
        for param in discriminator_params:  # no discriminator weight gradients in the generator's backward
            param.requires_grad_(False)
        try:
            self.optim_g.zero_grad(set_to_none=True)
            with torch.no_grad():  # the real activations are targets only
                real_outputs = [self.mpd(real), self.msd(real)]
                mel_real = self.loss_mel(audio)
            losses = generator_losses(
                real_outputs, [self.mpd(fake), self.msd(fake)], mel_real, self.loss_mel(fake.squeeze(1).float())
            )
            losses.total.backward()
            self.optim_g.step()
        finally:
            for param in discriminator_params:
                param.requires_grad_(True)
        return StepLosses(loss_d.item(), losses.total.item(), losses.mel.item())


def time_steps(step: Callable[[], Any], steps: int, warmup: int, synchronize: Callable[[], None]) -> list[float]:
    """Seconds of each of ``steps`` calls of ``step``, after ``warmup`` untimed calls."""
    for _ in range(warmup):
        step()
    synchronize()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        step()
        synchronize()
        times.append(time.perf_counter() - start)
    return times


def run(args: argparse.Namespace) -> None:
    import torch

    from tts_pipeline.config import HiFiGANConfig, PipelineConfig, load_config
    from tts_pipeline.models.hifigan.presets import preset

    config = load_config(args.config) if args.config is not None else PipelineConfig(experiment="bench")
    overrides: dict[str, Any] = {}
    if args.preset is not None:
        overrides.update(preset(args.preset))
    if args.discriminator_scale is not None:
        overrides["discriminator_channels_scale"] = args.discriminator_scale
    cfg = HiFiGANConfig(**{**config.hifigan.model_dump(), **overrides})
    audio_cfg = config.audio
    batch = args.batch or cfg.batch_size
    segment = args.segment_size or cfg.segment_size
    if segment % audio_cfg.hop_length:
        raise SystemExit(f"--segment-size: expected a multiple of the hop ({audio_cfg.hop_length})")
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    torch.manual_seed(args.seed)

    trainer = HiFiGANTrainer.build(cfg, audio_cfg, device)
    audio = (0.1 * torch.randn(batch, segment, generator=torch.Generator().manual_seed(args.seed))).to(device)
    synchronize = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    losses: list[StepLosses] = []
    times = time_steps(lambda: losses.append(trainer.step(audio)), max(1, args.steps), max(0, args.warmup), synchronize)

    frames = batch * segment // audio_cfg.hop_length
    median = statistics.median(times)

    def count(module: torch.nn.Module) -> int:
        return sum(p.numel() for p in module.parameters())

    result = {
        "device": str(device),
        "threads": torch.get_num_threads(),
        "batch": batch,
        "segment_size": segment,
        "preset": args.preset or "config",
        "upsample_initial_channel": cfg.upsample_initial_channel,
        "discriminator_channels_scale": cfg.discriminator_channels_scale,
        "parameters": {"generator": count(trainer.generator), "mpd": count(trainer.mpd), "msd": count(trainer.msd)},
        "step_seconds": times,
        "median_step_seconds": median,
        "mel_frames_per_second": frames / median,
        "audio_seconds_per_second": batch * segment / audio_cfg.sampling_rate / median,
        "last_losses": vars(losses[-1]),
    }
    params = result["parameters"]
    print(
        f"HiFi-GAN training step on {device} ({result['threads']} threads): generator "
        f"{params['generator']:,} params (upsample_initial_channel {cfg.upsample_initial_channel}), "
        f"MPD {params['mpd']:,} + MSD {params['msd']:,} (scale {cfg.discriminator_channels_scale:g})"
    )
    print(
        f"batch {batch} x {segment} samples ({frames} mel frames), {len(times)} timed steps after {args.warmup} warm-up"
    )
    print("step seconds: " + ", ".join(f"{t:.3f}" for t in times))
    print(
        f"median {median:.3f} s/step = {result['mel_frames_per_second']:.1f} mel frames/s "
        f"({result['audio_seconds_per_second']:.3f} s of audio per s)"
    )
    if args.json is not None:
        from tts_pipeline.files import write_json

        write_json(args.json, result)
