"""HiFi-GAN's losses (reference section 2.5): LSGAN adversarial terms, feature matching, mel L1.

Each function sums over the sub-discriminators of one family (call it once for MPD and once for MSD,
or use :func:`generator_losses` for the generator's whole objective). Scale factors are arguments
with the recipe's values as defaults.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch.nn import functional as F

from tts_pipeline.models.hifigan.discriminators import DiscriminatorOutput

MEL_LOSS_SCALE = 45.0
FEATURE_MATCHING_SCALE = 2.0


def discriminator_loss(real: DiscriminatorOutput, fake: DiscriminatorOutput) -> torch.Tensor:
    """LSGAN: sum over sub-discriminators of ``mean((1 - D(y))^2) + mean(D(y_hat)^2)``; a scalar.

    ``fake`` should come from the generator's output detached, so only the discriminator learns.
    """
    _check_pair(real, fake)
    total = real.logits[0].new_zeros((), dtype=torch.float)
    for real_logits, fake_logits in zip(real.logits, fake.logits, strict=True):
        total = total + torch.mean((1.0 - real_logits.float()) ** 2) + torch.mean(fake_logits.float() ** 2)
    return total


def generator_adversarial_loss(fake: DiscriminatorOutput) -> torch.Tensor:
    """LSGAN: sum over sub-discriminators of ``mean((1 - D(y_hat))^2)``; a scalar."""
    if not fake.logits:
        raise ValueError("discriminator output: no sub-discriminators")
    total = fake.logits[0].new_zeros((), dtype=torch.float)
    for logits in fake.logits:
        total = total + torch.mean((1.0 - logits.float()) ** 2)
    return total


def feature_matching_loss(
    real: DiscriminatorOutput, fake: DiscriminatorOutput, scale: float = FEATURE_MATCHING_SCALE
) -> torch.Tensor:
    """``scale`` x the sum over sub-discriminators and layers (conv_post included) of ``mean|f_real - f_fake|``.

    The real activations are targets: they are detached, so no gradient reaches the discriminator
    through them whether or not its parameters are frozen.
    """
    _check_pair(real, fake)
    total = fake.logits[0].new_zeros((), dtype=torch.float)
    for real_maps, fake_maps in zip(real.features, fake.features, strict=True):
        if len(real_maps) != len(fake_maps):
            raise ValueError(f"feature maps: {len(real_maps)} real against {len(fake_maps)} fake")
        for real_map, fake_map in zip(real_maps, fake_maps, strict=True):
            total = total + F.l1_loss(fake_map.float(), real_map.detach().float())
    return scale * total


def mel_loss(mel_real: torch.Tensor, mel_fake: torch.Tensor, scale: float = MEL_LOSS_SCALE) -> torch.Tensor:
    """``scale`` x the mean absolute difference of two log-mels of the same shape ``(B, n_mels, T)``."""
    if mel_real.shape != mel_fake.shape:
        raise ValueError(f"mel shapes differ: real {tuple(mel_real.shape)}, fake {tuple(mel_fake.shape)}")
    return scale * F.l1_loss(mel_fake.float(), mel_real.float())


@dataclass
class GeneratorLosses:
    """The generator's objective and its parts (scalars).

    Attributes:
        total: ``adversarial + feature_matching + mel`` (what is backpropagated).
        adversarial: MPD + MSD LSGAN terms.
        feature_matching: MPD + MSD feature matching, x2 included.
        mel: 45 x L1 of the loss mels.
    """

    total: torch.Tensor
    adversarial: torch.Tensor
    feature_matching: torch.Tensor
    mel: torch.Tensor


def generator_losses(
    real: Sequence[DiscriminatorOutput],
    fake: Sequence[DiscriminatorOutput],
    mel_real: torch.Tensor,
    mel_fake: torch.Tensor,
    *,
    mel_scale: float = MEL_LOSS_SCALE,
    feature_matching_scale: float = FEATURE_MATCHING_SCALE,
) -> GeneratorLosses:
    """The generator's objective over several discriminator families (e.g. ``[mpd, msd]``).

    Args:
        real: Each family's output on the real audio (same order as ``fake``).
        fake: Each family's output on the generated audio (not detached).
        mel_real: ``(B, n_mels, T)`` loss mel of the real audio.
        mel_fake: ``(B, n_mels, T)`` loss mel of the generated audio.
    """
    if len(real) != len(fake) or not fake:
        raise ValueError(f"expected one real output per fake output, got {len(real)} and {len(fake)}")
    adversarial = sum((generator_adversarial_loss(f) for f in fake), start=mel_fake.new_zeros((), dtype=torch.float))
    matching = sum(
        (feature_matching_loss(r, f, feature_matching_scale) for r, f in zip(real, fake, strict=True)),
        start=mel_fake.new_zeros((), dtype=torch.float),
    )
    mel = mel_loss(mel_real, mel_fake, mel_scale)
    return GeneratorLosses(
        total=adversarial + matching + mel, adversarial=adversarial, feature_matching=matching, mel=mel
    )


def _check_pair(real: DiscriminatorOutput, fake: DiscriminatorOutput) -> None:
    if len(real.logits) != len(fake.logits):
        raise ValueError(f"sub-discriminators: {len(real.logits)} real outputs against {len(fake.logits)} fake")
    if not real.logits:
        raise ValueError("discriminator output: no sub-discriminators")


# Parallel WaveGAN's three STFT resolutions (n_fft, hop, window) at 22.05/24 kHz: a short, a middle
# and a long window, so that neither time nor frequency detail is left unconstrained.
STFT_RESOLUTIONS: tuple[tuple[int, int, int], ...] = ((1024, 120, 600), (2048, 240, 1200), (512, 50, 240))
MAGNITUDE_FLOOR = 1e-7


def multi_resolution_stft_loss(
    real: torch.Tensor,
    fake: torch.Tensor,
    resolutions: Sequence[tuple[int, int, int]] = STFT_RESOLUTIONS,
) -> torch.Tensor:
    """Parallel WaveGAN's auxiliary loss, averaged over ``resolutions``: spectral convergence
    (``||S - S_hat||_F / ||S||_F`` over the batch) plus L1 of the log magnitudes; a scalar.

    Not part of NVIDIA's HiFi-GAN objective: the trainer adds it only with ``hifigan.stft_loss_scale``
    > 0. Unlike the 80-band mel L1 it constrains the full-resolution spectrum, which is what lets a
    generator trained without discriminators produce harmonics and silences instead of a blur.

    Args:
        real: ``(B, N)`` target audio.
        fake: ``(B, N)`` generated audio.
    """
    if real.shape != fake.shape or real.dim() != 2:
        shapes = f"{tuple(real.shape)}, {tuple(fake.shape)}"
        raise ValueError(f"audio: expected two (B, N) tensors of one shape, got {shapes}")
    total = real.new_zeros((), dtype=torch.float)
    with torch.autocast(device_type=real.device.type, enabled=False):
        for n_fft, hop, win in resolutions:
            window = torch.hann_window(win, device=real.device)
            target, produced = (
                torch.stft(x.float(), n_fft, hop, win, window, return_complex=True)
                .abs()
                .clamp(min=MAGNITUDE_FLOOR)
                for x in (real, fake)
            )
            # Over the whole batch, as Parallel WaveGAN does: per clip, a near-silent target segment
            # (leading or trailing silence) would divide by almost nothing and blow the gradient up.
            convergence = torch.linalg.norm(target - produced) / torch.linalg.norm(target)
            total = total + convergence + F.l1_loss(torch.log(produced), torch.log(target))
    return total / len(resolutions)
