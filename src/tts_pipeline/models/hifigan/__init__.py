"""HiFi-GAN: generator, multi-period and multi-scale discriminators (and the pair as one module), losses,
training segments; its model file is :mod:`tts_pipeline.models.hifigan.model_file`."""

from tts_pipeline.models.hifigan.discriminator_pair import Discriminators, DiscriminatorsOutput, split_output
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
    "Discriminators",
    "DiscriminatorsOutput",
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
    "split_output",
]
