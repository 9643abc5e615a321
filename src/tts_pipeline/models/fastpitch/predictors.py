"""FastPitch's temporal predictors: one value per token (log-duration, pitch or energy).

``n_layers`` x [Conv1d -> ReLU -> LayerNorm -> dropout], then Linear(filter -> 1) (reference 3.1).
State-dict names follow NVIDIA's (``layers.N.conv``, ``layers.N.norm``, ``fc``).
"""

from __future__ import annotations

import torch
from torch import nn

from tts_pipeline.models.fastpitch.transformer import padding_mask


class ConvReLUNorm(nn.Module):
    """Conv1d(k, same length) -> ReLU -> LayerNorm over channels -> dropout.

    Shapes: ``(B, C_in, L) -> (B, C_out, L)``.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, dropout: float) -> None:
        super().__init__()
        if kernel_size % 2 == 0:
            raise ValueError(f"predictor kernel_size: expected an odd kernel, got {kernel_size}")
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.norm = nn.LayerNorm(out_channels)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.conv(x.to(self.conv.weight.dtype)))
        # LayerNorm in float32 under autocast (CUDA's autocast does so itself, the CPU's does not).
        return self.dropout(self.norm(x.transpose(1, 2).float()).transpose(1, 2))


class TemporalPredictor(nn.Module):
    """Predicts one value per token from the encoder output.

    Args:
        input_size: Channels ``C`` of the encoder output.
        filter_size: Conv channels.
        kernel_size: Conv kernel (odd).
        dropout: Dropout after every LayerNorm.
        n_layers: Conv layers.

    Padded tokens are zeroed before every conv (NVIDIA zeroes them only before the first), so an
    utterance's predictions do not depend on the padding it is batched with; the output is 0 there.

    The output comes in ``fc``'s dtype: a model held in bfloat16 for inference keeps ``fc`` in
    float32 (:mod:`~tts_pipeline.models.fastpitch.bf16`), because log-durations become frame counts
    through ``exp`` and rounding, where bfloat16's 8-bit mantissa would move whole frames.
    """

    def __init__(self, input_size: int, filter_size: int, kernel_size: int, dropout: float, n_layers: int = 2) -> None:
        super().__init__()
        self.layers = nn.ModuleList(
            ConvReLUNorm(input_size if i == 0 else filter_size, filter_size, kernel_size, dropout)
            for i in range(n_layers)
        )
        self.fc = nn.Linear(filter_size, 1)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """``(B, L, C)`` encoder output and ``(B, L)`` bool mask -> ``(B, L)`` predictions, 0 on padding."""
        padded = padding_mask(mask) is not None
        keep = mask[:, None, :].to(x.dtype)  # (B, 1, L)
        x = x.transpose(1, 2)
        for layer in self.layers:
            x = layer(x * keep if padded else x)
        predicted = self.fc(x.transpose(1, 2).to(self.fc.weight.dtype)).squeeze(2)
        return predicted * mask.to(predicted.dtype) if padded else predicted
