"""The aligner's model file: weights, constructor arguments, step, and how its text was encoded (symbol
mode, set and table, prior scaling), in the format of :mod:`tts_pipeline.models.model_file`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

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


def load_aligner(path: str | Path, device: torch.device | str = "cpu") -> tuple[Aligner, AlignerInfo]:
    """Rebuild a trained aligner from its ``model.pt`` alone, in eval mode on ``device``."""
    model_file = load_model_file(path)
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
) -> None:
    """Write ``model.pt``: weights, constructor arguments, step and epoch, the symbol mode, set and table
    the text was encoded with, and the prior scaling training used (read back by :func:`load_aligner`)."""
    extra: dict[str, Any] = {
        "symbols": symbols,
        "symbol_set": symbol_set,
        "symbol_table": symbol_table,
        "prior_scaling": prior_scaling,
        "epoch": epoch,
    }
    save_model_file(path, model, model.model_config(), step, extra)
