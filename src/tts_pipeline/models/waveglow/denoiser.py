"""NVIDIA's WaveGlow denoiser: removes the model's bias, the faint stationary sound WaveGlow makes
even for silence.

The bias is measured once: WaveGlow's output for an all-zeros mel of 88 frames with ``sigma = 0``
(no noise), whose first STFT frame's magnitude is kept. Denoising subtracts ``strength x bias`` from
every frame's magnitude, clamps at 0 and resynthesises with the original phase. NVIDIA's STFT is a
Hann-windowed (periodic) transform of ``filter_length`` 1024 with ``hop = filter_length / 4`` and
reflect-padded, centred frames; here it is :func:`torch.stft` / :func:`torch.istft` with the same
settings. This is the computation of :class:`tts_pipeline.inference.Denoiser` (whose bias probe
calls the vocoder as ``vocoder(mel)``, which WaveGlow's noise and ``sigma`` do not fit); a test checks
that the two agree.
"""

from __future__ import annotations

import torch
from torch import nn

from tts_pipeline.models.waveglow.model import WaveGlow

# NVIDIA's zero mel for the bias: 88 frames (its first STFT frame is clear of the right edge).
BIAS_FRAMES = 88
# The denoising strength of NVIDIA's Tacotron 2 + WaveGlow inference (``-d/--denoising-strength``).
DEFAULT_STRENGTH = 0.01


class WaveGlowDenoiser(nn.Module):
    """Subtracts a WaveGlow's bias spectrum from its output.

    Args:
        bias: ``(filter_length // 2 + 1,)`` magnitude of the bias (see :meth:`from_model`).
        filter_length: FFT size (NVIDIA: 1024).
        n_overlap: Frames overlapping each sample; the hop is ``filter_length // n_overlap`` (NVIDIA: 4).
        win_length: Hann window length, ``<= filter_length`` (NVIDIA: 1024).
    """

    def __init__(self, bias: torch.Tensor, *, filter_length: int = 1024, n_overlap: int = 4, win_length: int = 1024):
        super().__init__()
        n_bins = filter_length // 2 + 1
        if tuple(bias.shape) != (n_bins,):
            shape = tuple(bias.shape)
            raise ValueError(f"bias: expected shape ({n_bins},) for filter_length {filter_length}, got {shape}")
        if not 0 < win_length <= filter_length or not 0 < n_overlap <= filter_length:
            raise ValueError(f"denoiser: expected 0 < win_length <= filter_length and a hop of at least 1, got "
                             f"filter_length {filter_length}, win_length {win_length}, n_overlap {n_overlap}")
        self.n_fft = filter_length
        self.hop_length = filter_length // n_overlap
        self.win_length = win_length
        self.register_buffer("bias", bias.detach().float().clone())
        self.register_buffer("window", torch.hann_window(win_length, periodic=True))

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

    def spectrum(self, audio: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(B, N)`` float audio -> magnitude and phase, each ``(B, filter_length // 2 + 1, N // hop + 1)``."""
        spec = torch.stft(
            audio,
            n_fft=self.n_fft,
            hop_length=self.hop_length,
            win_length=self.win_length,
            window=self.window,
            center=True,
            # Reflection needs more than n_fft / 2 samples; a shorter clip gets zeros.
            pad_mode="reflect" if audio.shape[-1] > self.n_fft // 2 else "constant",
            return_complex=True,
        )
        return spec.abs(), spec.angle()

    def forward(self, audio: torch.Tensor, strength: float = DEFAULT_STRENGTH) -> torch.Tensor:
        """Denoise ``(B, N)`` or ``(N,)`` audio; same shape out, float32 (NVIDIA's returns ``(B, 1,
        N // hop * hop)``: the same samples where ``N`` is a multiple of the hop, as WaveGlow's output is).

        ``strength`` 0 returns the input; a negative strength is an error.
        """
        if strength < 0:
            raise ValueError(f"denoising strength: expected >= 0, got {strength}")
        if strength == 0 or audio.shape[-1] == 0:
            return audio
        batch = audio.reshape(1, -1) if audio.dim() == 1 else audio
        with torch.autocast(device_type=batch.device.type, enabled=False):
            batch = batch.float()
            magnitude, phase = self.spectrum(batch)
            cleaned = (magnitude - strength * self.bias[None, :, None]).clamp_min(0.0)
            denoised = torch.istft(
                torch.polar(cleaned, phase),
                n_fft=self.n_fft,
                hop_length=self.hop_length,
                win_length=self.win_length,
                window=self.window,
                center=True,
                length=batch.shape[-1],
            )
        return denoised.reshape(audio.shape)
