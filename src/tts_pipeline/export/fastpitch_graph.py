"""FastPitch's inference graph for export: symbols and per-item controls -> mel, mel lengths, durations.

It is :meth:`tts_pipeline.models.fastpitch.FastPitch.infer` itself, traced: the pace and the pitch
controls come in as ``(B,)`` tensors instead of Python numbers, so one exported file serves every
setting and every item of a batch its own. Under tracing the model masks padding always and keeps the
frame count a tensor (see ``padding_mask`` and ``length_regulate``), so the graph serves any batch
size and length; eager runs take their usual path and compute exactly what they did.

The pitch controls are NVIDIA's transforms folded into two numbers (:class:`tts_pipeline.export.cases.Controls`):
``pitch_scale`` (flatten = 0, invert = -1, amplify = A, their product) and ``pitch_shift_hz``.
"""

from __future__ import annotations

import torch
from torch import nn

from tts_pipeline.export.graphs import ExportGraph, TensorSpec
from tts_pipeline.models.fastpitch import FastPitch

INPUTS = (
    TensorSpec("tokens", "int64", ("batch", "tokens"), "symbol ids, 0 = padding on the right"),
    TensorSpec("token_lengths", "int64", ("batch",), "real symbols per item, 1..tokens"),
    TensorSpec("pace", "float32", ("batch",), "speaking rate, > 0: durations are divided by it (2 = twice as fast)"),
    TensorSpec("pitch_shift_hz", "float32", ("batch",), "added to the predicted pitch, in Hz"),
    TensorSpec(
        "pitch_scale", "float32", ("batch",), "multiplies the predicted pitch contour around the mean (0 = flat)"
    ),
)


class PitchControls:
    """A pitch transform with per-item tensors, called as FastPitch calls its ``pitch_transform``:
    ``(B, L)`` normalised pitch, ``(B, L)`` bool mask, the model's Hz std -> ``(B, L)``, 0 on padding.

    The order of :class:`tts_pipeline.models.fastpitch.PitchTransform`: scale, then add the shift.

    Args:
        scale: ``(B, 1)`` factor of the normalised pitch.
        shift_hz: ``(B, 1)`` shift in Hz.
    """

    def __init__(self, scale: torch.Tensor, shift_hz: torch.Tensor) -> None:
        self.scale = scale
        self.shift_hz = shift_hz

    def __call__(self, pitch: torch.Tensor, token_mask: torch.Tensor, pitch_std: float) -> torch.Tensor:
        return (pitch * self.scale + self.shift_hz / pitch_std) * token_mask.to(pitch.dtype)


class FastPitchGraph(nn.Module):
    """``forward(tokens (B, N) int64, token_lengths (B,) int64, pace (B,), pitch_shift_hz (B,),
    pitch_scale (B,))`` -> ``mel (B, n_mels, T)`` float32 (0 past each length), ``mel_lengths (B,)``
    int64, ``durations (B, N)`` int64 frames per symbol (0 on padding)."""

    def __init__(self, model: FastPitch) -> None:
        super().__init__()
        self.model = model

    def forward(
        self,
        tokens: torch.Tensor,
        token_lengths: torch.Tensor,
        pace: torch.Tensor,
        pitch_shift_hz: torch.Tensor,
        pitch_scale: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        controls = PitchControls(pitch_scale.unsqueeze(1), pitch_shift_hz.unsqueeze(1))
        out = self.model.infer(tokens, token_lengths, pace=pace.unsqueeze(1), pitch_transform=controls)  # type: ignore[arg-type]
        return out.mel, out.mel_lengths, out.durations


def graph(model: FastPitch) -> ExportGraph:
    """The graph of a FastPitch loaded by its seam (float32, eval mode, on the CPU)."""
    n_mels = model.model_config()["n_mels"]
    outputs = (
        TensorSpec("mel", "float32", ("batch", n_mels, "frames"), "log-mel, 0 past each item's length"),
        TensorSpec("mel_lengths", "int64", ("batch",), "frames per item"),
        TensorSpec("durations", "int64", ("batch", "tokens"), "frames per symbol after the pace, 0 on padding"),
    )
    # Two items, the second padded: any valid input traces the same graph (no branch depends on it).
    tokens = torch.tensor([[1, 2, 3, 4, 5, 6], [6, 5, 4, 0, 0, 0]], dtype=torch.int64)
    example = (tokens, torch.tensor([6, 3]), torch.ones(2), torch.zeros(2), torch.ones(2))
    pitch = {"mean": float(model.pitch_mean), "std": float(model.pitch_std)}  # Hz, what the pitch was normalised by
    # The wrapper in eval mode too: an exporter restores the mode it found, recursively, so a wrapper left
    # in training mode would switch the model's dropout on after the first export.
    module = FastPitchGraph(model.float()).eval()
    return ExportGraph(module, INPUTS, outputs, example, {"pitch": pitch})
