"""FastPitch's training state (model, optimiser, gradient scaler and the loop's counters), how it is
built and restored, the Noam learning rate of each step, and the hash that decides whether a checkpoint
may be resumed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch

from tts_pipeline.config import FastPitchConfig, config_hash
from tts_pipeline.models.fastpitch import FastPitch
from tts_pipeline.models.fastpitch.data import PitchStats, TextSettings
from tts_pipeline.precision import Precision
from tts_pipeline.training.engine import noam_scale
from tts_pipeline.training.loop import LOOP_RESUME_NEUTRAL_KEYS
from tts_pipeline.training.model_state import ModelState
from tts_pipeline.training.optimizers import build_optimizer

# What besides the loop's settings leaves the weights' trajectory alone: plots, and what other stages
# do with the model (extraction batch, a pretrained file that replaces this stage).
RESUME_NEUTRAL_KEYS = (*LOOP_RESUME_NEUTRAL_KEYS, "n_plots", "checkpoint", "extract_batch_size")


def resume_hash(fastpitch: Mapping[str, Any], audio: Mapping[str, Any], text: TextSettings, pitch: PitchStats) -> str:
    """Hash of everything that shapes the weights' trajectory: the trajectory keys of the section, the
    audio section, the symbol table and the pitch statistics. Checkpoints of another hash are not resumed."""
    payload = {
        "fastpitch": {key: value for key, value in fastpitch.items() if key not in RESUME_NEUTRAL_KEYS},
        "audio": dict(audio),
        "text": text.as_dict(),
        "pitch": [pitch.mean, pitch.std],
    }
    return config_hash(payload)


@dataclass
class FastPitchState(ModelState):
    """:class:`~tts_pipeline.training.model_state.ModelState` of a FastPitch."""

    model: FastPitch


def build_state(
    cfg: FastPitchConfig, n_symbols: int, n_mels: int, pitch: PitchStats, precision: Precision
) -> FastPitchState:
    """A fresh model initialised from ``cfg.seed`` (the same on every rank), its optimiser and scaler."""
    torch.manual_seed(cfg.seed)
    model = FastPitch(cfg, n_symbols, n_mels, pitch_mean=pitch.mean, pitch_std=pitch.std).to(precision.device)
    optimizer = build_optimizer(model.parameters(), cfg, lr=cfg.learning_rate * noam_scale(1, cfg.warmup_steps))
    return FastPitchState(model=model, optimizer=optimizer, scaler=precision.grad_scaler())


def set_step_learning_rate(optimizer: torch.optim.Optimizer, cfg: FastPitchConfig, step: int) -> float:
    """Set the Noam rate of optimiser step ``step`` (from 1) on every parameter group; returns it.

    The rate is a function of the step alone, so a resumed run needs no scheduler state.
    """
    rate = cfg.learning_rate * noam_scale(step, cfg.warmup_steps)
    for group in optimizer.param_groups:
        group["lr"] = rate
    return rate
