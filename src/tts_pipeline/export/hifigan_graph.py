"""HiFi-GAN's inference graph for export: the generator as its seam loads it (weight norms folded, so
the graph holds plain convolution weights), log-mel -> audio."""

from __future__ import annotations

import copy

import torch

from tts_pipeline.export.graphs import ExportGraph, TensorSpec
from tts_pipeline.models.hifigan import Generator


def graph(model: Generator) -> ExportGraph:
    """``forward(mel (B, n_mels, T) float32)`` -> ``audio (B, 1, T * hop)`` float32 in [-1, 1]."""
    if model.has_weight_norm:
        # the exported file would carry the (g, v) pairs and recompute every weight on every call
        raise ValueError("HiFi-GAN export: fold the weight norms first (the seam's load does)")
    n_mels = model.model_config()["n_mels"]
    inputs = (TensorSpec("mel", "float32", ("batch", n_mels, "frames"), "log-mel; pad a batch with log(1e-5)"),)
    outputs = (TensorSpec("audio", "float32", ("batch", 1, "samples"), "waveform, samples = frames x hop"),)
    example = (torch.zeros(1, n_mels, 8),)
    # The graph in the 1-D layout: channels-last rows are a choice for PyTorch's CPU kernels, and the
    # runtime that loads the file makes its own. A shallow copy, so the caller's generator keeps its layout.
    exported = copy.copy(model.float().eval())
    exported.cpu_rows = False
    return ExportGraph(exported, inputs, outputs, example)
