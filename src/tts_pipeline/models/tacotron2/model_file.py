"""The Tacotron 2 model file: weights, constructor arguments, step and epoch (format of
:mod:`tts_pipeline.models.model_file`); NVIDIA's checkpoints load as they are."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tts_pipeline.errors import UserError
from tts_pipeline.models.model_file import ModelFile, read_model_file_or_foreign, rebuild_model, save_model_file
from tts_pipeline.models.tacotron2 import foreign
from tts_pipeline.models.tacotron2.model import Tacotron2

ACCEPTED_FORMATS = ("a Tacotron 2 model file of this project", foreign.NVIDIA_FORMAT)


@dataclass
class Tacotron2Info:
    """What a Tacotron 2 file says besides the weights.

    Attributes:
        step: Training step of the weights (0 for NVIDIA's files, which record epochs only).
        epoch: Epoch reached.
        model_config: The constructor arguments (:meth:`Tacotron2.model_config`).
        extra: Every plain extra the file records (``source_format`` for a foreign file; ``symbols``,
            ``symbol_set`` and ``symbol_table`` for a file this pipeline trained).
    """

    step: int
    epoch: int
    model_config: dict[str, Any]
    extra: dict[str, Any]

    def trained_symbols(self, path: str | Path, symbol_set: str | None) -> tuple[str, str, list[str]]:
        """The symbol kind, set and table it was trained on: the file's own, or for a file that records
        none (NVIDIA's, trained on characters) characters of ``symbol_set`` (the config's).

        Raises UserError naming ``path`` when no symbol set is known, or the recorded table or the
        embedding's size differs from the set as this version defines it (the ids would not match).
        """
        from tts_pipeline.text import get_symbols

        kind = str(self.extra.get("symbols") or "characters")
        trained_set = self.extra.get("symbol_set") or symbol_set
        if not trained_set:
            raise UserError(f"{path}: the Tacotron 2 file records no symbol set; give the config's text.symbol_set")
        table = get_symbols(str(trained_set))
        trained_table = list(self.extra.get("symbol_table") or table)
        n_symbols = int(self.model_config.get("n_symbols", len(table)))
        if trained_table != table or n_symbols != len(table):
            raise UserError(
                f"{path}: its symbol table ({n_symbols} symbols) differs from symbol set {trained_set!r} "
                f"as this version defines it ({len(table)}); retrain Tacotron 2 or change text.symbol_set"
            )
        return kind, str(trained_set), table


def save_tacotron2(
    path: str | Path, model: Tacotron2, *, step: int, epoch: int, extra: Mapping[str, Any] | None = None
) -> None:
    """Write a Tacotron 2 model file atomically (``extra``: further plain values, e.g. text settings)."""
    save_model_file(path, model, model.model_config(), step, {**(extra or {}), "kind": "tacotron2", "epoch": epoch})


def load_tacotron2(path: str | Path) -> tuple[Tacotron2, Tacotron2Info]:
    """Rebuild Tacotron 2 from a model file, or from an NVIDIA checkpoint as it is, in eval mode on the CPU.

    Read with ``torch.load(weights_only=True)``. Raises UserError naming the file when it is missing,
    of no accepted format, or its weights do not fit its config.
    """

    def nvidia(payload: Any) -> ModelFile:
        if not foreign.is_nvidia_tacotron2(payload):
            raise UserError(f"{path}: not a Tacotron 2 checkpoint; accepted: {'; '.join(ACCEPTED_FORMATS)}")
        return foreign.nvidia_model_file(path, payload)

    model_file = read_model_file_or_foreign(path, nvidia, kind="tacotron2", what="Tacotron 2")
    model, model_file = rebuild_model(path, Tacotron2.from_config, what="Tacotron 2", model_file=model_file)
    info = Tacotron2Info(
        step=model_file.step,
        epoch=int(model_file.extra.get("epoch", 0)),
        model_config=dict(model_file.model_config),
        extra=dict(model_file.extra),
    )
    return model, info
