"""Tacotron 2's training state (model, Adam, gradient scaler, the loop's counters), how it is built and
restored, NVIDIA's annealed learning rate, and the hash that decides whether a checkpoint may be resumed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch

from tts_pipeline.config import TACOTRON2_MODEL_FIELDS, Tacotron2SectionConfig, config_hash
from tts_pipeline.models.tacotron2 import Tacotron2, Tacotron2Config
from tts_pipeline.precision import Precision
from tts_pipeline.training.loop import LOOP_RESUME_NEUTRAL_KEYS
from tts_pipeline.training.model_state import ModelState

# What besides the loop's settings leaves the weights' trajectory alone: what other stages do with the
# model (a pretrained file that replaces this stage, the extraction batch).
RESUME_NEUTRAL_KEYS = (*LOOP_RESUME_NEUTRAL_KEYS, "checkpoint", "durations_batch_size")


def resume_hash(tacotron2: Mapping[str, Any], n_mels: int, symbol_set: str) -> str:
    """Hash of what shapes the weights' trajectory: the section's trajectory keys, the mel channels and
    the symbol set. Checkpoints of another hash are not resumed."""
    payload = {
        "tacotron2": {key: value for key, value in tacotron2.items() if key not in RESUME_NEUTRAL_KEYS},
        "n_mels": n_mels,
        "symbol_set": symbol_set,
    }
    return config_hash(payload)


def model_config(cfg: Tacotron2SectionConfig, n_symbols: int, n_mels: int) -> Tacotron2Config:
    """The network's hyperparameters: the section's model fields plus the table size and mel channels."""
    values = {key: getattr(cfg, key) for key in TACOTRON2_MODEL_FIELDS}
    return Tacotron2Config(**values, n_symbols=n_symbols, n_mel_channels=n_mels)


def annealed_rate(cfg: Tacotron2SectionConfig, epoch: int) -> float:
    """The learning rate of ``epoch`` (from 1), as NVIDIA's ``adjust_learning_rate``.

    NVIDIA counts epochs from 0 and anneals once more at every ``anneal_epochs`` entry ``a`` with
    ``epoch - 1 >= a``; after ``p`` such entries the rate is ``lr x 0.1^p`` (factor 0.1) or
    ``lr x 0.1^(p // 2) x (0.3 if p is odd)`` (factor 0.3).
    """
    passed = sum(1 for anneal in cfg.anneal_epochs if epoch - 1 >= anneal)
    if cfg.anneal_factor == 0.3:
        return cfg.learning_rate * 0.1 ** (passed // 2) * (0.3 if passed % 2 else 1.0)
    return cfg.learning_rate * 0.1**passed


@dataclass
class Tacotron2State(ModelState):
    """:class:`~tts_pipeline.training.model_state.ModelState` of a Tacotron2."""

    model: Tacotron2


def build_state(cfg: Tacotron2SectionConfig, n_symbols: int, n_mels: int, precision: Precision) -> Tacotron2State:
    """A fresh model initialised from ``cfg.seed`` (the same on every rank), Adam and the scaler."""
    torch.manual_seed(cfg.seed)
    model = Tacotron2(model_config(cfg, n_symbols, n_mels)).to(precision.device)
    optimizer = torch.optim.Adam(model.parameters(), lr=annealed_rate(cfg, 1), weight_decay=cfg.weight_decay)
    return Tacotron2State(model=model, optimizer=optimizer, scaler=precision.grad_scaler())
