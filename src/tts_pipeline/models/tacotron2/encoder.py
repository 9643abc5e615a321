"""Tacotron 2's encoder: convolutions over the symbol embeddings, then a bidirectional LSTM.

``(B, E, L)`` embeddings -> ``(B, max(lengths), E)`` encoder outputs (the attention's memory), ``E`` =
``encoder_embedding_dim``. Each convolution is followed by BatchNorm, ReLU and dropout (p 0.5, in
training only, as NVIDIA's); the LSTM runs packed, so it reads only each item's real symbols.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from tts_pipeline.models.tacotron2.config import CONV_DROPOUT, Tacotron2Config
from tts_pipeline.models.tacotron2.layers import conv_bn, masked

__all__ = ["Encoder"]


class Encoder(nn.Module):
    """Convolutions over the symbol embeddings, then a bidirectional LSTM over the real symbols."""

    def __init__(self, cfg: Tacotron2Config) -> None:
        super().__init__()
        dim = cfg.encoder_embedding_dim
        self.convolutions = nn.ModuleList(
            [conv_bn(dim, dim, cfg.encoder_kernel_size, "relu") for _ in range(cfg.encoder_n_convolutions)]
        )
        self.lstm = nn.LSTM(dim, dim // 2, 1, batch_first=True, bidirectional=True)

    def forward(self, x: torch.Tensor, lengths: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        """``(B, E, L)`` embeddings and ``(B,)`` lengths -> ``(B, max(lengths), E)``, 0 past each length.

        ``mask`` ``(B, L)``: zero padded positions before each convolution (None: NVIDIA's way).
        """
        for layer in self.convolutions:
            x = F.dropout(F.relu(layer(masked(x, mask))), CONV_DROPOUT, self.training)
        packed = nn.utils.rnn.pack_padded_sequence(
            x.transpose(1, 2), lengths.cpu(), batch_first=True, enforce_sorted=False
        )
        outputs, _ = self.lstm(packed)
        outputs, _ = nn.utils.rnn.pad_packed_sequence(outputs, batch_first=True)
        return outputs
