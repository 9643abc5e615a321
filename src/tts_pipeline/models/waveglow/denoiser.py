"""NVIDIA's WaveGlow denoiser: removes the model's bias, the faint stationary sound WaveGlow makes
even for silence.

The bias is measured once: WaveGlow's output for an all-zeros mel of 88 frames with ``sigma = 0``
(no noise), whose first STFT frame's magnitude is kept. Denoising subtracts ``strength x bias`` from
every frame's magnitude, clamps at 0 and resynthesises with the original phase. NVIDIA's STFT is a
Hann-windowed (periodic) transform of ``filter_length`` 1024 with ``hop = filter_length / 4`` and
reflect-padded, centred frames; here it is :func:`torch.stft` / :func:`torch.istft` with the same
settings: :class:`WaveGlowDenoiser` is :class:`tts_pipeline.models.denoiser.Denoiser` (one implementation
of the STFT, the subtraction and the resynthesis), sized by NVIDIA's denoiser arguments rather than an
audio section, with WaveGlow's bias probe. (The synthesizer's own ``Denoiser.from_vocoder`` probes a
:class:`tts_pipeline.inference.waveglow_vocoder.WaveGlowVocoder` at ``sigma = 0`` the same way.)
"""

from __future__ import annotations

import torch

from tts_pipeline.config import AudioConfig
from tts_pipeline.models.denoiser import BIAS_FRAMES, Denoiser
from tts_pipeline.models.waveglow.model import WaveGlow

# The denoising strength of NVIDIA's Tacotron 2 + WaveGlow inference (``-d/--denoising-strength``).
DEFAULT_STRENGTH = 0.01


class WaveGlowDenoiser(Denoiser):
    """Subtracts a WaveGlow's bias spectrum from its output.

    Args:
        bias: ``(filter_length // 2 + 1,)`` magnitude of the bias (see :meth:`from_model`).
        filter_length: FFT size (NVIDIA: 1024).
        n_overlap: Frames overlapping each sample; the hop is ``filter_length // n_overlap`` (NVIDIA: 4).
        win_length: Hann window length, ``<= filter_length`` (NVIDIA: 1024).
    """

    def __init__(self, bias: torch.Tensor, *, filter_length: int = 1024, n_overlap: int = 4, win_length: int = 1024):
        if not 0 < win_length <= filter_length or not 0 < n_overlap <= filter_length:
            raise ValueError(f"denoiser: expected 0 < win_length <= filter_length and a hop of at least 1, got "
                             f"filter_length {filter_length}, win_length {win_length}, n_overlap {n_overlap}")
        # Only the STFT sizes of the audio section matter to the denoiser (no mel rules apply here).
        stft = AudioConfig.model_construct(
            filter_length=filter_length, hop_length=filter_length // n_overlap, win_length=win_length
        )
        super().__init__(bias, stft)

    @classmethod
    @torch.no_grad()
    def from_model(
        cls, model: WaveGlow, *, filter_length: int = 1024, n_overlap: int = 4, win_length: int = 1024
    ) -> WaveGlowDenoiser:
        """Measure ``model``'s bias: its ``sigma = 0`` output for a zero ``(1, n_mels, 88)`` mel, first
        STFT frame. Runs on the model's device in its dtype; the bias is kept in float32."""
        weight = model.upsample.weight
        zeros = torch.zeros(1, model.config.n_mel_channels, BIAS_FRAMES, device=weight.device, dtype=weight.dtype)
        probe = model.infer(zeros, sigma=0.0).float()
        denoiser = cls(
            torch.zeros(filter_length // 2 + 1), filter_length=filter_length, n_overlap=n_overlap, win_length=win_length
        ).to(weight.device)
        magnitude, _ = denoiser.spectrum(probe)
        denoiser.bias.copy_(magnitude[0, :, 0])
        return denoiser

    def forward(self, audio: torch.Tensor, strength: float = DEFAULT_STRENGTH) -> torch.Tensor:
        """Denoise ``(B, N)`` or ``(N,)`` audio (:meth:`Denoiser.forward`), at NVIDIA's strength by default.

        NVIDIA's returns ``(B, 1, N // hop * hop)``: the same samples where ``N`` is a multiple of the
        hop, as WaveGlow's output is."""
        return super().forward(audio, strength)
