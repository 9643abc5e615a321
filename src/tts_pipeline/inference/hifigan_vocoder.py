"""HiFi-GAN behind the vocoder seam (:mod:`tts_pipeline.inference.seams`): the ``hifigan`` row of
:mod:`tts_pipeline.config.model_kinds`.

A generator is loaded with its weight norms folded (same output, fewer ops). On a CPU in bf16 it runs as
a prepared copy with fused oneDNN convolutions (:mod:`tts_pipeline.models.hifigan.cpu_inference`);
everywhere else as it is. ``inference.amp: auto`` on a CPU also tries that fused copy in float32
(:func:`cpu_paths`): on a CPU whose bf16 is slow it is the fastest way there is.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from torch import nn

from tts_pipeline.config import AudioConfig
from tts_pipeline.inference.seams import PLAIN_FP32, CpuPath, LoadedVocoder
from tts_pipeline.models.hifigan.cpu_inference import (
    FusedCpuGenerator,
    can_fuse,
    fused_cpu_kernels_available,
    onednn_bf16_available,
    prepare_generator,
)
from tts_pipeline.models.hifigan.generator import Generator
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


def fused_copy(model: Generator, precision: Precision) -> nn.Module:
    """The fused CPU copy of ``model`` with its body in ``precision``'s dtype (float32 or bf16). A generator
    the fusion does not cover (a harmonic source, interpolating upsampling) runs as it is, under the
    path's autocast."""
    if not can_fuse(model):
        return model
    return FusedCpuGenerator(model, precision.dtype).eval()


def cpu_paths() -> tuple[CpuPath, ...]:
    """The generator as it is in float32; where oneDNN's fused kernels exist, the fused copy in float32,
    and in bf16 where oneDNN runs bf16 on this CPU (else bf16 under autocast)."""
    plain = CpuPath(PLAIN_FP32, "off", prepare)
    if not fused_cpu_kernels_available():
        return (plain, CpuPath("bf16", "bf16", prepare))
    fp32_fused = CpuPath("fp32 fused", "off", fused_copy)
    if not onednn_bf16_available():
        return (plain, fp32_fused, CpuPath("bf16", "bf16", prepare))
    return (plain, fp32_fused, CpuPath("bf16 fused", "bf16", fused_copy))
