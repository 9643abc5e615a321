"""WaveGlow's training state (model with weight norm, Adam, gradient scaler, the loop's counters; saved
and restored as every :class:`~tts_pipeline.training.model_state.ModelState`), how it is built, and the
hash that decides whether a checkpoint may be resumed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch

from tts_pipeline.config import WaveGlowSection, config_hash
from tts_pipeline.models.waveglow import WaveGlow, WaveGlowConfig
from tts_pipeline.precision import Precision
from tts_pipeline.training.loop import LOOP_RESUME_NEUTRAL_KEYS
from tts_pipeline.training.model_state import ModelState

# Besides the loop's settings: the pretrained shortcut (it replaces training, it does not shape it).
RESUME_NEUTRAL_KEYS = (*LOOP_RESUME_NEUTRAL_KEYS, "checkpoint")


def resume_hash(waveglow: Mapping[str, Any], audio: Mapping[str, Any]) -> str:
    """Hash of everything that shapes the weights' trajectory; checkpoints of another hash are not resumed."""
    trajectory = {key: value for key, value in waveglow.items() if key not in RESUME_NEUTRAL_KEYS}
    return config_hash({"waveglow": trajectory, "audio": dict(audio)})


@dataclass
class WaveGlowState(ModelState):
    """:class:`~tts_pipeline.training.model_state.ModelState` of a WaveGlow."""

    model: WaveGlow


def build_state(cfg: WaveGlowSection, n_mels: int, precision: Precision) -> WaveGlowState:
    """A fresh WaveGlow (initialised from ``cfg.seed``, the same on every rank), Adam and a scaler."""
    torch.manual_seed(cfg.seed)
    model = WaveGlow(WaveGlowConfig.from_dict(cfg.network(n_mels))).to(precision.device)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.learning_rate, weight_decay=cfg.weight_decay)
    return WaveGlowState(model=model, optimizer=optimizer, scaler=precision.grad_scaler())
