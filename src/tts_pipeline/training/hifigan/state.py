"""HiFi-GAN's training state (generator, discriminators, two AdamW, two gradient scalers, per-epoch
lr schedulers and the loop's counters), how it is built, saved to and restored from a checkpoint (the
counters the way every trainer does, :class:`~tts_pipeline.training.model_state.TrainingState`), and the
hash that decides whether a checkpoint may be resumed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from tts_pipeline.config import HiFiGANConfig, config_hash
from tts_pipeline.models.hifigan import Discriminators, Generator, MultiPeriodDiscriminator, MultiScaleDiscriminator
from tts_pipeline.precision import Precision
from tts_pipeline.training.checkpoint import Checkpoint
from tts_pipeline.training.loop import LOOP_RESUME_NEUTRAL_KEYS
from tts_pipeline.training.model_state import TrainingState, load_scaler

# What besides the loop's settings leaves the weights' trajectory alone: validation and samples.
RESUME_NEUTRAL_KEYS = (*LOOP_RESUME_NEUTRAL_KEYS, "validation_repeats", "samples_every_n_epochs", "n_samples")


def resume_hash(
    hifigan: Mapping[str, Any],
    audio: Mapping[str, Any],
    *,
    init_from: str | Path | None = None,
    mels_dir: str | Path | None = None,
    init_digest: str | None = None,
) -> str:
    """Hash of everything that shapes the weights' trajectory; checkpoints of another hash are not resumed.

    ``init_from`` and ``mels_dir`` are fine-tuning's start and mels; ``init_digest`` the SHA-256 of the file
    a warm start of base training begins from (another file at the same path restarts too).
    """
    trajectory = {key: value for key, value in hifigan.items() if key not in RESUME_NEUTRAL_KEYS}
    if trajectory.get("init_from") is None:
        # no warm start: the hash checkpoints made before the key existed carry, so they still resume
        trajectory.pop("init_from", None)
    payload = {
        "hifigan": trajectory,
        "audio": dict(audio),
        "init_from": str(init_from) if init_from is not None else None,
        "mels_dir": str(mels_dir) if mels_dir is not None else None,
    }
    if init_digest is not None:
        payload["init_from_sha256"] = init_digest
    return config_hash(payload)


def build_models(
    cfg: HiFiGANConfig, n_mels: int, device: torch.device, sampling_rate: int | None = None
) -> tuple[Generator, Discriminators]:
    """Fresh generator and discriminators, initialised from ``cfg.seed`` (the same on every rank);
    ``sampling_rate`` is needed with ``source: harmonic``."""
    torch.manual_seed(cfg.seed)
    generator = Generator(cfg, n_mels, sampling_rate).to(device)
    discriminators = Discriminators(
        MultiPeriodDiscriminator(cfg.mpd_periods, cfg.discriminator_channels_scale),
        MultiScaleDiscriminator(cfg.discriminator_channels_scale),
    ).to(device)
    return generator, discriminators


@dataclass
class HiFiGANState(TrainingState):
    """Generator and discriminators, one AdamW, gradient scaler and per-epoch scheduler for each, and the
    loop's counters (:class:`~tts_pipeline.training.model_state.TrainingState`)."""

    generator: Generator
    discriminators: Discriminators
    optim_g: torch.optim.AdamW
    optim_d: torch.optim.AdamW
    scaler_g: torch.amp.GradScaler
    scaler_d: torch.amp.GradScaler
    sched_g: torch.optim.lr_scheduler.ExponentialLR | None = None
    sched_d: torch.optim.lr_scheduler.ExponentialLR | None = None

    def make_schedulers(self, gamma: float) -> None:
        """(Re)create the per-epoch ExponentialLR schedulers from the optimisers' current lr."""
        self.sched_g = torch.optim.lr_scheduler.ExponentialLR(self.optim_g, gamma=gamma)
        self.sched_d = torch.optim.lr_scheduler.ExponentialLR(self.optim_d, gamma=gamma)

    def states(self) -> dict[str, Any]:
        assert self.sched_g is not None and self.sched_d is not None
        return {
            "generator": self.generator,
            "mpd": self.discriminators.mpd,
            "msd": self.discriminators.msd,
            "optim_g": self.optim_g,
            "optim_d": self.optim_d,
            "scaler_g": self.scaler_g,
            "scaler_d": self.scaler_d,
            "sched_g": self.sched_g,
            "sched_d": self.sched_d,
        }

    def extra(self) -> dict[str, Any]:
        """The counters and the generator's config (what a model file of it needs)."""
        return {**self.counters(), "generator_config": self.generator.model_config()}

    def restore(self, checkpoint: Checkpoint, *, restore_rng: bool = True) -> None:
        """Load a checkpoint of this trainer (weights, optimisers, scalers, schedulers, counters, RNG)."""
        states = checkpoint.states
        self.generator.load_state_dict(states["generator"])
        self.discriminators.mpd.load_state_dict(states["mpd"])
        self.discriminators.msd.load_state_dict(states["msd"])
        self.optim_g.load_state_dict(states["optim_g"])
        self.optim_d.load_state_dict(states["optim_d"])
        load_scaler(self.scaler_g, states.get("scaler_g"))
        load_scaler(self.scaler_d, states.get("scaler_d"))
        assert self.sched_g is not None and self.sched_d is not None
        self.sched_g.load_state_dict(states["sched_g"])
        self.sched_d.load_state_dict(states["sched_d"])
        self.restore_counters(checkpoint, restore_rng=restore_rng)


def build_state(
    cfg: HiFiGANConfig,
    n_mels: int,
    precision: Precision,
    *,
    fused_adamw: bool = False,
    sampling_rate: int | None = None,
) -> HiFiGANState:
    """Fresh models, one AdamW for G and one for MPD + MSD together, two gradient scalers, schedulers.

    ``fused_adamw`` builds both AdamW with ``fused=True`` (one kernel per step over all parameters,
    on CUDA and on the CPU); off, torch picks its default (the multi-tensor ``foreach`` loop on CUDA).
    """
    generator, discriminators = build_models(cfg, n_mels, precision.device, sampling_rate)
    options = {"lr": cfg.learning_rate, "betas": tuple(cfg.adam_betas), "weight_decay": cfg.weight_decay}
    if fused_adamw:
        options["fused"] = True
    state = HiFiGANState(
        generator=generator,
        discriminators=discriminators,
        optim_g=torch.optim.AdamW(generator.parameters(), **options),
        optim_d=torch.optim.AdamW(discriminators.parameters(), **options),
        scaler_g=precision.grad_scaler(),
        scaler_d=precision.grad_scaler(),
    )
    state.make_schedulers(cfg.lr_decay)
    return state
