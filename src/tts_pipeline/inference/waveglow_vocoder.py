"""WaveGlow behind the vocoder seam (:mod:`tts_pipeline.inference.seams`): the ``waveglow`` row of
:mod:`tts_pipeline.config.model_kinds`.

The synthesizer calls its vocoder as ``vocoder(mel)`` on ``(B, n_mels, T)`` log-mels and expects ``(B, 1,
T x hop)`` audio. :class:`WaveGlowVocoder` gives WaveGlow that signature: it runs
:meth:`tts_pipeline.models.waveglow.WaveGlow.infer` with the noise scale ``sigma`` (``inference.waveglow_sigma``;
NVIDIA's inference scripts: 0.9) on a model whose weight norms are folded (as NVIDIA's inference does on
load; same output, fewer ops). The noise is drawn from a generator reseeded at every call, so a mel gets
the same audio alone or in any batch, and a rerun writes the same files. :meth:`WaveGlowVocoder.bias_probe`
is the model at ``sigma = 0``: what the bias-spectrum denoiser measures (NVIDIA's ``Denoiser(waveglow)``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch
from torch import nn

from tts_pipeline.config import AudioConfig
from tts_pipeline.inference.seams import LoadedVocoder
from tts_pipeline.models.model_file import ModelFile
from tts_pipeline.models.waveglow import WaveGlow, WaveGlowConfig
from tts_pipeline.precision import Precision

# NVIDIA's --sigma-infer / --waveglow-sigma-infer default (Tacotron2/inference.py, FastPitch/inference.py).
DEFAULT_SIGMA = 0.9
SIGMA_KEY = "waveglow_sigma"  # the inference key of the noise scale (the row's settings)
NOISE_SEED = 1234


class WaveGlowVocoder(nn.Module):
    """``(B, n_mels, T)`` log-mel -> ``(B, 1, T x 256)`` audio with a WaveGlow.

    Args:
        model: The WaveGlow (its weight norms are folded here if they are not yet).
        sigma: Scale of the noise (>= 0).
        seed: Seed of the noise, drawn afresh for every call.
    """

    def __init__(self, model: WaveGlow, sigma: float = DEFAULT_SIGMA, *, seed: int = NOISE_SEED) -> None:
        super().__init__()
        if sigma < 0:
            raise ValueError(f"waveglow sigma: expected >= 0, got {sigma}")
        if model.has_weight_norm:
            model.remove_weight_norm()
        self.model = model.eval()
        self.sigma = float(sigma)
        self.seed = int(seed)
        self.hop_length = model.hop_length

    @property
    def config(self) -> WaveGlowConfig:
        return self.model.config

    def _noise(self, device: torch.device) -> torch.Generator:
        return torch.Generator(device=device).manual_seed(self.seed)

    @torch.no_grad()
    def forward(self, mel: torch.Tensor) -> torch.Tensor:
        audio = self.model.infer(mel, sigma=self.sigma, generator=self._noise(mel.device))
        return audio.unsqueeze(1)

    @torch.no_grad()
    def bias_probe(self, mel: torch.Tensor) -> torch.Tensor:
        """The model's output without noise (``sigma = 0``), ``(B, 1, T x 256)``: its bias, for the denoiser."""
        return self.model.infer(mel.float(), sigma=0.0).unsqueeze(1)


def load(path: str | Path, *, audio: AudioConfig | None, settings: Mapping[str, Any]) -> LoadedVocoder:
    """A :class:`WaveGlowVocoder` from this pipeline's model file or NVIDIA's / NGC's checkpoint (which
    record no audio settings: ``audio`` gives them), with the noise scale ``settings["waveglow_sigma"]``
    (default :data:`DEFAULT_SIGMA`). Errors (UserError) name the file; ``audio`` is checked against the
    model's mel channels and hop."""
    from tts_pipeline.models.waveglow.model_file import load_waveglow

    sigma = float(settings.get(SIGMA_KEY, DEFAULT_SIGMA))
    model, info = load_waveglow(path, remove_weight_norm=True, audio=audio)
    vocoder = WaveGlowVocoder(model, sigma)
    return LoadedVocoder(vocoder, model_file_audio(info, audio, path), info.step, f"WaveGlow (sigma {sigma:g})")


def prepare(model: nn.Module, precision: Precision) -> nn.Module:
    """WaveGlow runs as it is (under the precision's autocast) at every precision."""
    return model


def model_file_audio(info: ModelFile, fallback: AudioConfig | None, path: str | Path) -> AudioConfig:
    """The audio section a WaveGlow file records, else ``fallback`` (NVIDIA's files record none).

    Raises UserError naming the file when there is neither."""
    from tts_pipeline.errors import UserError

    if "audio" in info.extra:
        return AudioConfig.model_validate(info.extra["audio"])
    if fallback is None:
        raise UserError(f"{path}: this WaveGlow file records no audio settings; give the config's audio section")
    return fallback
