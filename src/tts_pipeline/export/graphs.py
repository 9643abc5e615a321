"""What an exported graph is: a module whose ``forward`` takes and returns tensors only, the names,
dtypes and axes of those tensors, and the example it is traced with.

A kind's row in :mod:`tts_pipeline.config.model_kinds` names the module (``export``) whose
``graph(model)`` builds it from the model its seam loaded (:mod:`tts_pipeline.inference.seams`), so this
package never names a model kind.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import import_module
from typing import Any

import torch
from torch import nn

from tts_pipeline.config.model_kinds import ACOUSTIC_MODELS, VOCODERS, AcousticModelKind, VocoderKind
from tts_pipeline.errors import UserError


@dataclass(frozen=True)
class TensorSpec:
    """One input or output of a graph.

    Attributes:
        name: Its name in the ONNX file and the voice card.
        dtype: ``"float32"`` or ``"int64"``.
        axes: Per axis its size (an int: fixed) or a name (dynamic: ``"batch"``, ``"tokens"``,
            ``"frames"``, ``"samples"``); axes of one name have one size in one call.
        doc: What it holds, for the voice card.
    """

    name: str
    dtype: str
    axes: tuple[int | str, ...]
    doc: str

    def dynamic_axes(self) -> dict[int, str]:
        """``{axis index: name}`` of the dynamic axes (``torch.onnx.export``'s ``dynamic_axes`` entry)."""
        return {index: axis for index, axis in enumerate(self.axes) if isinstance(axis, str)}

    def card(self) -> dict[str, Any]:
        """As the voice card lists it: dtype, shape (names for dynamic axes) and meaning."""
        return {"name": self.name, "dtype": self.dtype, "shape": list(self.axes), "doc": self.doc}


@dataclass(frozen=True)
class ExportGraph:
    """A model's inference graph, ready to export.

    Attributes:
        module: Eval mode, float32, on the CPU; ``forward(*inputs)`` returns a tuple in ``outputs`` order.
        inputs: Its inputs, in ``forward``'s order.
        outputs: Its outputs.
        example: Inputs to trace with (any valid ones: no branch of the traced code depends on them).
        card: What the voice card adds from the model (FastPitch: ``{"pitch": {"mean": Hz, "std": Hz}}``).
    """

    module: nn.Module
    inputs: tuple[TensorSpec, ...]
    outputs: tuple[TensorSpec, ...]
    example: tuple[torch.Tensor, ...]
    card: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.module.training:
            raise ValueError("export graph: the module must be in eval mode (dropout off), as inference runs it")

    def dynamic_axes(self) -> dict[str, dict[int, str]]:
        """Every input's and output's dynamic axes, by name."""
        return {spec.name: spec.dynamic_axes() for spec in (*self.inputs, *self.outputs) if spec.dynamic_axes()}

    def signature(self) -> dict[str, Any]:
        """Inputs and outputs as the voice card lists them."""
        return {"inputs": [spec.card() for spec in self.inputs], "outputs": [spec.card() for spec in self.outputs]}


def names(specs: tuple[TensorSpec, ...]) -> list[str]:
    """The names of a graph's inputs or outputs, in order."""
    return [spec.name for spec in specs]


def export_graph(kind: AcousticModelKind | VocoderKind, model: nn.Module) -> ExportGraph:
    """The inference graph of ``model``, a model of ``kind`` as its seam loaded it.

    Raises UserError naming the kind when its row has no export module.
    """
    if kind.export is None:
        exportable = ", ".join(row.name for row in (*VOCODERS, *ACOUSTIC_MODELS) if row.export is not None)
        raise UserError(
            f"{kind.label} cannot be exported yet (its row in config/model_kinds.py names no export module); "
            f"the exportable kinds: {exportable}"
        )
    return import_module(kind.export).graph(model)
