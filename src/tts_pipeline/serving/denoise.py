"""The bias-spectrum denoiser of :class:`tts_pipeline.models.denoiser.Denoiser` in numpy, for engines
that run without torch.

The same procedure and STFT (``n_fft = filter_length``, ``hop_length``, a periodic Hann window of
``win_length`` centred in ``n_fft``, centred frames with reflection padding, inverse by windowed
overlap-add divided by the summed squared window): the bias is the magnitude of the first STFT frame
of the vocoder's answer to an all-zeros ``(1, n_mels, 88)`` log-mel; denoising subtracts
``strength x bias`` from every frame's magnitude, clamps at 0 and keeps the phase. Outputs agree with
the torch module to float32 rounding (``tests/serving/test_speaker.py``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

# NVIDIA's probe length, in frames (tts_pipeline.models.denoiser.BIAS_FRAMES)
BIAS_FRAMES = 88


class NumpyDenoiser:
    """Subtracts a vocoder's bias spectrum from ``(N,)`` float32 audio.

    Args:
        bias: ``(n_fft // 2 + 1,)`` magnitude of the vocoder's bias.
        n_fft, hop_length, win_length: The audio section's STFT sizes.
    """

    def __init__(self, bias: np.ndarray, n_fft: int, hop_length: int, win_length: int) -> None:
        if bias.shape != (n_fft // 2 + 1,):
            raise ValueError(f"bias: expected shape ({n_fft // 2 + 1},), got {bias.shape}")
        self.bias = bias.astype(np.float32)
        self.n_fft, self.hop = n_fft, hop_length
        window = np.zeros(n_fft, dtype=np.float64)
        left = (n_fft - win_length) // 2
        # periodic Hann (torch.hann_window(periodic=True)), zero-padded to n_fft in the middle as torch does
        window[left : left + win_length] = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(win_length) / win_length)
        self.window = window

    @classmethod
    def from_vocoder(
        cls, vocode: Callable[[np.ndarray], np.ndarray], n_mels: int, n_fft: int, hop_length: int, win_length: int
    ) -> NumpyDenoiser:
        """Measure the bias of ``vocode`` (``(n_mels, T)`` log-mel -> ``(T * hop,)`` audio) on zeros."""
        probe = vocode(np.zeros((n_mels, BIAS_FRAMES), dtype=np.float32))
        denoiser = cls(np.zeros(n_fft // 2 + 1, dtype=np.float32), n_fft, hop_length, win_length)
        spectrum = denoiser.stft(probe)
        denoiser.bias = np.abs(spectrum[0]).astype(np.float32)
        return denoiser

    def stft(self, audio: np.ndarray) -> np.ndarray:
        """``(N,)`` audio -> ``(frames, n_fft // 2 + 1)`` complex spectrum (centred frames)."""
        pad = self.n_fft // 2
        padded = np.pad(audio.astype(np.float64), pad, mode="reflect" if len(audio) > pad else "constant")
        frames = np.lib.stride_tricks.sliding_window_view(padded, self.n_fft)[:: self.hop]
        return np.fft.rfft(frames * self.window, axis=-1)

    def istft(self, spectrum: np.ndarray, length: int) -> np.ndarray:
        """The inverse of :meth:`stft`, ``length`` samples."""
        frames = np.fft.irfft(spectrum, n=self.n_fft, axis=-1) * self.window
        size = self.n_fft + self.hop * (len(frames) - 1)
        out = np.zeros(size)
        envelope = np.zeros(size)
        square = self.window**2
        for index, frame in enumerate(frames):
            start = index * self.hop
            out[start : start + self.n_fft] += frame
            envelope[start : start + self.n_fft] += square
        pad = self.n_fft // 2
        out, envelope = out[pad : pad + length], envelope[pad : pad + length]
        return np.where(envelope > 1e-11, out / np.maximum(envelope, 1e-11), 0.0)

    def __call__(self, audio: np.ndarray, strength: float) -> np.ndarray:
        """Denoised ``(N,)`` float32 audio; ``strength`` 0 returns it unchanged."""
        if strength < 0:
            raise ValueError(f"denoising strength: expected >= 0, got {strength}")
        if strength == 0 or audio.size == 0:
            return audio
        spectrum = self.stft(audio)
        magnitude = np.maximum(np.abs(spectrum) - strength * self.bias, 0.0)
        cleaned = magnitude * np.exp(1j * np.angle(spectrum))
        return self.istft(cleaned, len(audio)).astype(np.float32)
