"""NVIDIA's bias-spectrum denoiser for vocoder output (reference section 5.2).

A GAN vocoder fed a constant mel still produces a faint, stationary hiss: its *bias*. The denoiser
measures it once, as the STFT magnitude of the vocoder's answer to an all-zeros log-mel
``(1, n_mels, 88)`` (first frame), and at synthesis subtracts ``strength x bias`` from every frame's
magnitude, clamps at 0 and resynthesises with the original phase. The STFT is ``torch.stft`` with
``n_fft = filter_length``, ``hop_length``, ``win_length`` of the audio section, a periodic Hann window
and centred frames, so :meth:`Denoiser.forward` returns exactly as many samples as it was given.

Synthesis (:mod:`tts_pipeline.inference`) and WaveGlow's own denoiser
(:mod:`tts_pipeline.models.waveglow.denoiser`) share it, so it sits with the models, below both.
"""

from __future__ import annotations

import torch
from torch import nn

from tts_pipeline.config import AudioConfig

# The length of NVIDIA's probe mel, in frames: long enough for the first STFT frame to be away from
# the generator's own edge effects on the right.
BIAS_FRAMES = 88


class Denoiser(nn.Module):
    """Subtracts a vocoder's bias spectrum from its output.

    Args:
        bias: ``(n_fft // 2 + 1,)`` magnitude of the bias (see :meth:`from_vocoder`).
        audio: The audio section (STFT sizes).

    ``bias`` is a buffer, so ``.to(device)`` moves it with the module.
    """

    def __init__(self, bias: torch.Tensor, audio: AudioConfig) -> None:
        super().__init__()
        n_bins = audio.filter_length // 2 + 1
        if bias.shape != (n_bins,):
            shape = tuple(bias.shape)
            raise ValueError(f"bias: expected shape ({n_bins},) for filter_length {audio.filter_length}, got {shape}")
        self.n_fft = audio.filter_length
        self.hop_length = audio.hop_length
        self.win_length = audio.win_length
        self.register_buffer("bias", bias.detach().float().clone())
        self.register_buffer("window", torch.hann_window(audio.win_length, periodic=True))

    @classmethod
    @torch.no_grad()
    def from_vocoder(cls, vocoder: nn.Module, audio: AudioConfig) -> Denoiser:
        """Measure ``vocoder``'s bias: its output for an all-zeros ``(1, n_mels, 88)`` mel, first STFT frame.

        The vocoder runs in fp32 on its own device (autocast off), whatever the caller's precision. A
        vocoder with a ``bias_probe`` method (a WaveGlow: its output without noise, ``sigma = 0``, as
        NVIDIA measures it) is probed through that method instead of its call.
        """
        device = next(vocoder.parameters()).device
        zeros = torch.zeros(1, audio.n_mel_channels, BIAS_FRAMES, device=device)
        run = getattr(vocoder, "bias_probe", vocoder)
        with torch.autocast(device_type=device.type, enabled=False):
            probe = run(zeros).float().reshape(1, -1)  # (1, 88 * hop)
        denoiser = cls(torch.zeros(audio.filter_length // 2 + 1), audio).to(device)
        magnitude, _ = denoiser.spectrum(probe)
        denoiser.bias.copy_(magnitude[0, :, 0])
        return denoiser

    def spectrum(self, audio: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(B, N)`` float audio -> magnitude and phase angle, each ``(B, n_fft // 2 + 1, frames)``."""
        spec = torch.stft(
            audio,
            n_fft=self.n_fft,
            hop_length=self.hop_length,
            win_length=self.win_length,
            window=self.window,
            center=True,
            # Reflection needs more than n_fft / 2 samples; a clip of one or two frames gets zeros.
            pad_mode="reflect" if audio.shape[-1] > self.n_fft // 2 else "constant",
            return_complex=True,
        )
        return spec.abs(), spec.angle()

    def forward(self, audio: torch.Tensor, strength: float) -> torch.Tensor:
        """Denoise ``(B, N)`` or ``(N,)`` audio; same shape out, float32.

        ``strength`` 0 returns the input unchanged (no STFT round trip); negative strengths are an error.
        """
        if strength < 0:
            raise ValueError(f"denoising strength: expected >= 0, got {strength}")
        if strength == 0 or audio.shape[-1] == 0:
            return audio
        squeeze = audio.dim() == 1
        batch = audio.reshape(1, -1) if squeeze else audio
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
        return denoised.reshape(-1) if squeeze else denoised
