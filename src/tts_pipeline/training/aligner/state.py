"""The aligner's training state (model, AdamW, gradient scaler and the loop's counters), how it is built
and under which precision, and the hash that decides whether a checkpoint may be resumed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch

from tts_pipeline.config import AlignerConfig, config_hash
from tts_pipeline.models.aligner.model import Aligner
from tts_pipeline.precision import Precision, resolve_precision
from tts_pipeline.training.model_state import ModelState

# Settings that change how long or where training runs, not the trajectory of the weights: a run
# resumed with more epochs or steps, another checkpoint cadence or more workers is the same run.
# (Unlike the global-batch trainers' batch_size, the aligner's is its batch: it shapes the trajectory.)
RESUME_NEUTRAL_KEYS = ("epochs", "max_steps", "checkpoint_every_n_steps", "keep_checkpoints", "num_workers", "gpus")


def resume_hash(aligner: Mapping[str, Any], n_mels: int, symbol_set: str, *, init_digest: str | None = None) -> str:
    """Hash of everything that shapes the weights' trajectory; checkpoints of another hash are not resumed.
    ``init_digest``: the SHA-256 of the warm start's file (``aligner.init_from``), so that another file at
    the same path starts training afresh."""
    trajectory = {key: value for key, value in aligner.items() if key not in RESUME_NEUTRAL_KEYS}
    payload: dict[str, Any] = {"aligner": trajectory, "n_mels": n_mels, "symbol_set": symbol_set}
    if init_digest is not None:
        payload["init_from_sha256"] = init_digest
    return config_hash(payload)


@dataclass
class AlignerState(ModelState):
    """:class:`~tts_pipeline.training.model_state.ModelState` of an :class:`Aligner`."""

    model: Aligner

    def extra(self) -> dict[str, Any]:
        # The aligner's checkpoints hold the counters alone: its model file records the model's config
        # from the section, and its metrics report no losses of step 1.
        return self.counters()


def resolve_aligner_precision(cfg: AlignerConfig, device: torch.device) -> Precision:
    """``aligner.amp`` on ``device``, by the policy every trainer shares (:mod:`tts_pipeline.precision`).

    Under bf16 or fp16 only the key and query convolutions run in half precision: the model computes
    its distances, log-softmax and attention in float32, and the losses cast to float32 (CTC and the
    log of the soft attention lose too much in 8 mantissa bits).
    """
    return resolve_precision(cfg.amp, device, key="aligner.amp")


def build_state(cfg: AlignerConfig, n_symbols: int, n_mels: int, precision: Precision) -> AlignerState:
    """A freshly initialised model (seeded) on ``precision.device``, AdamW and ``precision``'s gradient scaler."""
    device = precision.device
    torch.manual_seed(cfg.seed)
    model = Aligner(
        n_symbols=n_symbols,
        n_mels=n_mels,
        embedding_dim=cfg.embedding_dim,
        attention_dim=cfg.attention_dim,
        temperature=cfg.temperature,
    ).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.learning_rate, weight_decay=cfg.weight_decay)
    return AlignerState(model=model, optimizer=optimizer, scaler=precision.grad_scaler())
