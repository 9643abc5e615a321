"""The building blocks every part of Tacotron 2 shares: Xavier-initialised Linear and Conv1d, a
convolution + BatchNorm pair, and the masks that zero padding.

The wrapper attribute names, ``linear_layer`` and ``conv``, are NVIDIA's (their ``LinearNorm`` and
``ConvNorm``, where "Norm" is the Xavier initialisation): they make the state-dict keys theirs, so an
NVIDIA checkpoint loads without renaming. Each layer draws its initial weights in its constructor, so
the order in which the model builds them fixes the random draws.
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["XavierConv1d", "XavierLinear", "conv_bn", "lengths_to_mask", "masked"]


def lengths_to_mask(lengths: torch.Tensor, max_len: int | None = None) -> torch.Tensor:
    """``(B, max_len)`` bool, True on the first ``lengths[b]`` positions of each row."""
    max_len = int(lengths.max()) if max_len is None else max_len
    return torch.arange(max_len, device=lengths.device)[None, :] < lengths[:, None]


def masked(x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """``x`` ``(B, C, L)`` with the positions where ``mask`` ``(B, L)`` is False set to 0."""
    return x if mask is None else x * mask[:, None, :].to(x.dtype)


class XavierLinear(nn.Module):
    """A Linear layer with Xavier-uniform weights scaled for the activation that follows.

    ``(..., in_dim)`` -> ``(..., out_dim)``.
    """

    def __init__(self, in_dim: int, out_dim: int, *, bias: bool = True, gain: str = "linear") -> None:
        super().__init__()
        self.linear_layer = nn.Linear(in_dim, out_dim, bias=bias)
        nn.init.xavier_uniform_(self.linear_layer.weight, gain=nn.init.calculate_gain(gain))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear_layer(x)


class XavierConv1d(nn.Module):
    """A same-length Conv1d (odd kernel) with Xavier-uniform weights scaled for what follows.

    ``(B, in_channels, L)`` -> ``(B, out_channels, L)``.
    """

    def __init__(
        self, in_channels: int, out_channels: int, kernel_size: int, *, bias: bool = True, gain: str = "linear"
    ) -> None:
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, padding=(kernel_size - 1) // 2, bias=bias)
        nn.init.xavier_uniform_(self.conv.weight, gain=nn.init.calculate_gain(gain))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def conv_bn(in_channels: int, out_channels: int, kernel_size: int, gain: str) -> nn.Sequential:
    """Convolution then BatchNorm, as ``Sequential`` children 0 and 1 (NVIDIA's key layout).

    ``(B, in_channels, L)`` -> ``(B, out_channels, L)``.
    """
    return nn.Sequential(XavierConv1d(in_channels, out_channels, kernel_size, gain=gain), nn.BatchNorm1d(out_channels))
