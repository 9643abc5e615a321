"""FastPitch held in bfloat16 for CPU inference, instead of running under bf16 autocast.

Autocast keeps the weights in float32 and converts them to bfloat16 on every call: on a CPU those
conversions took about a quarter of a bf16 FastPitch call. A copy whose matrix weights (every Linear
and Conv1d) are converted once runs the same bf16 products without them. The layers cast their
inputs to their weights' dtype, so the residual stream, the LayerNorms and the attention softmax stay
float32 as under autocast, and so does the output mel (the projection's output is widened by the mask).

Also float32, and why:

- the predictors' output layers (``fc``, one value per token): log-durations become frame counts
  through ``exp`` and rounding, and bfloat16's 8-bit mantissa would move whole frames;
- the symbol embedding and a multi-speaker model's speaker embedding (lookups, nothing to multiply:
  the scaled speaker vector is added to the float32 symbol embedding as in the float32 model) and the
  buffers (pitch statistics, positional frequencies).

The copy is for :meth:`FastPitch.infer` without autocast: autocast would convert the float32 output
layers back to bfloat16. Training and the float32 model are untouched.
"""

from __future__ import annotations

import copy

import torch
from torch import nn

from tts_pipeline.models.fastpitch.model import FastPitch
from tts_pipeline.models.fastpitch.predictors import TemporalPredictor


def bf16_inference_copy(model: FastPitch) -> FastPitch:
    """An eval-mode copy of ``model`` whose Linear and Conv1d weights are bfloat16, except the
    predictors' ``fc`` layers."""
    held = copy.deepcopy(model).eval()
    predictors = [module for module in held.modules() if isinstance(module, TemporalPredictor)]
    full_precision = {id(predictor.fc) for predictor in predictors}
    for module in held.modules():
        if isinstance(module, (nn.Linear, nn.Conv1d)) and id(module) not in full_precision:
            module.to(torch.bfloat16)
    return held


def is_held_in_bf16(model: FastPitch) -> bool:
    """True for a model made by :func:`bf16_inference_copy` (its output projection is bfloat16)."""
    return model.proj.weight.dtype == torch.bfloat16
