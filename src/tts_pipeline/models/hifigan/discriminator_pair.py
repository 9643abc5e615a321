"""Both HiFi-GAN discriminator families (MPD and MSD) as one module, and the split of their verdicts
on a batch of real and generated audio concatenated together."""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch import nn

from tts_pipeline.models.hifigan.discriminators import (
    DiscriminatorOutput,
    MultiPeriodDiscriminator,
    MultiScaleDiscriminator,
)


class DiscriminatorsOutput(NamedTuple):
    """Both discriminator families' verdicts on one batch."""

    mpd: DiscriminatorOutput
    msd: DiscriminatorOutput


class Discriminators(nn.Module):
    """MPD and MSD as one module: one DDP wrapper, one optimiser, one call per batch."""

    def __init__(self, mpd: MultiPeriodDiscriminator, msd: MultiScaleDiscriminator) -> None:
        super().__init__()
        self.mpd = mpd
        self.msd = msd

    def forward(self, audio: torch.Tensor) -> DiscriminatorsOutput:
        """``(B, 1, N)`` audio -> both families' logits and feature maps."""
        return DiscriminatorsOutput(mpd=self.mpd(audio), msd=self.msd(audio))


def split_output(output: DiscriminatorOutput, first: int) -> tuple[DiscriminatorOutput, DiscriminatorOutput]:
    """Split a discriminator output on a concatenated batch into items ``[:first]`` and ``[first:]``
    (real then generated audio, when both went through in one call)."""

    def part(piece: slice) -> DiscriminatorOutput:
        return DiscriminatorOutput(
            logits=[logits[piece] for logits in output.logits],
            features=[[fmap[piece] for fmap in maps] for maps in output.features],
        )

    return part(slice(None, first)), part(slice(first, None))
