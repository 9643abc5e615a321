"""Full-size recipe models with random weights, for measuring speed without trained models.

The cost of a forward pass does not depend on the weights, with one exception: FastPitch's predicted
durations decide how many mel frames the decoder and the vocoder work on, and random weights predict
arbitrary ones. :class:`FixedDurations` therefore stands in for the duration predictor: it still runs
the predictor (its cost stays in the call) and then returns fixed durations, so the mel has a chosen
length, e.g. NVIDIA's 693 frames (8.05 s) for their 128-character benchmark phrase.
"""

from __future__ import annotations

import torch
from torch import nn

from tts_pipeline.config import AudioConfig, FastPitchConfig, HiFiGANConfig
from tts_pipeline.models.fastpitch import FastPitch
from tts_pipeline.models.hifigan import Generator

RECIPE_SYMBOL_SET = "english_basic"


def spread_frames(n_frames: int, n_symbols: int) -> list[int]:
    """``n_symbols`` integer durations summing to ``n_frames``, as even as possible."""
    if n_symbols < 1 or n_frames < 0:
        raise ValueError(f"spread_frames: expected n_symbols >= 1 and n_frames >= 0, got {n_symbols}, {n_frames}")
    return [(i + 1) * n_frames // n_symbols - i * n_frames // n_symbols for i in range(n_symbols)]


class FixedDurations(nn.Module):
    """Runs a duration predictor, then returns ``log(d + 1)`` of fixed durations instead of its output.

    Args:
        predictor: FastPitch's duration predictor, ``(B, L, C)`` and ``(B, L)`` mask -> ``(B, L)``.
        durations: ``(L_max,)`` frames per symbol position. Inputs may be shorter; a longer one starts
            over at position ``L_max`` (``inference.amp: auto`` times a model on its own probe sentence).

    The output is ``(B, L)``, 0 on padding, like the predictor's own.
    """

    def __init__(self, predictor: nn.Module, durations: torch.Tensor) -> None:
        super().__init__()
        self.predictor = predictor
        self.register_buffer("log_durations", torch.log1p(durations.double()).float())

    def forward(self, encoded: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        predicted = self.predictor(encoded, mask)
        positions = torch.arange(predicted.shape[1], device=predicted.device) % self.log_durations.shape[0]
        fixed = self.log_durations[positions].to(predicted.dtype)
        return fixed.expand_as(predicted) * mask.to(predicted.dtype)


def random_fastpitch(n_symbols: int, n_frames: int, *, seed: int = 0, n_mels: int = 80) -> FastPitch:
    """FastPitch 1.1 as the recipe configures it (``FastPitchConfig()`` defaults, the 148 ``english_basic``
    symbols), random weights, eval mode, producing ``n_frames`` frames for any ``n_symbols``-symbol input."""
    from tts_pipeline.text import get_symbols

    torch.manual_seed(seed)
    model = FastPitch(FastPitchConfig(), len(get_symbols(RECIPE_SYMBOL_SET)), n_mels).eval()
    durations = torch.tensor(spread_frames(n_frames, n_symbols), dtype=torch.float64)
    model.duration_predictor = FixedDurations(model.duration_predictor, durations)
    return model


def random_hifigan(audio: AudioConfig, *, seed: int = 0) -> Generator:
    """HiFi-GAN v1 (``HiFiGANConfig()`` defaults) with random weights, weight norm folded, eval mode."""
    torch.manual_seed(seed)
    generator = Generator(HiFiGANConfig(), audio.n_mel_channels)
    generator.remove_weight_norm()
    return generator.eval()
