"""HiFi-GAN's training state (generator, discriminators, two AdamW, two gradient scalers, per-epoch
lr schedulers and the loop's counters), how it is built, saved to and restored from a checkpoint, and
the hash that decides whether a checkpoint may be resumed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from tts_pipeline.config import HiFiGANConfig, config_hash
from tts_pipeline.models.hifigan import Discriminators, Generator, MultiPeriodDiscriminator, MultiScaleDiscriminator
from tts_pipeline.precision import Precision
from tts_pipeline.training.checkpoint import Checkpoint, CheckpointManager, restore_rng_state
from tts_pipeline.training.loop import LOOP_RESUME_NEUTRAL_KEYS

# What besides the loop's settings leaves the weights' trajectory alone: validation and samples.
RESUME_NEUTRAL_KEYS = (*LOOP_RESUME_NEUTRAL_KEYS, "validation_repeats", "samples_every_n_epochs", "n_samples")


def resume_hash(
    hifigan: Mapping[str, Any],
    audio: Mapping[str, Any],
    *,
    init_from: str | Path | None = None,
    mels_dir: str | Path | None = None,
) -> str:
    """Hash of everything that shapes the weights' trajectory; checkpoints of another hash are not resumed."""
    trajectory = {key: value for key, value in hifigan.items() if key not in RESUME_NEUTRAL_KEYS}
    payload = {
        "hifigan": trajectory,
        "audio": dict(audio),
        "init_from": str(init_from) if init_from is not None else None,
        "mels_dir": str(mels_dir) if mels_dir is not None else None,
    }
    return config_hash(payload)


def build_models(cfg: HiFiGANConfig, n_mels: int, device: torch.device) -> tuple[Generator, Discriminators]:
    """Fresh generator and discriminators, initialised from ``cfg.seed`` (the same on every rank)."""
    torch.manual_seed(cfg.seed)
    generator = Generator(cfg, n_mels).to(device)
    discriminators = Discriminators(
        MultiPeriodDiscriminator(cfg.mpd_periods, cfg.discriminator_channels_scale),
        MultiScaleDiscriminator(cfg.discriminator_channels_scale),
    ).to(device)
    return generator, discriminators


@dataclass
class HiFiGANState:
    """Everything a step changes, and what a checkpoint stores.

    Attributes:
        step: Optimiser steps done.
        epoch: Current epoch, from 1.
        batch_in_epoch: Optimiser steps of ``epoch`` already done.
        history: One dict per finished epoch (and one for the validation before training, epoch 0).
    """

    generator: Generator
    discriminators: Discriminators
    optim_g: torch.optim.AdamW
    optim_d: torch.optim.AdamW
    scaler_g: torch.amp.GradScaler
    scaler_d: torch.amp.GradScaler
    sched_g: torch.optim.lr_scheduler.ExponentialLR | None = None
    sched_d: torch.optim.lr_scheduler.ExponentialLR | None = None
    step: int = 0
    epoch: int = 1
    batch_in_epoch: int = 0
    history: list[dict[str, float]] = field(default_factory=list)

    def make_schedulers(self, gamma: float) -> None:
        """(Re)create the per-epoch ExponentialLR schedulers from the optimisers' current lr."""
        self.sched_g = torch.optim.lr_scheduler.ExponentialLR(self.optim_g, gamma=gamma)
        self.sched_d = torch.optim.lr_scheduler.ExponentialLR(self.optim_d, gamma=gamma)

    def states(self) -> dict[str, Any]:
        """Named objects for :meth:`CheckpointManager.save`."""
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


def build_state(cfg: HiFiGANConfig, n_mels: int, precision: Precision, *, fused_adamw: bool = False) -> HiFiGANState:
    """Fresh models, one AdamW for G and one for MPD + MSD together, two gradient scalers, schedulers.

    ``fused_adamw`` builds both AdamW with ``fused=True`` (one kernel per step over all parameters,
    on CUDA and on the CPU); off, torch picks its default (the multi-tensor ``foreach`` loop on CUDA).
    """
    generator, discriminators = build_models(cfg, n_mels, precision.device)
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


def restore_state(state: HiFiGANState, checkpoint: Checkpoint, *, restore_rng: bool = True) -> None:
    """Load a checkpoint of this trainer into ``state`` (weights, optimisers, scalers, schedulers, counters)."""
    states = checkpoint.states
    state.generator.load_state_dict(states["generator"])
    state.discriminators.mpd.load_state_dict(states["mpd"])
    state.discriminators.msd.load_state_dict(states["msd"])
    state.optim_g.load_state_dict(states["optim_g"])
    state.optim_d.load_state_dict(states["optim_d"])
    for name in ("scaler_g", "scaler_d"):
        if states.get(name):  # a disabled scaler saves an empty dict
            getattr(state, name).load_state_dict(states[name])
    assert state.sched_g is not None and state.sched_d is not None
    state.sched_g.load_state_dict(states["sched_g"])
    state.sched_d.load_state_dict(states["sched_d"])
    state.step = checkpoint.step
    state.epoch = checkpoint.epoch
    state.batch_in_epoch = int(checkpoint.extra.get("batch_in_epoch", 0))
    state.history = list(checkpoint.extra.get("history", []))
    if restore_rng:
        restore_rng_state(checkpoint.rng)


def save_state(
    manager: CheckpointManager, state: HiFiGANState, run_id: str | None, extra: Mapping[str, Any] | None = None
) -> Path:
    return manager.save(
        state.step,
        state.epoch,
        state.states(),
        run_id=run_id,
        extra={
            "batch_in_epoch": state.batch_in_epoch,
            "history": state.history,
            "generator_config": state.generator.model_config(),
            **(extra or {}),
        },
    )
