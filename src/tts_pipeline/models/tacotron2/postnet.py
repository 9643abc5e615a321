"""Tacotron 2's postnet: convolutions that predict a residual the decoder's mel is corrected by.

``(B, n_mels, T)`` -> ``(B, n_mels, T)``. ``postnet_n_convolutions`` convolutions, each followed by
BatchNorm, tanh after all but the last (a linear output), and dropout (p 0.5) in training only.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from tts_pipeline.models.tacotron2.config import CONV_DROPOUT, Tacotron2Config
from tts_pipeline.models.tacotron2.layers import conv_bn, masked

__all__ = ["Postnet"]


class Postnet(nn.Module):
    """Convolutions (tanh after all but the last) predicting a residual for the decoder's mel."""

    def __init__(self, cfg: Tacotron2Config) -> None:
        super().__init__()
        n_mels, dim, kernel = cfg.n_mel_channels, cfg.postnet_embedding_dim, cfg.postnet_kernel_size
        n_middle = cfg.postnet_n_convolutions - 2
        self.convolutions = nn.ModuleList(
            [
                conv_bn(n_mels, dim, kernel, "tanh"),
                *(conv_bn(dim, dim, kernel, "tanh") for _ in range(n_middle)),
                conv_bn(dim, n_mels, kernel, "linear"),
            ]
        )

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        """``(B, n_mels, T)`` -> ``(B, n_mels, T)`` residual; ``mask`` ``(B, T)`` zeroes padded frames
        before each convolution (None: NVIDIA's way)."""
        last = len(self.convolutions) - 1
        for i, layer in enumerate(self.convolutions):
            x = layer(masked(x, mask))
            x = F.dropout(x if i == last else torch.tanh(x), CONV_DROPOUT, self.training)
        return x
