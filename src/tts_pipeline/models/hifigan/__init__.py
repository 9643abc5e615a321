"""HiFi-GAN: generator, multi-period and multi-scale discriminators, losses, training segments."""

from tts_pipeline.models.hifigan.discriminators import (
    DiscriminatorOutput,
    MultiPeriodDiscriminator,
    MultiScaleDiscriminator,
)
from tts_pipeline.models.hifigan.generator import Generator
from tts_pipeline.models.hifigan.loss import (
    GeneratorLosses,
    discriminator_loss,
    feature_matching_loss,
    generator_adversarial_loss,
    generator_losses,
    mel_loss,
    multi_resolution_stft_loss,
)

__all__ = [
    "DiscriminatorOutput",
    "Generator",
    "GeneratorLosses",
    "MultiPeriodDiscriminator",
    "MultiScaleDiscriminator",
    "discriminator_loss",
    "feature_matching_loss",
    "generator_adversarial_loss",
    "generator_losses",
    "mel_loss",
    "multi_resolution_stft_loss",
]
