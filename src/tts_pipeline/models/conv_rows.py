"""1-D convolutions run as 2-D ones on channels-last "rows": ``(B, C, L) <-> (B, C, 1, L)``.

On a CPU, PyTorch hands a ``Conv1d`` on a contiguous ``(B, C, L)`` tensor to oneDNN in its plain
channels-first layout, where small-channel dilated convolutions (a HiFi-GAN's last stages: 16 or 32
channels over tens of thousands of samples) run as im2col + GEMM. The same convolution on a
channels-last ``(B, C, 1, L)`` tensor gets oneDNN's direct kernels: on 2 cores of an AVX2-only Zen 3
the demo vocoder's resblock convolutions, forward and backward, took about half the time that way
(``tts-pipeline bench-hifigan --conv-layout``). The arithmetic is the same; only the summation order,
and so the last bits, differ.

Converting costs a copy each way, so a caller converts once around a run of convolutions and
elementwise operations (which keep the layout), not around each convolution. :func:`to_rows` and
:func:`from_rows` also convert the gradient on the way back, so the backward pass sees the same
layouts as the forward one and oneDNN does not reorder a gradient per convolution.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F


class _ToRows(torch.autograd.Function):
    @staticmethod
    def forward(ctx: torch.autograd.function.FunctionCtx, x: torch.Tensor) -> torch.Tensor:
        return x.unsqueeze(2).contiguous(memory_format=torch.channels_last)

    @staticmethod
    def backward(ctx: torch.autograd.function.FunctionCtx, grad: torch.Tensor) -> torch.Tensor:
        return grad.squeeze(2).contiguous()


class _FromRows(torch.autograd.Function):
    @staticmethod
    def forward(ctx: torch.autograd.function.FunctionCtx, x: torch.Tensor) -> torch.Tensor:
        return x.squeeze(2).contiguous()

    @staticmethod
    def backward(ctx: torch.autograd.function.FunctionCtx, grad: torch.Tensor) -> torch.Tensor:
        return grad.unsqueeze(2).contiguous(memory_format=torch.channels_last)


def to_rows(x: torch.Tensor) -> torch.Tensor:
    """``(B, C, L)`` -> ``(B, C, 1, L)`` in channels-last memory order (its gradient comes back contiguous)."""
    if x.dim() != 3:
        raise ValueError(f"to_rows: expected a (B, C, L) tensor, got shape {tuple(x.shape)}")
    return _ToRows.apply(x)


def from_rows(x: torch.Tensor) -> torch.Tensor:
    """``(B, C, 1, L)`` -> contiguous ``(B, C, L)`` (its gradient goes back channels-last)."""
    if x.dim() != 4 or x.shape[2] != 1:
        raise ValueError(f"from_rows: expected a (B, C, 1, L) tensor, got shape {tuple(x.shape)}")
    return _FromRows.apply(x)


def conv1d(conv: nn.Conv1d, x: torch.Tensor) -> torch.Tensor:
    """``conv(x)`` for ``x`` as ``(B, C, L)`` or as rows ``(B, C, 1, L)`` (the result has ``x``'s form).

    Reads ``conv.weight`` (a weight-normalised conv gives its normalised weight) and its stride,
    padding, dilation and groups; numeric padding only (no ``"same"``), zero padding only.
    """
    if x.dim() == 3:
        return conv(x)
    if conv.padding_mode != "zeros" or isinstance(conv.padding, str):
        raise ValueError(f"conv_rows.conv1d: zero numeric padding only, got {conv.padding_mode} / {conv.padding}")
    return F.conv2d(
        x,
        conv.weight.unsqueeze(2),
        conv.bias,
        stride=(1, conv.stride[0]),
        padding=(0, conv.padding[0]),
        dilation=(1, conv.dilation[0]),
        groups=conv.groups,
    )
