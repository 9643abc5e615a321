"""A HiFi-GAN generator prepared for inference on a CPU: weights cast (bf16) and laid out once, convs
fused with oneDNN.

Autocast runs the generator in bf16 by casting every weight on every call and leaves the leaky ReLUs
and residual additions as separate passes over large activations (at 22 kHz the last stage holds
``32 x 256 T`` values per utterance); on a CPU those passes, and the allocations behind them, cost a
third of the time. :class:`FusedCpuGenerator` holds the weights in bf16, reordered into oneDNN's
blocked layout once (not per call), and runs each conv through oneDNN's fused kernels (the ones
``torch.compile`` emits on CPUs, without its minutes of compilation or recompiles per mel length):

- ``conv -> leaky_relu`` as one kernel (the dilated conv of a ResBlock1 pair);
- ``x + conv(...)`` written into ``x`` by the conv itself (every residual addition);
- ``tanh(conv_post(...))`` as one kernel;
- the mean over the parallel resblocks folded into the next layer's weights: leaky ReLU commutes
  with a positive scale, and the next layer is linear.

Activations are ``(B, C, 1, L)`` in channels-last order, a 2-D view of the 1-D convs, because
oneDNN's fused residual addition takes 2-D convs only and channels-last spares a layout reorder per
conv. ``conv_pre`` and ``conv_post`` stay in float32: they are cheap (80 and 1 channels) and keep the
input mel and the output samples at full precision.

With ``dtype=torch.float32`` the module computes the generator's own function, in float32 (the tests
check the fusion against :class:`Generator` that way). It is a way to run of its own too: the fusions
and the prepacked layout pay in float32 as well, and on a CPU whose bf16 is slow it is the fastest
(``inference.amp: auto`` times it beside the bf16 copy and the plain generator).
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from tts_pipeline.models.hifigan.generator import FINAL_LRELU_SLOPE, LRELU_SLOPE, Generator, ResBlock1
from tts_pipeline.precision import Precision

# The input length the prepacked weight layouts are chosen for (about two seconds at the middle stages).
_NOMINAL_LENGTH = 4096


def fused_cpu_kernels_available() -> bool:
    """Whether this torch build has oneDNN and its fused conv operators."""
    ops = torch.ops.mkldnn
    return torch.backends.mkldnn.is_available() and all(
        hasattr(ops, name)
        for name in (
            "_convolution_pointwise",
            "_convolution_pointwise_",
            "_convolution_transpose_pointwise",
            "_reorder_convolution_weight",
        )
    )


def onednn_bf16_available() -> bool:
    """Whether oneDNN runs bf16 convolutions on this CPU: it needs AVX512-BW/VL/DQ or AVX-NE-CONVERT and
    otherwise refuses to lay out a bf16 weight (an AVX2-only CPU such as a Zen 3 EPYC). Without it, CPU
    bf16 runs the generator under autocast, which such a CPU emulates."""
    supported = getattr(torch.ops.mkldnn, "_is_mkldnn_bf16_supported", None)
    return fused_cpu_kernels_available() and supported is not None and bool(supported())


class _Conv(nn.Module):
    """One conv of the generator as a oneDNN call on ``(B, C, 1, L)`` channels-last activations.

    Args:
        conv: A ``Conv1d`` or ``ConvTranspose1d`` (a weight-normalised one gives its normalised weight).
        dtype: The dtype of the weight, bias and activations.
        scale: Multiplies the weight (not the bias): a fold of the scale of this conv's input.
    """

    def __init__(self, conv: nn.Conv1d | nn.ConvTranspose1d, dtype: torch.dtype, scale: float = 1.0) -> None:
        super().__init__()
        self.transposed = isinstance(conv, nn.ConvTranspose1d)
        self.padding = [0, int(conv.padding[0])]
        self.stride = [1, int(conv.stride[0])]
        self.dilation = [1, int(conv.dilation[0])]
        self.output_padding = [0, int(conv.output_padding[0])] if self.transposed else [0, 0]
        # Scaled in float32, then rounded once to the compute dtype.
        weight = (conv.weight.detach().float() * scale).unsqueeze(2).to(dtype)
        weight = weight.contiguous(memory_format=torch.channels_last)
        bias = conv.bias if conv.bias is not None else torch.zeros(weight.shape[1 if self.transposed else 0])
        self.bias = bias.detach().to(dtype)
        if not self.transposed:
            # Reordered once into oneDNN's blocked layout instead of on every call. The layout is
            # chosen for a nominal input length; any length and batch size runs with it.
            input_size = [1, weight.shape[1], 1, _NOMINAL_LENGTH]
            weight = torch.ops.mkldnn._reorder_convolution_weight(
                weight, self.padding, self.stride, self.dilation, 1, input_size
            )
        # Plain attributes, not buffers: a oneDNN-blocked tensor has no storage to save or move, and
        # this module is built for inference on the CPU, never saved.
        self.weight = weight

    def forward(self, x: torch.Tensor, activation: str = "none", scalars: tuple[float, ...] = ()) -> torch.Tensor:
        """``activation(conv(x))``; ``activation`` is a oneDNN post-op name (``none``, ``leaky_relu``, ``tanh``)."""
        ops = torch.ops.mkldnn
        if self.transposed:
            return ops._convolution_transpose_pointwise(
                x, self.weight, self.bias, self.padding, self.output_padding, self.stride, self.dilation, 1,
                activation, list(scalars), "",
            )  # fmt: skip
        return ops._convolution_pointwise(
            x, self.weight, self.bias, self.padding, self.stride, self.dilation, 1, activation, list(scalars), ""
        )

    def residual(self, x: torch.Tensor, skip: torch.Tensor, *, in_place: bool) -> torch.Tensor:
        """``skip + conv(x)``, written into ``skip`` when ``in_place`` (else a new tensor)."""
        ops = torch.ops.mkldnn
        if not in_place and skip.shape[1] == 1:
            # torch 2.11's oneDNN cannot build the fused addition's output for a single channel ("could
            # not create a memory"; 2.13 can). Only tiny test generators have one: add separately.
            return skip + self(x)
        args = (self.weight, self.bias, self.padding, self.stride, self.dilation, 1, "add", 1.0, None, [], None)
        if in_place:
            return ops._convolution_pointwise_(skip, x, *args)
        return ops._convolution_pointwise(x, skip, *args)


class _Block(nn.Module):
    """A ResBlock1 or ResBlock2 on ``(B, C, 1, L)``; the block's input is left untouched."""

    def __init__(self, block: nn.Module, dtype: torch.dtype) -> None:
        super().__init__()
        self.pairs = isinstance(block, ResBlock1)
        if self.pairs:
            self.dilated = nn.ModuleList(_Conv(conv, dtype) for conv in block.convs1)
            self.plain = nn.ModuleList(_Conv(conv, dtype) for conv in block.convs2)
        else:
            self.plain = nn.ModuleList(_Conv(conv, dtype) for conv in block.convs)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for index, plain in enumerate(self.plain):
            h = F.leaky_relu(x, LRELU_SLOPE)
            if self.pairs:
                h = self.dilated[index](h, "leaky_relu", (LRELU_SLOPE,))
            # The first addition makes the block's own copy: the parallel blocks share their input.
            x = plain.residual(h, x, in_place=index > 0)
        return x


