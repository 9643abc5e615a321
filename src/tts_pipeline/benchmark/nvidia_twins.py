"""NVIDIA's networks built with our hyperparameters and loaded with our weights ("twins"), so that a
side-by-side benchmark times the same function on both sides; and the figures that check it does.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import nn

from tts_pipeline.benchmark.nvidia_code import NvidiaCode, load_our_weights, nvidia_fastpitch_arguments
from tts_pipeline.benchmark.random_models import FixedDurations
from tts_pipeline.models.fastpitch import FastPitch
from tts_pipeline.models.fastpitch.model import convert_state_dict as convert_fastpitch
from tts_pipeline.models.hifigan import Discriminators, Generator
from tts_pipeline.models.hifigan.foreign import convert_discriminator_state_dict
from tts_pipeline.models.hifigan.generator import convert_state_dict as convert_generator

NVIDIA_MEL_CHANNELS = 80
"""NVIDIA's generator hard-codes 80 input channels in its first conv."""


def fastpitch_twin(code: NvidiaCode, ours: FastPitch) -> tuple[nn.Module, torch.Tensor | None]:
    """NVIDIA's FastPitch with ``ours``'s hyperparameters and weights, in eval mode.

    Returns:
        The model, and the ``(L_max,)`` fixed durations (frames per symbol) when ``ours`` stands a
        :class:`FixedDurations` in for its duration predictor (random-weight benchmarks): NVIDIA's
        ``infer`` must then get them as ``dur_tgt``. None when ``ours`` predicts its own.
    """
    state = dict(ours.state_dict())
    durations = None
    if isinstance(ours.duration_predictor, FixedDurations):
        # The wrapper's inner predictor is the real one; its log durations go to NVIDIA's dur_tgt.
        prefix = "duration_predictor.predictor."
        state = {
            name.replace(prefix, "duration_predictor.", 1) if name.startswith(prefix) else name: tensor
            for name, tensor in state.items()
            if name != "duration_predictor.log_durations"
        }
        durations = torch.expm1(ours.duration_predictor.log_durations.double()).round().float()
    theirs = code.FastPitch(**nvidia_fastpitch_arguments(code, ours.model_config()))
    load_our_weights(theirs, state, convert_fastpitch, "FastPitch")
    return theirs.eval(), durations


def generator_twin(code: NvidiaCode, ours: Generator) -> nn.Module:
    """NVIDIA's HiFi-GAN generator with ``ours``'s sizes and weights, weight norm removed when ours has it
    removed (inference) and kept otherwise (training).

    Raises:
        ValueError when ``ours`` takes other than 80 mel channels (NVIDIA's are fixed).
    """
    config: dict[str, Any] = ours.model_config()
    if int(config["n_mels"]) != NVIDIA_MEL_CHANNELS:
        raise ValueError(f"NVIDIA's generator takes {NVIDIA_MEL_CHANNELS} mel channels; ours {config['n_mels']}")
    theirs = code.Generator({key: value for key, value in config.items() if key != "n_mels"})
    if not ours.has_weight_norm:
        theirs.remove_weight_norm()
    n_blocks = len(config["resblock_kernel_sizes"])
    load_our_weights(theirs, ours.state_dict(), lambda state: convert_generator(state, n_blocks=n_blocks), "HiFi-GAN")
    return theirs.train(ours.training)


def discriminator_twins(code: NvidiaCode, ours: Discriminators, periods: list[int]) -> tuple[nn.Module, nn.Module]:
    """NVIDIA's MPD (``periods``) and MSD with ``ours``'s weights, as their ``train.py`` builds them
    (separate real / generated calls: ``concat_fwd`` off, grouped convs under AMP)."""
    mpd = code.MultiPeriodDiscriminator(periods=list(periods))
    msd = code.MultiScaleDiscriminator()
    load_our_weights(mpd, ours.mpd.state_dict(), convert_discriminator_state_dict, "MPD")
    load_our_weights(msd, ours.msd.state_dict(), convert_discriminator_state_dict, "MSD")
    return mpd.train(ours.training), msd.train(ours.training)


def snr_db(reference: torch.Tensor, other: torch.Tensor) -> float:
    """Signal-to-noise ratio in dB of ``other`` against ``reference`` (same shape): ``10 log10(sum
    ref^2 / sum (other - ref)^2)``; infinite when they are equal."""
    if reference.shape != other.shape:
        raise ValueError(f"snr: shapes differ, {tuple(reference.shape)} and {tuple(other.shape)}")
    reference, other = reference.double(), other.double()
    noise = float((other - reference).pow(2).sum())
    signal = float(reference.pow(2).sum())
    return math.inf if noise == 0 else 10.0 * math.log10(signal / noise)


def max_abs_diff(a: torch.Tensor, b: torch.Tensor) -> float:
    """Largest absolute elementwise difference of two same-shape tensors."""
    if a.shape != b.shape:
        raise ValueError(f"max abs diff: shapes differ, {tuple(a.shape)} and {tuple(b.shape)}")
    return float((a.detach().double() - b.detach().double()).abs().max())
