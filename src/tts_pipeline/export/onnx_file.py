"""Write an :class:`~tts_pipeline.export.graphs.ExportGraph` as an ONNX file, atomically.

PyTorch's TorchScript-based exporter (``torch.onnx.export(..., dynamo=False)``) traces the graph once
and keeps every axis named in the graph's specs dynamic. It is deprecated since PyTorch 2.9 (the
default became the ``torch.export``-based exporter) and still present in 2.13. The new exporter would
need FastPitch's data-dependent branches and frame count rewritten for ``torch.export`` (and onnxscript
installed); the tracing exporter records the frame count as the tensor it is, and the stage checks
every file it writes against the eager model anyway. The file is checked with ``onnx.checker`` before
it replaces an earlier one; weights stay inside it (a model under 2 GB).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import torch

from tts_pipeline.export.graphs import ExportGraph, names
from tts_pipeline.files import atomic_path

DEFAULT_OPSET = 17  # LayerNormalization is one operator from 17 on; scaled_dot_product_attention needs 14


def write_onnx(graph: ExportGraph, path: str | Path, *, opset: int = DEFAULT_OPSET) -> None:
    """Export ``graph`` to ``path`` with its input and output names and dynamic axes."""
    import onnx

    with atomic_path(path) as tmp, torch.no_grad(), warnings.catch_warnings():
        # The model's own checks of the example's values (lengths in range) turn into constants while
        # traced; they guard the example, not the graph, so the tracer's warnings about them are noise.
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        warnings.simplefilter("ignore", DeprecationWarning)  # the exporter's own, said once in the docstring
        torch.onnx.export(
            graph.module,
            graph.example,
            str(tmp),
            input_names=names(graph.inputs),
            output_names=names(graph.outputs),
            dynamic_axes=graph.dynamic_axes(),
            opset_version=opset,
            do_constant_folding=True,
            dynamo=False,
        )
        onnx.checker.check_model(str(tmp), full_check=True)
