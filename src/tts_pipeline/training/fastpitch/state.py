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
from tts_pipeline.models.fastpitch.data import PitchStats, Speakers, TextSettings
from tts_pipeline.precision import Precision
from tts_pipeline.training.engine import noam_scale
from tts_pipeline.training.loop import LOOP_RESUME_NEUTRAL_KEYS
from tts_pipeline.training.model_state import ModelState
from tts_pipeline.training.optimizers import build_optimizer
from tts_pipeline.training.warm_start import freeze, trainable

# What besides the loop's settings leaves the weights' trajectory alone: plots, and what other stages
# do with the model (extraction batch, a pretrained file that replaces this stage).
RESUME_NEUTRAL_KEYS = (*LOOP_RESUME_NEUTRAL_KEYS, "n_plots", "checkpoint", "extract_batch_size")


# The warm-start keys at their defaults (no warm start): left out of the hash, so that checkpoints made
# before these keys existed still resume.
WARM_START_DEFAULTS: dict[str, Any] = {"init_from": None, "freeze": []}


def resume_hash(
    fastpitch: Mapping[str, Any],
    audio: Mapping[str, Any],
    text: TextSettings,
    pitch: PitchStats,
    *,
    init_digest: str | None = None,
    speakers: Speakers | None = None,
) -> str:
    """Hash of everything that shapes the weights' trajectory: the trajectory keys of the section, the
    audio section, the symbol table, the pitch statistics, the speakers with theirs (only when there are
    speakers, so a single-speaker checkpoint made before speakers existed still resumes) and, for a warm
    start, the SHA-256 of the file it starts from (``init_digest``: another file at the same path
    restarts too). Checkpoints of another hash are not resumed."""
    trajectory = {key: value for key, value in fastpitch.items() if key not in RESUME_NEUTRAL_KEYS}
    for key, default in WARM_START_DEFAULTS.items():
        if trajectory.get(key, default) == default:
            trajectory.pop(key, None)
    payload = {
        "fastpitch": trajectory,
        "audio": dict(audio),
        "text": text.as_dict(),
        "pitch": [pitch.mean, pitch.std],
    }
    if init_digest is not None:
        payload["init_from_sha256"] = init_digest
    if speakers is not None:
        payload["speakers"] = speakers.as_list()
    return config_hash(payload)


@dataclass
class FastPitchState(ModelState):
    """:class:`~tts_pipeline.training.model_state.ModelState` of a FastPitch."""

    model: FastPitch


def build_state(
    cfg: FastPitchConfig, n_symbols: int, n_mels: int, pitch: PitchStats, precision: Precision
) -> FastPitchState:
    """A fresh model initialised from ``cfg.seed`` (the same on every rank), its optimiser and scaler.

    The parameters under ``cfg.freeze`` are frozen first (``requires_grad`` off), so the optimiser
    leaves them out; a prefix that matches no parameter is a UserError naming ``fastpitch.freeze``.
    """
    torch.manual_seed(cfg.seed)
    model = FastPitch(cfg, n_symbols, n_mels, pitch_mean=pitch.mean, pitch_std=pitch.std).to(precision.device)
    freeze(model, cfg.freeze, "fastpitch.freeze")
    optimizer = build_optimizer(trainable(model), cfg, lr=cfg.learning_rate * noam_scale(1, cfg.warmup_steps))
    return FastPitchState(model=model, optimizer=optimizer, scaler=precision.grad_scaler())


def set_step_learning_rate(optimizer: torch.optim.Optimizer, cfg: FastPitchConfig, step: int) -> float:
    """Set the Noam rate of optimiser step ``step`` (from 1) on every parameter group; returns it.

    The rate is a function of the step alone, so a resumed run needs no scheduler state.
    """
    rate = cfg.learning_rate * noam_scale(step, cfg.warmup_steps)
    for group in optimizer.param_groups:
        group["lr"] = rate
    return rate
