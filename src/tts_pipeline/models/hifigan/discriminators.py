"""HiFi-GAN's discriminators: multi-period (MPD) and multi-scale (MSD), reference section 2.3.

Each family returns a :class:`DiscriminatorOutput` holding, per sub-discriminator, its logits and its
layer activations (the feature-matching targets, conv_post's output included). ``channels_scale``
shrinks every conv width (the demo trains a 1/8-width pair on a CPU); 1.0 is the paper's network.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F
from torch.nn.utils.parametrizations import spectral_norm, weight_norm

LRELU_SLOPE = 0.1

# (in, out) widths at channels_scale 1.0; the input of the first conv is always 1 channel.
MPD_CHANNELS = (32, 128, 512, 1024, 1024)
# MSD convs: (out width, kernel, stride, groups); widths at channels_scale 1.0.
MSD_LAYERS = (
    (128, 15, 1, 1),
    (128, 41, 2, 4),
    (256, 41, 2, 16),
    (512, 41, 4, 16),
    (1024, 41, 4, 16),
    (1024, 41, 1, 16),
    (1024, 5, 1, 1),
)
# Every hidden MSD width is rounded to a multiple of the largest group count, so that any scale
# keeps the grouped convs valid (at 1.0 and at 0.125 the widths are exact).
_MSD_WIDTH_MULTIPLE = 16


@dataclass
class DiscriminatorOutput:
    """What one discriminator family says about one batch of audio.

    Attributes:
        logits: One ``(B, L_i)`` tensor per sub-discriminator (conv_post's output, flattened).
        features: Per sub-discriminator, its activations after every conv layer, conv_post's output
            last (MPD: 5 + 1 maps of shape ``(B, C, frames, period)``; MSD: 7 + 1 of ``(B, C, L)``).
    """

    logits: list[torch.Tensor]
    features: list[list[torch.Tensor]]


def scaled_width(width: int, scale: float, multiple: int = 1) -> int:
    """``width * scale`` rounded to the nearest positive multiple of ``multiple``."""
    if scale <= 0:
        raise ValueError(f"channels_scale: expected > 0, got {scale}")
    return max(multiple, int(round(width * scale / multiple)) * multiple)


class PeriodDiscriminator(nn.Module):
    """One MPD sub-discriminator: the waveform folded into ``period`` columns, 2-D convs along time.

    Args:
        period: Samples per row ``p``.
        channels_scale: Multiplies every conv width.
    """

    def __init__(self, period: int, channels_scale: float = 1.0) -> None:
        super().__init__()
        if period < 1:
            raise ValueError(f"mpd_periods: expected periods >= 1, got {period}")
        self.period = int(period)
        widths = [1] + [scaled_width(c, channels_scale) for c in MPD_CHANNELS]
        strides = [3, 3, 3, 3, 1]
        self.convs = nn.ModuleList(
            weight_norm(nn.Conv2d(c_in, c_out, (5, 1), stride=(stride, 1), padding=(2, 0)))
            for c_in, c_out, stride in zip(widths[:-1], widths[1:], strides, strict=True)
        )
        self.conv_post = weight_norm(nn.Conv2d(widths[-1], 1, (3, 1), padding=(1, 0)))

    def forward(self, audio: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """``(B, 1, N)`` -> logits ``(B, L)`` and the 6 activations."""
        batch, channels, length = audio.shape
        if length % self.period:
            # Reflect-pad on the right up to a whole number of periods, then fold.
            audio = F.pad(audio, (0, self.period - length % self.period), mode="reflect")
            length = audio.shape[-1]
        return _conv_stack(self.convs, self.conv_post, audio.view(batch, channels, length // self.period, self.period))


class MultiPeriodDiscriminator(nn.Module):
    """Period discriminators, one per period (the recipe's periods are 2, 3, 5, 7, 11).

    Args:
        periods: The periods.
        channels_scale: Multiplies every conv width (1.0 = the paper's).
    """

    def __init__(self, periods: Sequence[int], channels_scale: float = 1.0) -> None:
        super().__init__()
        if not periods:
            raise ValueError("mpd_periods: expected at least one period")
        self.discriminators = nn.ModuleList(PeriodDiscriminator(p, channels_scale) for p in periods)

    def forward(self, audio: torch.Tensor) -> DiscriminatorOutput:
        """``audio`` ``(B, 1, N)`` -> one logit tensor and 6 feature maps per period."""
        _check_audio(audio)
        logits, features = [], []
        for discriminator in self.discriminators:
            score, maps = discriminator(audio)
            logits.append(score)
            features.append(maps)
        return DiscriminatorOutput(logits=logits, features=features)


class ScaleDiscriminator(nn.Module):
    """One MSD sub-discriminator: strided, grouped 1-D convs over the waveform.

    Args:
        use_spectral_norm: Spectral instead of weight normalisation (MSD's first scale).
        channels_scale: Multiplies every conv width.
    """

    def __init__(self, use_spectral_norm: bool = False, channels_scale: float = 1.0) -> None:
        super().__init__()
        norm = spectral_norm if use_spectral_norm else weight_norm
        convs = []
        c_in = 1
        for width, kernel, stride, groups in MSD_LAYERS:
            c_out = scaled_width(width, channels_scale, _MSD_WIDTH_MULTIPLE)
            convs.append(norm(nn.Conv1d(c_in, c_out, kernel, stride=stride, groups=groups, padding=kernel // 2)))
            c_in = c_out
        self.convs = nn.ModuleList(convs)
        self.conv_post = norm(nn.Conv1d(c_in, 1, 3, padding=1))

    def forward(self, audio: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """``(B, 1, N)`` -> logits ``(B, L)`` and the 8 activations."""
        return _conv_stack(self.convs, self.conv_post, audio)


class MultiScaleDiscriminator(nn.Module):
    """Three scale discriminators on the waveform and on its 2x and 4x average-pooled versions.

    Scale 0 is spectrally normalised, scales 1 and 2 weight-normalised; the pooling is
    ``AvgPool1d(4, 2, padding=1)`` (NVIDIA's; jik876 pads by 2).

    Args:
        channels_scale: Multiplies every conv width (hidden widths rounded to multiples of 16, so
            the grouped convs stay valid).
    """

    def __init__(self, channels_scale: float = 1.0) -> None:
        super().__init__()
        self.discriminators = nn.ModuleList(
            [
                ScaleDiscriminator(use_spectral_norm=True, channels_scale=channels_scale),
                ScaleDiscriminator(channels_scale=channels_scale),
                ScaleDiscriminator(channels_scale=channels_scale),
            ]
        )
        self.meanpools = nn.ModuleList([nn.AvgPool1d(4, 2, padding=1), nn.AvgPool1d(4, 2, padding=1)])

    def forward(self, audio: torch.Tensor) -> DiscriminatorOutput:
        """``audio`` ``(B, 1, N)`` -> one logit tensor and 8 feature maps per scale."""
        _check_audio(audio)
        logits, features = [], []
        x = audio
        for index, discriminator in enumerate(self.discriminators):
            if index > 0:
                x = self.meanpools[index - 1](x)
            score, maps = discriminator(x)
            logits.append(score)
            features.append(maps)
        return DiscriminatorOutput(logits=logits, features=features)


def _conv_stack(convs: nn.ModuleList, conv_post: nn.Module, x: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """What every sub-discriminator does with its input: each conv then a leaky ReLU, then ``conv_post``;
    its logits flattened to ``(B, L)`` and every activation, ``conv_post``'s output last. A function, not
    a shared base class, so that the modules and their state_dict keys stay those of the published
    checkpoints."""
    features = []
    for conv in convs:
        x = F.leaky_relu(conv(x), LRELU_SLOPE)
        features.append(x)
    x = conv_post(x)
    features.append(x)
    return torch.flatten(x, 1, -1), features


def _check_audio(audio: torch.Tensor) -> None:
    if audio.dim() != 3 or audio.shape[1] != 1:
        raise ValueError(f"audio: expected shape (B, 1, N), got {tuple(audio.shape)}")
