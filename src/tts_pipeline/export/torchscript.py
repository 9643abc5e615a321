"""Write an :class:`~tts_pipeline.export.graphs.ExportGraph` as a TorchScript file (``.ts``), atomically,
and load one back to run it.

The graph is traced (``torch.jit.trace``) from its example like the ONNX export: the same graph, run by
libtorch (C++, Triton's PyTorch backend) without this package's Python code. PyTorch 2.13 marks
TorchScript deprecated (its warning is silenced here) but still writes and runs it; the ONNX file is
the export meant to outlive it.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import torch

from tts_pipeline.errors import UserError
from tts_pipeline.export.graphs import ExportGraph
from tts_pipeline.files import atomic_path


def write_torchscript(graph: ExportGraph, path: str | Path) -> None:
    """Trace ``graph`` and save it to ``path``."""
    with atomic_path(path) as tmp, torch.no_grad(), warnings.catch_warnings():
        # as in onnx_file: the tracer's warnings are about the model's checks of the example's values
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        traced = torch.jit.trace(graph.module, graph.example, check_trace=False)
        torch.jit.save(traced, str(tmp))


class TorchScriptModel:
    """A ``.ts`` file run on numpy arrays, as :class:`tts_pipeline.export.runtime.OnnxModel` runs an ONNX file.

    Args:
        path: The TorchScript file.
    """

    def __init__(self, path: str | Path) -> None:
        try:
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", category=DeprecationWarning)
                self.module = torch.jit.load(str(path), map_location="cpu").eval()
        except (RuntimeError, ValueError) as error:
            raise UserError(f"{path}: not a loadable TorchScript file ({error})") from None
        self.path = Path(path)

    def __call__(self, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """Inputs in the graph's order -> its outputs, as numpy arrays."""
        with torch.inference_mode():
            outputs = self.module(*(torch.from_numpy(np.ascontiguousarray(value)) for value in inputs))
        if isinstance(outputs, torch.Tensor):
            outputs = (outputs,)
        return tuple(output.numpy() for output in outputs)