class FusedCpuGenerator(nn.Module):
    """:class:`Generator`'s function with bf16 (or float32) weights and fused oneDNN convs (module docstring).

    Args:
        generator: The generator; its weights are read (weight norm folded in), not modified or kept.
        dtype: The compute dtype of the body (``conv_pre`` and ``conv_post`` run in float32).

    Shapes: ``(B, n_mels, T)`` float mel -> ``(B, 1, T * hop_length)`` float32 waveform.
    """

    def __init__(self, generator: Generator, dtype: torch.dtype = torch.bfloat16) -> None:
        super().__init__()
        self.dtype = dtype
        self.hop_length = generator.hop_length
        blocks_per_stage = len(generator.resblocks[0])
        mean = 1.0 / blocks_per_stage
        self.conv_pre = _Conv(generator.conv_pre, torch.float32)
        # Every stage after the first starts from the previous stage's resblock sum; its mean is
        # taken by the first conv that reads it.
        self.ups = nn.ModuleList(
            _Conv(up, dtype, 1.0 if stage == 0 else mean) for stage, up in enumerate(generator.ups)
        )
        self.resblocks = nn.ModuleList(
            nn.ModuleList(_Block(block, dtype) for block in blocks) for blocks in generator.resblocks
        )
        self.conv_post = _Conv(generator.conv_post, torch.float32, mean)

    @torch.no_grad()
    def forward(self, mel: torch.Tensor) -> torch.Tensor:
        """``(B, n_mels, T)`` log-mel -> ``(B, 1, T * hop_length)`` float32 waveform in (-1, 1)."""
        # Autocast would recast the prepared weights; every dtype here is chosen already.
        with torch.autocast(device_type="cpu", enabled=False):
            x = mel.float().unsqueeze(2).contiguous(memory_format=torch.channels_last)
            # A fresh copy even when dtype is float32, so that the in-place activation below is ours.
            x = self.conv_pre(x).to(self.dtype, copy=True)
            for up, blocks in zip(self.ups, self.resblocks, strict=True):
                # x is always a tensor of this call's own (conv output or resblock sum): overwrite it.
                x = up(F.leaky_relu_(x, LRELU_SLOPE))
                total = blocks[0](x)
                for block in blocks[1:]:
                    total = total.add_(block(x))
                x = total
            x = F.leaky_relu_(x, FINAL_LRELU_SLOPE).float()
            return self.conv_post(x, "tanh").squeeze(2)


def can_fuse(generator: nn.Module) -> bool:
    """Whether :class:`FusedCpuGenerator` covers ``generator``'s layers: jik876's transposed convolutions,
    without a harmonic source."""
    return isinstance(generator, Generator) and not generator.has_source and "interpolate" not in generator.upsampling


def prepare_generator(generator: Generator, precision: Precision) -> nn.Module:
    """The module that runs ``generator`` for inference at ``precision``.

    CPU bf16 (where oneDNN's fused kernels exist and run bf16 on this CPU) gets a
    :class:`FusedCpuGenerator`; everything else (float32, CUDA, bf16 on an AVX2-only CPU) gets
    ``generator`` itself, so those paths compute exactly what they did. The prepared module is a
    snapshot: later changes to ``generator``'s weights do not reach it. A generator
    with a harmonic source or interpolating upsampling runs as it is (the fusion covers jik876's layers).
    """
    fused = precision.device.type == "cpu" and precision.amp == "bf16" and onednn_bf16_available()
    if fused and can_fuse(generator):
        return FusedCpuGenerator(generator, torch.bfloat16).eval()
    return generator
