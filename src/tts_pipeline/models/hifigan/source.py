"""A harmonic excitation for the HiFi-GAN generator, at the pitch the mel carries (``hifigan.source``).

Why: a generator that only upsamples mel frames has nothing periodic to start from but the frames
themselves. Short of tens of thousands of adversarial steps it voices speech at the frame rate
(``sampling_rate / hop``, 86 Hz at 22.05 kHz / 256) whatever pitch the mel asks for: the hum of a
vocoder trained for minutes. Neural source-filter vocoders (Wang et al.'s NSF, and the HiFi-GAN
variants built on it) add a sine excitation at the speaker's F0 to every upsampling stage; the
network then shapes a signal that already has the right pitch. On its own the excitation is not
enough: a generator whose first stage is a strided transposed convolution still has the pattern that
stage repeats once per mel frame to voice with, and within the demo's steps goes back to it; the
first stage must interpolate (``hifigan.upsampling``).

The F0 comes from the mel itself (:class:`PitchHead`, trained on the pitch features), so the vocoder
keeps its contract, log-mel in and audio out, for every caller: synthesis, streaming, serving, export,
and mels from any acoustic model.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F
from torch.nn.utils import parametrize

# The pitch head classifies each frame's F0 into bins of 20 cents from 50 Hz to 1 kHz (CREPE's way:
# a regression of log F0 from a mel trained for a thousand steps lands 40-50 cents off, these bins
# 10 cents on the demo corpus), with targets blurred by a Gaussian of 25 cents.
F0_MIN_HZ = 50.0
BIN_CENTS = 20.0
N_BINS = 260
TARGET_SIGMA_CENTS = 25.0
# The bins' cross-entropy outweighs the voicing term (it is a mean over many mostly-empty bins).
BIN_LOSS_WEIGHT = 10.0
# The head's parameters move this many times faster than the generator's learning rate: it is a small
# classifier trained from scratch beside a generator tuned for a much lower rate.
HEAD_RATE_FACTOR = 5.0
# The log-mel as the head sees it: roughly zero-mean, unit-range for speech (log 1e-5 = -11.5 is silence).
MEL_OFFSET, MEL_SCALE = 5.0, 3.0
# Each harmonic's amplitude in the excitation and the noise levels of NSF's source module: a little
# noise on voiced samples (breath), more where the mel is unvoiced (the excitation of fricatives).
HARMONIC_AMPLITUDE = 0.1
VOICED_NOISE = 0.003
UNVOICED_NOISE = HARMONIC_AMPLITUDE / 3
# Inference draws its noise from a fixed table (seeded once, tiled): the same mel gives the same audio
# on every call and in every runtime (ONNX has no torch RNG).
NOISE_TABLE_SAMPLES = 1 << 15
NOISE_TABLE_SEED = 1234
# The band-limited source fades each harmonic out over this top fraction of the band below a stage's Nyquist
# frequency, so that one gliding past it does not switch on and off in a step.
NYQUIST_FADE = 0.2


class _Faster(nn.Module):
    """A parametrisation that stores a tensor divided by ``factor``: Adam moves the stored value by about
    the learning rate per step, so the tensor itself moves ``factor`` times as far."""

    def __init__(self, factor: float) -> None:
        super().__init__()
        self.factor = factor

    def forward(self, stored: torch.Tensor) -> torch.Tensor:
        return stored * self.factor

    def right_inverse(self, value: torch.Tensor) -> torch.Tensor:
        return value / self.factor


def _bin_centres() -> torch.Tensor:
    """``(N_BINS,)`` bin centres in log2 Hz."""
    return math.log2(F0_MIN_HZ) + torch.arange(N_BINS, dtype=torch.float32) * (BIN_CENTS / 1200)


class PitchHead(nn.Module):
    """Log-mel ``(B, n_mels, T)`` -> ``(B, 1 + N_BINS, T)``: per frame a voicing logit and one logit per
    F0 bin. Three convolutions, about 85 ms of context per frame at hop 256."""

    def __init__(self, n_mels: int, channels: int = 128) -> None:
        super().__init__()
        self.layers = nn.Sequential(
            nn.Conv1d(n_mels, channels, 5, padding=2),
            nn.LeakyReLU(0.1),
            nn.Conv1d(channels, channels, 5, padding=2),
            nn.LeakyReLU(0.1),
            nn.Conv1d(channels, 1 + N_BINS, 1),
        )
        for layer in self.layers:
            if isinstance(layer, nn.Conv1d):
                for name in ("weight", "bias"):
                    parametrize.register_parametrization(layer, name, _Faster(HEAD_RATE_FACTOR))
        self.register_buffer("centres", _bin_centres(), persistent=False)

    def forward(self, mel: torch.Tensor) -> torch.Tensor:
        return self.layers((mel + MEL_OFFSET) / MEL_SCALE)

    def f0_of(self, prediction: torch.Tensor) -> torch.Tensor:
        """``(B, 1 + N_BINS, T)`` head output -> ``(B, T)`` F0 in Hz, 0 on frames it calls unvoiced: the
        probability-weighted mean of the bins within 80 cents of the most likely one."""
        probabilities = torch.sigmoid(prediction[:, 1:])
        best = probabilities.argmax(dim=1, keepdim=True)  # (B, 1, T)
        bins = torch.arange(N_BINS, device=prediction.device)[None, :, None]
        weights = probabilities * ((bins - best).abs() <= 4).to(probabilities.dtype)
        log2_f0 = (weights * self.centres[None, :, None]).sum(dim=1) / weights.sum(dim=1).clamp(min=1e-9)
        voiced = prediction[:, 0] > 0
        # 2 ** x as exp(x ln 2): ONNX has no exp2
        return torch.where(voiced, torch.exp(log2_f0 * math.log(2.0)), torch.zeros_like(log2_f0))


def pitch_head_loss(prediction: torch.Tensor, f0: torch.Tensor) -> torch.Tensor:
    """The head's loss: voicing cross-entropy on every frame plus, on voiced frames, the bins'
    cross-entropy against a Gaussian of :data:`TARGET_SIGMA_CENTS` around the target.

    Args:
        prediction: ``(B, 1 + N_BINS, T)`` head output.
        f0: ``(B, T)`` target F0 in Hz (the pitch features), 0 = unvoiced.
    """
    voiced = f0 > 0
    logits = prediction.float()
    loss = F.binary_cross_entropy_with_logits(logits[:, 0], voiced.float())
    if voiced.any():
        centres = _bin_centres().to(f0.device)
        distance = (centres[None, :, None] - torch.log2(f0.float().clamp(min=1.0))[:, None, :]) * 1200
        target = torch.exp(-0.5 * (distance / TARGET_SIGMA_CENTS) ** 2)
        # zero beyond 4 sigma: the Gaussian's far tail is subnormal in float32, and subnormal numbers
        # make every later CPU operation on them (gradients, Adam's moments) a hundred times slower
        target = torch.where(target > 3e-4, target, torch.zeros_like(target))
        per_frame = F.binary_cross_entropy_with_logits(logits[:, 1:], target, reduction="none").mean(dim=1)
        loss = loss + BIN_LOSS_WEIGHT * per_frame[voiced].mean()
    return loss


class HarmonicSource(nn.Module):
    """F0 per frame ``(B, T)`` (Hz, 0 = unvoiced) -> excitation ``(B, 1, T * hop)`` in (-1, 1).

    The F0 is interpolated linearly to the sample rate; on voiced samples the excitation holds
    ``n_harmonics`` sines at multiples of it (those below Nyquist), phase-continuous, plus a little
    noise; on unvoiced samples noise alone. A learned 1x1 convolution mixes the harmonics (the
    excitation's spectral tilt). Training draws fresh noise and a random starting phase per item;
    inference uses a fixed noise table and phase 0, so it is deterministic.

    With ``merged=False`` (band-limited injection) there is no mixing convolution: :meth:`phase` and
    :meth:`harmonics_at` give each stage the separate harmonics sampled at that stage's own rate.
    """

    def __init__(self, hop_length: int, sampling_rate: int, n_harmonics: int, merged: bool = True) -> None:
        super().__init__()
        self.hop_length = hop_length
        self.sampling_rate = sampling_rate
        self.register_buffer("multiples", torch.arange(1, n_harmonics + 1, dtype=torch.float32)[None, :, None])
        # one row per harmonic, so that their noises are independent; rebuilt from the seed, not saved
        noise = torch.randn(n_harmonics, NOISE_TABLE_SAMPLES, generator=torch.Generator().manual_seed(NOISE_TABLE_SEED))
        self.register_buffer("noise_table", noise, persistent=False)
        self.merge = nn.Conv1d(n_harmonics, 1, 1) if merged else None

    def phase(self, f0: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(B, T)`` F0 -> per sample ``(B, 1, T * hop)`` each: the fundamental's phase in cycles [0, 1),
        the F0 in Hz (linear between frames) and voicing (1 or 0, the nearest frame's)."""
        frames = f0[:, None].float()
        per_sample = F.interpolate(frames, scale_factor=float(self.hop_length), mode="linear")  # (B, 1, N)
        voiced = F.interpolate((frames > 0).float(), scale_factor=float(self.hop_length))  # nearest frame's
        # The phase in cycles, summed in float64 and kept to [0, 1) before it is multiplied: in float32 a
        # running sum of 10^5 increments drifts by a sample-dependent amount that differs between runtimes
        # (ONNX Runtime against torch: 55 dB apart after 3.5 s), and radians would reach 10^4 in ten seconds.
        cycles = torch.cumsum(per_sample.double() / self.sampling_rate, dim=-1)
        if self.training:
            cycles = cycles + torch.rand(f0.shape[0], 1, 1, device=f0.device, dtype=cycles.dtype)
        return (cycles - torch.floor(cycles)).float(), per_sample, voiced

    def forward(self, f0: torch.Tensor) -> torch.Tensor:
        assert self.merge is not None, "a band-limited source has no merged excitation: use harmonics_at"
        cycles, per_sample, voiced = self.phase(f0)
        below_nyquist = (per_sample * self.multiples < self.sampling_rate / 2).float()
        return torch.tanh(self.merge(self._excitation(cycles, below_nyquist, voiced)))

    def harmonics_at(self, phase: tuple[torch.Tensor, torch.Tensor, torch.Tensor], stride: int) -> torch.Tensor:
        """The harmonics ``(B, H, N / stride)`` at ``sampling_rate / stride``: each of :meth:`phase`'s
        ``(B, 1, N)`` sampled at the middle of every ``stride`` samples, the sines built at that rate.

        Band-limited: a harmonic fades out over the top :data:`NYQUIST_FADE` of the band below this
        rate's Nyquist frequency and is silent above it, so nothing aliases (sines at 22.05 kHz brought
        to 689 Hz by a strided convolution fold every harmonic above 345 Hz onto a false low pitch).
        """
        cycles, per_sample, voiced = (part[..., stride // 2 :: stride] for part in phase)
        nyquist = self.sampling_rate / stride / 2
        inside = ((nyquist - per_sample * self.multiples) / (NYQUIST_FADE * nyquist)).clamp(0.0, 1.0)
        return self._excitation(cycles, inside, voiced)

    def _excitation(self, cycles: torch.Tensor, gains: torch.Tensor, voiced: torch.Tensor) -> torch.Tensor:
        """The harmonics ``(B, H, n)`` of the fundamental's phase ``cycles`` ``(B, 1, n)``, each scaled by
        its ``gains`` ``(B, H, n)`` (0 above Nyquist) on voiced samples, plus the source's noise."""
        harmonic_cycles = cycles * self.multiples
        harmonics = torch.sin(2 * math.pi * (harmonic_cycles - torch.floor(harmonic_cycles)))
        harmonics = HARMONIC_AMPLITUDE * harmonics * gains * voiced
        noise = self._noise(harmonics)
        return harmonics + noise * (VOICED_NOISE * voiced + UNVOICED_NOISE * (1 - voiced))

    def _noise(self, like: torch.Tensor) -> torch.Tensor:
        """Unit Gaussian noise shaped like ``like`` ``(B, H, N)``: fresh in training, the table at inference."""
        if self.training:
            return torch.randn_like(like)
        n = like.shape[-1]
        table = self.noise_table.repeat(1, n // NOISE_TABLE_SAMPLES + 1)[:, :n]
        return table[None].expand(like.shape[0], -1, -1).to(like.dtype)


class SourceInjection(nn.Module):
    """The excitation brought to each upsampling stage's rate and width, added to that stage's activations.

    ``mode="strided"``: the merged excitation ``(B, 1, T * hop)`` through a strided convolution per stage
    (kernel ``2s + 1``, stride ``s``), NSF-HiFiGAN's way. ``mode="band_limited"``: the separate harmonics
    built at the stage's own rate (:meth:`HarmonicSource.harmonics_at`, ``(B, H, T * hop / s)``) through a
    3-tap convolution; no harmonic above that rate's Nyquist frequency reaches the stage.

    Stages before ``first_stage`` get none (an empty slot, so that a stage's weights keep their key,
    ``convs.<stage>``, whichever stage comes first). Why skip any: at the first stage of the demo's
    8 x 8 x 4 generator (689 Hz, 32 samples per step) strided sines alias, and a generator fed there voiced
    every pitch at a whole fraction of that rate (689 / 6 = 115 Hz, 689 / 7 = 98 Hz).
    """

    def __init__(
        self,
        hop_length: int,
        rates: list[int],
        initial_channels: int,
        first_stage: int = 0,
        mode: str = "strided",
        n_harmonics: int = 1,
    ) -> None:
        super().__init__()
        if not 0 <= first_stage < len(rates):
            raise ValueError(f"source_first_stage {first_stage} must name one of the {len(rates)} upsampling stages")
        self.first_stage = first_stage
        self.mode = mode
        self.strides: list[int] = []
        self.convs = nn.ModuleList()
        channels, product = initial_channels, 1
        for stage, rate in enumerate(rates):
            channels //= 2
            product *= rate
            stride = hop_length // product
            self.strides.append(stride)
            if stage < first_stage:
                self.convs.append(nn.Identity())  # no parameters: a placeholder for the stage's index
            elif mode == "band_limited":
                self.convs.append(nn.Conv1d(n_harmonics, channels, 3, padding=1))
            else:
                self.convs.append(nn.Conv1d(1, channels, 2 * stride + 1, stride=stride, padding=stride))

    def feeds(self, stage: int) -> bool:
        """Whether ``stage`` receives the excitation."""
        return stage >= self.first_stage

    def forward(self, excitation: torch.Tensor, stage: int) -> torch.Tensor:
        """``excitation``: the merged ``(B, 1, N)`` (strided) or this stage's harmonics ``(B, H, N / s)``."""
        return self.convs[stage](excitation)
