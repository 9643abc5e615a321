"""Model files to warm-start from (``fastpitch.init_from``, ``hifigan.init_from``), built for a config:
a fresh model of its sizes saved as a trained one would be, with what a test changes to make it not fit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from tts_pipeline.config import AudioConfig, FastPitchConfig, HiFiGANConfig, PipelineConfig
from tts_pipeline.models.fastpitch import FastPitch
from tts_pipeline.models.fastpitch.data import PitchStats, TextSettings
from tts_pipeline.models.fastpitch.foreign import text_settings_from_config
from tts_pipeline.models.fastpitch.model_file import save_fastpitch
from tts_pipeline.models.hifigan import Generator
from tts_pipeline.models.hifigan.model_file import save_generator

# The statistics of the speaker a file was trained on (another than any test corpus's).
FILE_PITCH = PitchStats(mean=211.0, std=33.0)


def fastpitch_file(
    path: Path,
    config: PipelineConfig,
    *,
    seed: int = 7,
    text: TextSettings | None = None,
    audio: dict[str, Any] | None = None,
    **network: Any,
) -> Path:
    """A FastPitch model file that fits ``config`` (its fastpitch sizes, text.symbol_set's table and
    cleaners, its audio section), but for ``text`` (other text settings), ``audio`` (audio keys changed)
    and ``network`` (fastpitch keys changed)."""
    settings = text or text_settings_from_config(config.text)
    audio_cfg = AudioConfig(**{**config.audio.model_dump(), **(audio or {})})
    section = FastPitchConfig(**{**config.fastpitch.model_dump(), **network})
    torch.manual_seed(seed)
    model = FastPitch(section, len(settings.symbols), audio_cfg.n_mel_channels, FILE_PITCH.mean, FILE_PITCH.std)
    save_fastpitch(path, model, step=500, epoch=9, learning_rate=1e-3, text=settings, pitch=FILE_PITCH, audio=audio_cfg)
    return path


def generator_file(
    path: Path, config: PipelineConfig, *, seed: int = 7, audio: dict[str, Any] | None = None, **sizes: Any
) -> Path:
    """A HiFi-GAN model file that fits ``config`` (its hifigan sizes and audio section), but for ``audio``
    (audio keys changed) and ``sizes`` (hifigan keys changed)."""
    audio_cfg = AudioConfig(**{**config.audio.model_dump(), **(audio or {})})
    section = HiFiGANConfig(**{**config.hifigan.model_dump(), **sizes})
    torch.manual_seed(seed)
    generator = Generator(section, audio_cfg.n_mel_channels, audio_cfg.sampling_rate)
    save_generator(path, generator, audio_cfg, step=500, epoch=9, learning_rate=2e-4, fine_tuned_from=None)
    return path


def aligner_file(
    path: Path, config: PipelineConfig, *, seed: int = 7, symbols: str | None = None, **sizes: Any
) -> Path:
    """An aligner model file that fits ``config`` (its aligner sizes, text.symbol_set's table, the audio
    section's mel channels), but for ``symbols`` (another symbol mode recorded) and ``sizes`` (aligner
    keys, or ``n_mels``, changed)."""
    from tts_pipeline.models.aligner.model import Aligner
    from tts_pipeline.models.aligner.model_file import save_aligner
    from tts_pipeline.text import get_symbols

    table = get_symbols(config.text.symbol_set)
    shape = {"embedding_dim": config.aligner.embedding_dim, "attention_dim": config.aligner.attention_dim}
    shape.update({key: sizes[key] for key in ("embedding_dim", "attention_dim") if key in sizes})
    torch.manual_seed(seed)
    model = Aligner(
        n_symbols=len(table),
        n_mels=sizes.get("n_mels", config.audio.n_mel_channels),
        temperature=config.aligner.temperature,
        **shape,
    )
    save_aligner(
        path,
        model,
        step=540,
        epoch=60,
        symbols=symbols or config.aligner.symbols,
        symbol_set=config.text.symbol_set,
        symbol_table=table,
        prior_scaling=config.aligner.prior_scaling,
    )
    return path
