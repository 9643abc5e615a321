"""Tacotron 2's training state (model, Adam, gradient scaler, the loop's counters), how it is built and
restored, NVIDIA's annealed learning rate, the guided-attention weight's schedule, and the hash that
decides whether a checkpoint may be resumed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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


def model_config(
    cfg: Tacotron2SectionConfig, n_symbols: int, n_mels: int, frames_per_symbol: float = 0.0
) -> Tacotron2Config:
    """The network's hyperparameters: the section's model fields plus the table size and mel channels,
    and the attention prior's settings. ``frames_per_symbol`` (the training set's mean) becomes the
    expected length of the free-running prior when ``attention_prior_at_inference`` asks for one."""
    values = {key: getattr(cfg, key) for key in TACOTRON2_MODEL_FIELDS}
    at_inference = cfg.attention_prior_scaling > 0 and cfg.attention_prior_at_inference
    if at_inference and not frames_per_symbol > 0:
        raise ValueError(f"attention_prior_at_inference needs the frames per symbol (> 0), got {frames_per_symbol}")
    return Tacotron2Config(
        **values,
        n_symbols=n_symbols,
        n_mel_channels=n_mels,
        attention_prior_scaling=cfg.attention_prior_scaling,
        attention_prior_frames_per_symbol=float(frames_per_symbol) if at_inference else 0.0,
    )


def mean_frames_per_symbol(texts: Sequence[Sequence[int]], mel_lengths: Sequence[int]) -> float:
    """Mel frames per symbol over a corpus (``sum T / sum L``), the pace the free-running prior expects."""
    symbols = sum(len(text) for text in texts)
    if symbols < 1:
        raise ValueError("mean_frames_per_symbol: no symbols")
    return float(sum(mel_lengths)) / symbols


def attention_prior_weight(cfg: Tacotron2SectionConfig, epoch: int) -> float:
    """The alignment prior's weight in ``epoch`` (from 1): 1 for the first ``attention_prior_epochs``
    (all when None), then falling linearly to 0 over ``attention_prior_fade_epochs`` (0 from epoch
    ``attention_prior_epochs + attention_prior_fade_epochs + 1`` on). The prior forms the alignment;
    fading it out leaves an attention that aligns on its own, as it must where the mel length is
    unknown (free-running inference)."""
    start = cfg.attention_prior_epochs
    if start is None or epoch <= start:
        return 1.0
    return max(0.0, 1.0 - (epoch - start) / (cfg.attention_prior_fade_epochs + 1))


def guided_attention_weight(cfg: Tacotron2SectionConfig, epoch: int) -> float:
    """The guided-attention weight of ``epoch`` (from 1): ``guided_attention_weight`` for the first
    ``guided_attention_constant_epochs`` epochs (all of them when None), then multiplied by
    ``guided_attention_decay`` per epoch. Once the alignment has formed, a smaller weight lets the
    reconstruction loss place the boundaries instead of the diagonal's fixed pace."""
    constant = cfg.guided_attention_constant_epochs
    if constant is None or epoch <= constant:
        return cfg.guided_attention_weight
    return cfg.guided_attention_weight * cfg.guided_attention_decay ** (epoch - constant)


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


def build_state(
    cfg: Tacotron2SectionConfig, n_symbols: int, n_mels: int, precision: Precision, frames_per_symbol: float = 0.0
) -> Tacotron2State:
    """A fresh model initialised from ``cfg.seed`` (the same on every rank), Adam and the scaler
    (``frames_per_symbol``: see :func:`model_config`)."""
    torch.manual_seed(cfg.seed)
    model = Tacotron2(model_config(cfg, n_symbols, n_mels, frames_per_symbol)).to(precision.device)
    optimizer = torch.optim.Adam(model.parameters(), lr=annealed_rate(cfg, 1), weight_decay=cfg.weight_decay)
    return Tacotron2State(model=model, optimizer=optimizer, scaler=precision.grad_scaler())
