"""HiFi-GAN behind the vocoder seam (:mod:`tts_pipeline.inference.seams`): the ``hifigan`` row of
:mod:`tts_pipeline.config.model_kinds`.

A generator is loaded with its weight norms folded (same output, fewer ops). On a CPU in bf16 it runs as
a prepared copy with fused oneDNN convolutions (:mod:`tts_pipeline.models.hifigan.cpu_inference`);
everywhere else as it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from torch import nn

from tts_pipeline.config import AudioConfig
from tts_pipeline.inference.seams import LoadedVocoder
from tts_pipeline.models.hifigan.cpu_inference import prepare_generator
from tts_pipeline.models.hifigan.model_file import load_generator
from tts_pipeline.precision import Precision


def load(path: str | Path, *, audio: AudioConfig | None, settings: Mapping[str, Any]) -> LoadedVocoder:
    """This pipeline's model file or a foreign checkpoint (NVIDIA's, jik876's; their audio settings are
    ``audio``). HiFi-GAN reads no inference settings."""
    generator, info = load_generator(path, remove_weight_norm=True, audio=audio)
    return LoadedVocoder(generator, info.audio, info.step, "HiFi-GAN")


def prepare(model: nn.Module, precision: Precision) -> nn.Module:
    """The generator, or on a CPU in bf16 its fused copy (a snapshot of its weights)."""
    return prepare_generator(model, precision)  # type: ignore[arg-type]
