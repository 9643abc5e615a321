"""Tiny random FastPitch and HiFi-GAN models for the inference tests, and their model files written by
the models' own save functions (as the training stages write them)."""

from __future__ import annotations

from pathlib import Path

import torch

from tts_pipeline.config import AudioConfig, FastPitchConfig, HiFiGANConfig
from tts_pipeline.inference import SynthesisOptions, Synthesizer, TextEncoder
from tts_pipeline.models.fastpitch import FastPitch
from tts_pipeline.models.fastpitch.data import PitchStats, TextSettings
from tts_pipeline.models.fastpitch.model_file import save_fastpitch
from tts_pipeline.models.hifigan import Generator
from tts_pipeline.models.hifigan.model_file import save_generator
from tts_pipeline.text import get_symbols

AUDIO = AudioConfig()
SYMBOL_SET = "english_basic"
TINY_FASTPITCH = FastPitchConfig(
    symbols_embedding_dim=16,
    in_fft_n_layers=1,
    in_fft_d_head=8,
    in_fft_conv1d_filter_size=32,
    in_fft_output_size=16,
    out_fft_n_layers=1,
    out_fft_d_head=8,
    out_fft_conv1d_filter_size=32,
    out_fft_output_size=16,
    dur_predictor_filter_size=16,
    pitch_predictor_filter_size=16,
    energy_predictor_filter_size=16,
)
# Rates multiply to the hop (256); 16 channels halve to 1 over the four stages.
TINY_HIFIGAN = HiFiGANConfig(upsample_initial_channel=16, resblock_kernel_sizes=[3], resblock_dilation_sizes=[[1, 3]])
PITCH = PitchStats(mean=200.0, std=50.0)
# exp(1.5) - 1 = 3.5 frames per token before the random part: utterances of a few dozen frames.
LOG_DURATION_BIAS = 1.5


def text_settings(symbols_kind: str = "characters") -> TextSettings:
    """What the durations stage records for an aligner trained on ``symbols_kind``."""
    return TextSettings(
        symbols=tuple(get_symbols(SYMBOL_SET)),
        source="aligner",
        symbols_kind=symbols_kind,
        symbol_set=SYMBOL_SET,
        cleaners="english_cleaners_v2",
    )


def tiny_fastpitch(seed: int = 0, n_mels: int = AUDIO.n_mel_channels) -> FastPitch:
    """A random FastPitch over english_basic, eval mode, predicting a few frames per token."""
    torch.manual_seed(seed)
    model = FastPitch(TINY_FASTPITCH, len(get_symbols(SYMBOL_SET)), n_mels, PITCH.mean, PITCH.std)
    with torch.no_grad():
        model.duration_predictor.fc.bias.fill_(LOG_DURATION_BIAS)
    return model.eval()


def tiny_generator(seed: int = 0, n_mels: int = AUDIO.n_mel_channels, *, harmonic: bool = False) -> Generator:
    """A random HiFi-GAN generator (weight norm kept) whose output is not just ``tanh(bias)``; with
    ``harmonic``, interpolating upsampling and a harmonic source whose pitch head voices every frame.

    The recipe's N(0, 0.01) init makes a random generator's output nearly constant; unit-norm filters
    (g = 1, random v) keep the signal's scale through the stack, so the audio depends on the mel.
    """
    torch.manual_seed(seed)
    cfg = TINY_HIFIGAN
    if harmonic:
        cfg = TINY_HIFIGAN.model_copy(update={"upsampling": "interpolate", "source": "harmonic", "source_harmonics": 4})
    generator = Generator(cfg, n_mels, AUDIO.sampling_rate if harmonic else None)
    with torch.no_grad():
        for module in generator.modules():
            weight = getattr(getattr(module, "parametrizations", None), "weight", None)
            if weight is not None and hasattr(weight, "original0"):  # weight norm (not the head's scaling)
                weight.original0.fill_(1.0)
                weight.original1.normal_()
        if harmonic:
            generator.pitch_head.layers[-1].bias[0] = 5.0
    return generator.eval()


def save_fastpitch_file(
    path: Path, *, audio: AudioConfig = AUDIO, symbols_kind: str = "characters", seed: int = 0
) -> Path:
    """A FastPitch model file as ``train_fastpitch`` writes it."""
    save_fastpitch(
        path,
        tiny_fastpitch(seed),
        step=3,
        epoch=1,
        learning_rate=1e-3,
        text=text_settings(symbols_kind),
        pitch=PITCH,
        audio=audio,
    )
    return path


def save_hifigan_file(path: Path, *, audio: AudioConfig = AUDIO, seed: int = 0, harmonic: bool = False) -> Path:
    """A HiFi-GAN model file as ``train_hifigan`` writes it (weight norm kept)."""
    generator = tiny_generator(seed, harmonic=harmonic)
    save_generator(path, generator, audio, step=3, epoch=1, learning_rate=3e-4, fine_tuned_from=None)
    return path


def tiny_models() -> tuple[FastPitch, Generator]:
    """A tiny FastPitch and a tiny generator with weight norm folded, as inference runs them."""
    generator = tiny_generator()
    generator.remove_weight_norm()
    return tiny_fastpitch(), generator


def tiny_synthesizer_of(models: tuple[FastPitch, Generator], **options: object) -> Synthesizer:
    """A CPU synthesizer of ``models`` (character symbols) with these ``SynthesisOptions``."""
    fastpitch, generator = models
    encoder = TextEncoder.from_settings(text_settings(), "fastpitch.pt")
    return Synthesizer(generator, AUDIO, SynthesisOptions(**options), acoustic_model=fastpitch, text_encoder=encoder)
