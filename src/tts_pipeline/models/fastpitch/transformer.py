"""FastPitch's feed-forward transformer (FFT) stack: encoder over symbols, decoder over frames.

Each layer is post-LayerNorm: multi-head self-attention (fused q/k/v projection, bias-free output
projection), then a feed-forward made of two 1-D convolutions (reference section 3.2). Sequences are
channels-last, ``(B, L, C)``, as in NVIDIA's code, so the state-dict names and shapes match its files
(``layers.N.dec_attn.qkv_net``, ``layers.N.pos_ff.CoreNet.0``, ``pos_emb.inv_freq``, ...).

Padding never leaks into real positions: attention ignores padded keys, and padded positions are
zeroed before every convolution, so an utterance gives the same output alone or in a padded batch.
A batch without padding (always the case at batch size 1) skips the masking: multiplying by ones
changes no value, and on a CPU those small elementwise passes cost as much as a sixth of inference.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn


def lengths_to_mask(lengths: torch.Tensor, max_len: int | None = None) -> torch.Tensor:
    """``(B,)`` lengths -> ``(B, max_len)`` bool mask, True on the first ``lengths[b]`` positions."""
    if max_len is None:
        max_len = int(lengths.max()) if lengths.numel() else 0
    return torch.arange(max_len, device=lengths.device)[None, :] < lengths[:, None]


class PositionalEmbedding(nn.Module):
    """Sinusoidal positions as the concatenation ``[sin(p * f), cos(p * f)]`` (not interleaved).

    ``inv_freq`` ``(d_model / 2,)`` = ``1 / 10000^(2i / d_model)`` is a persistent buffer because
    NVIDIA's files carry it (``pos_emb.inv_freq``).
    """

    def __init__(self, d_model: int) -> None:
        super().__init__()
        if d_model % 2:
            raise ValueError(f"d_model: expected an even width for [sin, cos] positions, got {d_model}")
        inv_freq = 1.0 / (10000.0 ** (torch.arange(0.0, d_model, 2.0) / d_model))
        self.register_buffer("inv_freq", inv_freq)

    def forward(self, length: int) -> torch.Tensor:
        """Positions ``0 .. length - 1`` -> ``(length, d_model)`` float32 embeddings."""
        positions = torch.arange(length, device=self.inv_freq.device, dtype=self.inv_freq.dtype)
        angles = torch.outer(positions, self.inv_freq)
        return torch.cat([angles.sin(), angles.cos()], dim=1)


class MultiHeadAttention(nn.Module):
    """Masked self-attention, dropout, residual, LayerNorm.

    Args:
        d_model: Channels ``C`` in and out.
        n_heads: Heads ``H``.
        d_head: Channels per head ``D`` (``H * D`` need not equal ``C``: ``o_net`` maps back).
        dropout: Dropout on the attention output before the residual.
        dropatt: Dropout on the attention probabilities.

    Shapes: ``(B, L, C)`` and mask ``(B, L)`` (None: no padding) -> ``(B, L, C)``.

    Training spells out ``softmax(Q K^T / sqrt(D)) V`` so that attention dropout draws exactly as it
    always has; evaluation uses ``F.scaled_dot_product_attention``, the same function in one fused
    kernel (within float rounding) that never stores the ``(L, L)`` scores.
    """

    def __init__(self, d_model: int, n_heads: int, d_head: int, dropout: float, dropatt: float) -> None:
        super().__init__()
        self.n_heads, self.d_head = n_heads, d_head
        self.scale = 1.0 / math.sqrt(d_head)
        self.qkv_net = nn.Linear(d_model, 3 * n_heads * d_head)
        self.o_net = nn.Linear(n_heads * d_head, d_model, bias=False)
        self.layer_norm = nn.LayerNorm(d_model)
        self.drop = nn.Dropout(dropout)
        self.dropatt = nn.Dropout(dropatt)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        batch, length, _ = x.shape
        # (B, L, 3 H D) -> three (B, H, L, D)
        q, k, v = (
            self.qkv_net(x.to(self.qkv_net.weight.dtype))
            .view(batch, length, 3, self.n_heads, self.d_head)
            .permute(2, 0, 3, 1, 4)
        )
        if self.training:
            attended = self._explicit(q, k, v, mask)
        else:
            attended = F.scaled_dot_product_attention(q, k, v, attn_mask=_key_bias(mask, q.dtype))
        attended = attended.transpose(1, 2).reshape(batch, length, self.n_heads * self.d_head)
        # LayerNorm in float32 under autocast, as CUDA's autocast does on its own; the CPU's leaves it
        # in bf16, which would also carry the residual stream in bf16 from layer to layer.
        return self.layer_norm((x + self.drop(self.o_net(attended))).float())

    def _explicit(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        """``(B, H, L, D)`` queries, keys, values -> ``(B, H, L, D)``, with dropout on the probabilities."""
        scores = torch.matmul(q, k.transpose(-1, -2)) * self.scale  # (B, H, L_query, L_key)
        if mask is not None:
            # The dtype's lowest value rather than -inf: a sequence with no real position (a
            # zero-length decoder input at inference) then gets uniform weights instead of NaN.
            scores = scores.masked_fill(~mask[:, None, None, :], torch.finfo(scores.dtype).min)
        # Softmax in float32 under autocast (CUDA's autocast does so on its own, the CPU's does not).
        probs = self.dropatt(torch.softmax(scores, dim=-1, dtype=torch.float32))
        return torch.matmul(probs.to(v.dtype), v)


def _key_bias(mask: torch.Tensor | None, dtype: torch.dtype) -> torch.Tensor | None:
    """``(B, L)`` mask -> ``(B, 1, 1, L)`` additive score bias: 0 on real keys, half the dtype's lowest
    value on padded ones; None without padding.

    Finite, unlike -inf, so that a sequence with no real position (a zero-length decoder input) gets
    uniform weights instead of NaN and is masked later; half the lowest value, so that adding a score
    cannot overflow to -inf in float16.
    """
    if mask is None:
        return None
    bias = torch.zeros(mask.shape, dtype=dtype, device=mask.device)
    bias.masked_fill_(~mask, torch.finfo(dtype).min / 2)
    return bias[:, None, None, :]


class ConvFeedForward(nn.Module):
    """Conv1d(C -> F, k) -> ReLU -> Conv1d(F -> C, k) -> dropout, residual, LayerNorm.

    ``CoreNet`` keeps NVIDIA's Sequential indices (convs at 0 and 2). Unlike NVIDIA, the hidden
    activations are masked between the convs: ReLU(bias) on padded positions would otherwise reach
    the last real positions through the second conv's kernel, so the output would depend on padding.

    Shapes: ``(B, L, C)`` and mask ``(B, L)`` (None: no padding) -> ``(B, L, C)``.
    """

    def __init__(self, d_model: int, d_inner: int, kernel_size: int, dropout: float) -> None:
        super().__init__()
        if kernel_size % 2 == 0:
            raise ValueError(f"conv1d_kernel_size: expected an odd kernel, got {kernel_size}")
        padding = kernel_size // 2
        self.CoreNet = nn.Sequential(
            nn.Conv1d(d_model, d_inner, kernel_size, padding=padding),
            nn.ReLU(),
            nn.Conv1d(d_inner, d_model, kernel_size, padding=padding),
            nn.Dropout(dropout),
        )
        self.layer_norm = nn.LayerNorm(d_model)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        conv_in, relu, conv_out, drop = self.CoreNet
        if mask is None:
            hidden = relu(conv_in(x.transpose(1, 2).to(conv_in.weight.dtype)))
        else:
            keep = mask[:, None, :]  # (B, 1, L) bool: multiplying keeps each operand's dtype
            hidden = relu(conv_in((x.transpose(1, 2) * keep).to(conv_in.weight.dtype))) * keep
        return self.layer_norm((x + drop(conv_out(hidden)).transpose(1, 2)).float())  # float32: see above


class FFTLayer(nn.Module):
    """One FFT block: attention then conv feed-forward, each followed by zeroing the padding."""

    def __init__(
        self, d_model: int, n_heads: int, d_head: int, d_inner: int, kernel_size: int, dropout: float, dropatt: float
    ) -> None:
        super().__init__()
        self.dec_attn = MultiHeadAttention(d_model, n_heads, d_head, dropout, dropatt)
        self.pos_ff = ConvFeedForward(d_model, d_inner, kernel_size, dropout)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        """``(B, L, C)``, mask ``(B, L)`` (None: no padding) -> ``(B, L, C)`` with zeros on padded positions."""
        if mask is None:
            return self.pos_ff(self.dec_attn(x, None), None)
        keep = mask.unsqueeze(2).to(x.dtype)
        x = self.dec_attn(x, mask) * keep
        return self.pos_ff(x, mask) * keep


class FFTransformer(nn.Module):
    """A stack of :class:`FFTLayer` over an embedded or given sequence plus sinusoidal positions.

    Args:
        n_layers, n_heads, d_model, d_head: Stack size and widths.
        d_inner: Hidden channels of the conv feed-forward.
        kernel_size: Kernel of the conv feed-forward (odd).
        dropout: Residual dropout in every sub-layer.
        dropatt: Attention-probability dropout.
        dropemb: Dropout on the input plus positions.
        n_embed: Symbol-table size for an encoder (``word_emb``, padding id 0); None for a decoder,
            which takes ``(B, L, d_model)`` features.
    """

    def __init__(
        self,
        n_layers: int,
        n_heads: int,
        d_model: int,
        d_head: int,
        d_inner: int,
        kernel_size: int,
        dropout: float,
        dropatt: float,
        dropemb: float,
        n_embed: int | None = None,
    ) -> None:
        super().__init__()
        self.word_emb = None if n_embed is None else nn.Embedding(n_embed, d_model, padding_idx=0)
        self.pos_emb = PositionalEmbedding(d_model)
        self.drop = nn.Dropout(dropemb)
        self.layers = nn.ModuleList(
            FFTLayer(d_model, n_heads, d_head, d_inner, kernel_size, dropout, dropatt) for _ in range(n_layers)
        )

    def forward(
        self, inputs: torch.Tensor, lengths: torch.Tensor, conditioning: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Encode a padded batch.

        Args:
            inputs: ``(B, L)`` int64 symbol ids (encoder) or ``(B, L, d_model)`` features (decoder).
            lengths: ``(B,)`` real positions per item.
            conditioning: ``(B, 1, d_model)`` (or ``(B, L, d_model)``) added to the embedded input with the
                positions, before the input dropout: FastPitch's scaled speaker embedding. None: nothing.

        Returns:
            ``(B, L, d_model)`` outputs, zero on padding, and the ``(B, L)`` bool mask of real positions.
        """
        x = inputs if self.word_emb is None else self.word_emb(inputs)
        mask = lengths_to_mask(lengths, x.shape[1])
        keep = mask.unsqueeze(2).to(x.dtype)
        x = x + self.pos_emb(x.shape[1]).to(x.dtype)
        if conditioning is not None:
            # NVIDIA adds it after the positions (`inp + pos_emb + conditioning`), so real positions get
            # the same sum in the same order; unlike theirs, padded positions are zeroed with the rest,
            # which changes no real position (attention ignores padded keys, the convs see zeros).
            x = x + conditioning.to(x.dtype)
        x = self.drop(x * keep)
        layer_mask = padding_mask(mask)
        for layer in self.layers:
            x = layer(x, layer_mask)
        return x, mask


def padding_mask(mask: torch.Tensor) -> torch.Tensor | None:
    """``mask`` if some position is padding, else None (the layers then skip their masking).

    While tracing (the ONNX and TorchScript exports, :mod:`tts_pipeline.export`) always ``mask``: a
    traced graph keeps the branch its example took, and it must serve padded batches too.
    """
    if torch.jit.is_tracing():
        return mask
    return None if bool(mask.all()) else mask
