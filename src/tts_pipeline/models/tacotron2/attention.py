"""Tacotron 2's location-sensitive attention: where each decoder step looks among the encoder outputs.

The energy of symbol ``j`` is ``v . tanh(W q + V m_j + U f_j)``: ``q`` the attention LSTM's output
``(B, attention_rnn_dim)``, ``m_j`` the encoder output ``(B, N, E)`` (``V m`` is computed once per
utterance), and ``f_j`` features of where the attention already was, a convolution over the last
step's weights and their running sum ``(B, 2, N)``. The location term is what keeps the alignment
moving forward monotonically. Padded symbols get ``-inf`` energy, hence no weight.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from tts_pipeline.models.tacotron2.config import Tacotron2Config
from tts_pipeline.models.tacotron2.layers import XavierConv1d, XavierLinear

__all__ = ["Attention", "LocationLayer"]


class LocationLayer(nn.Module):
    """Features of where the attention was: a convolution over the previous and cumulative weights."""

    def __init__(self, cfg: Tacotron2Config) -> None:
        super().__init__()
        self.location_conv = XavierConv1d(
            2, cfg.attention_location_n_filters, cfg.attention_location_kernel_size, bias=False
        )
        self.location_dense = XavierLinear(cfg.attention_location_n_filters, cfg.attention_dim, bias=False, gain="tanh")

    def forward(self, weights: torch.Tensor) -> torch.Tensor:
        """``(B, 2, N)`` previous and cumulative weights -> ``(B, N, attention_dim)``."""
        return self.location_dense(self.location_conv(weights).transpose(1, 2))


class Attention(nn.Module):
    """Location-sensitive additive attention: ``v . tanh(W q + V m_j + U f_j)`` over the symbols j."""

    def __init__(self, cfg: Tacotron2Config) -> None:
        super().__init__()
        self.query_layer = XavierLinear(cfg.attention_rnn_dim, cfg.attention_dim, bias=False, gain="tanh")
        self.memory_layer = XavierLinear(cfg.encoder_embedding_dim, cfg.attention_dim, bias=False, gain="tanh")
        self.v = XavierLinear(cfg.attention_dim, 1, bias=False)
        self.location_layer = LocationLayer(cfg)

    def forward(
        self,
        query: torch.Tensor,
        memory: torch.Tensor,
        processed_memory: torch.Tensor,
        previous_weights: torch.Tensor,
        padded: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """One attention step.

        Args:
            query: ``(B, attention_rnn_dim)`` attention-LSTM output.
            memory: ``(B, N, E)`` encoder outputs.
            processed_memory: ``(B, N, attention_dim)`` ``memory_layer(memory)``, computed once.
            previous_weights: ``(B, 2, N)`` the last step's weights and their running sum.
            padded: ``(B, N)`` bool, True on padded symbols (they get no attention).

        Returns:
            ``(B, E)`` context and ``(B, N)`` weights.
        """
        energies = self.v(
            torch.tanh(self.query_layer(query)[:, None, :] + self.location_layer(previous_weights) + processed_memory)
        ).squeeze(2)
        weights = F.softmax(energies.masked_fill(padded, float("-inf")), dim=1)
        context = torch.bmm(weights[:, None, :], memory).squeeze(1)
        return context, weights
