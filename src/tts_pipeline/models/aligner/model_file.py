"""The aligner's model file: weights, constructor arguments, step, and how its text was encoded (symbol
mode, set and table, prior scaling), in the format of :mod:`tts_pipeline.models.model_file`."""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from tts_pipeline.errors import UserError
from tts_pipeline.models.aligner.model import Aligner
from tts_pipeline.models.model_file import load_model_file, save_model_file


@dataclass(frozen=True)
class AlignerInfo:
    """What a trained aligner's file says besides its weights.

    Attributes:
        step: Training step of the weights.
        symbols: Symbol mode the text was encoded with (``"characters"`` or ``"arpabet"``).
        symbol_set: Symbol set name (``text.symbol_set``).
        symbol_table: The symbols in id order, as trained.
        prior_scaling: Beta-binomial prior scaling used in training (0 = no prior); inference should
            use the same prior.
        extra: Everything the file carries besides weights, config and step.
    """

    step: int
    symbols: str
    symbol_set: str
    symbol_table: list[str]
    prior_scaling: float
    extra: dict[str, Any]


# The constructor arguments an aligner's file records (another model's file records others).
ALIGNER_CONFIG_KEYS = frozenset(inspect.signature(Aligner.__init__).parameters) - {"self"}


def load_aligner(path: str | Path, device: torch.device | str = "cpu") -> tuple[Aligner, AlignerInfo]:
    """Rebuild a trained aligner from its ``model.pt`` alone, in eval mode on ``device``.

    Raises UserError naming the file when it is missing, not a model file, or another model's file.
    """
    model_file = load_model_file(path)
    if set(model_file.model_config) != ALIGNER_CONFIG_KEYS:
        raise UserError(
            f"{path} is not an aligner model file: its model config has {sorted(model_file.model_config)}; "
            f"expected an aligner's {sorted(ALIGNER_CONFIG_KEYS)} (the train_aligner stage's model.pt)"
        )
    model = Aligner.from_config(model_file.model_config)
    model.load_state_dict(model_file.state_dict)
    extra = model_file.extra
    info = AlignerInfo(
        step=model_file.step,
        symbols=str(extra.get("symbols", "characters")),
        symbol_set=str(extra.get("symbol_set", "")),
        symbol_table=list(extra.get("symbol_table", [])),
        prior_scaling=float(extra.get("prior_scaling", 1.0)),
        extra=dict(extra),
    )
    return model.to(device).eval(), info


def save_aligner(
    path: str | Path,
    model: Aligner,
    *,
    step: int,
    epoch: int,
    symbols: str,
    symbol_set: str,
    symbol_table: list[str],
    prior_scaling: float,
    warm_started_from: str | None = None,
) -> None:
    """Write ``model.pt``: weights, constructor arguments, step and epoch, the symbol mode, set and table
    the text was encoded with, the prior scaling training used (read back by :func:`load_aligner`) and,
    for a warm start, the file training began from."""
    extra: dict[str, Any] = {
        "symbols": symbols,
        "symbol_set": symbol_set,
        "symbol_table": symbol_table,
        "prior_scaling": prior_scaling,
        "epoch": epoch,
    }
    if warm_started_from is not None:
        extra["warm_started_from"] = warm_started_from
    save_model_file(path, model, model.model_config(), step, extra)
