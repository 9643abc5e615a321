"""Audio loading and THE mel spectrogram: one function for every stage.

HiFi-GAN training (generator input and loss mel), FastPitch targets, fine-tuning mels, inference and
benchmarks all call :class:`MelSpectrogram`, and every stage frames time with :func:`n_frames` and
:func:`frame_times`, so the vocoder's input mels and the acoustic model's targets are the same arrays.

Framing (HiFi-GAN's, reference section 1.2): the waveform is reflect-padded by ``(n_fft - hop) / 2``
samples on each side and cut into frames with ``center=False``, which gives exactly
``T = n_samples // hop`` frames; frame ``t`` is centred on sample ``hop * t + hop / 2``.
Each frame: periodic Hann window, magnitude ``sqrt(re² + im² + 1e-9)`` (not power), Slaney mel
filterbank (``librosa.filters.mel``), ``log(clamp(x, 1e-5))``.

Level policy: audio is 16-bit PCM divided by ``max_wav_value`` (32768) in every stage, with no peak
normalisation anywhere. NVIDIA's HiFi-GAN base training rescales each clip to a peak of 0.95 while
FastPitch sees plain ``x / 32768``; we deliberately do not, so that the mels the vocoder is trained on
and the mels FastPitch learns to predict are bit-identical. There is no resampling here either: a
file at another rate is an error (the manifest stage owns resampling).

Typical use::

    mel = MelSpectrogram(cfg.audio)               # input mel (fmax = audio.mel_fmax)
    loss_mel = MelSpectrogram.for_loss(cfg.audio)  # HiFi-GAN loss mel (fmax = mel_fmax_loss or sr / 2)
    audio = torch.from_numpy(load_wav(path, cfg.audio.sampling_rate))
    log_mel = mel(audio)                          # (n_mels, T), T == n_frames(len(audio), cfg.audio)
"""

from __future__ import annotations

import functools
import wave
from pathlib import Path

import numpy as np
import soundfile as sf
import torch
from torch import nn

from tts_pipeline.config import AudioConfig
from tts_pipeline.errors import UserError

# Inside the square root of the magnitude, as HiFi-GAN does: keeps the gradient finite at 0.
MAGNITUDE_EPS = 1e-9
# Floor before the log: log(1e-5) = -11.51 is the value of silence.
LOG_FLOOR = 1e-5


def load_wav(path: str | Path, expected_sr: int, max_wav_value: float = 32768.0) -> np.ndarray:
    """Read a mono WAV file as float32 ``(N,)``: 16-bit PCM divided by ``max_wav_value``.

    libsndfile's float conversion of 16-bit PCM is exactly ``x / 32768``; other sample formats
    (24-bit, float) are read at the same full scale. Raises :class:`UserError` naming the file when it
    cannot be read, has another sampling rate (no resampling happens here) or more than one channel.
    """
    pcm16 = _read_pcm16(path)
    if pcm16 is not None:
        samples, rate, channels = pcm16
        _check_format(path, rate, channels, expected_sr)
    else:
        try:
            with sf.SoundFile(str(path)) as handle:
                _check_format(path, handle.samplerate, handle.channels, expected_sr)
                samples = handle.read(dtype="float32")
        except sf.LibsndfileError as error:
            raise UserError(f"{path}: cannot read audio ({error})") from None
    if max_wav_value != 32768.0:
        samples *= np.float32(32768.0 / max_wav_value)
    return samples


def _check_format(path: str | Path, rate: int, channels: int, expected_sr: int) -> None:
    if rate != expected_sr:
        raise UserError(f"{path}: expected a sampling rate of {expected_sr} Hz, got {rate} Hz")
    if channels != 1:
        raise UserError(f"{path}: expected mono audio, got {channels} channels")


def _read_pcm16(path: str | Path) -> tuple[np.ndarray, int, int] | None:
    """A plain 16-bit PCM WAV as float32 ``(N * channels,)`` ``x / 32768``, its rate and channel count;
    None for anything else (other formats, damaged files), which libsndfile then reads or reports.

    Corpora are 16-bit PCM, and the standard library reads them with about half the per-file CPU of
    soundfile; the values are the same bit for bit (int16 to float32 is exact, so is dividing by 2^15).
    """
    try:
        with wave.open(str(path), "rb") as handle:
            rate, channels = handle.getframerate(), handle.getnchannels()
            if handle.getsampwidth() != 2 or channels < 1:
                return None
            data = handle.readframes(handle.getnframes())
    except (wave.Error, EOFError, OSError):
        return None
    whole = len(data) // (2 * channels) * (2 * channels)  # a truncated file ends with whole frames, as libsndfile
    samples = np.frombuffer(data[:whole], dtype="<i2").astype(np.float32)
    samples *= np.float32(1.0 / 32768.0)
    return samples, rate, channels


def n_frames(n_samples: int, cfg: AudioConfig) -> int:
    """Mel frames of a clip of ``n_samples`` samples: ``n_samples // hop_length``."""
    return int(n_samples) // cfg.hop_length


def frame_times(count: int, cfg: AudioConfig) -> np.ndarray:
    """Times in seconds of the centres of frames ``0 .. count-1``, float64 ``(count,)``.

    Sample ``i`` is at time ``i / sampling_rate``; frame ``t`` is centred on sample ``hop * t + hop / 2``.
    """
    hop = cfg.hop_length
    return (np.arange(count, dtype=np.float64) * hop + hop / 2) / cfg.sampling_rate


def frame_padding(cfg: AudioConfig) -> int:
    """Reflect padding added on each side before framing: ``(filter_length - hop_length) / 2``."""
    return (cfg.filter_length - cfg.hop_length) // 2


def mel_basis(cfg: AudioConfig, fmax: float, dtype: type = np.float32) -> np.ndarray:
    """The Slaney-scale, area-normalised mel filterbank, ``(n_mels, n_fft // 2 + 1)`` (a fresh copy)."""
    basis = _mel_filterbank(
        cfg.sampling_rate, cfg.filter_length, cfg.n_mel_channels, cfg.mel_fmin, fmax, np.dtype(dtype).name
    )
    return basis.copy()


@functools.lru_cache(maxsize=8)
def _mel_filterbank(
    sampling_rate: int, n_fft: int, n_mels: int, fmin: float, fmax: float, dtype: str
) -> np.ndarray:
    # Cached: librosa builds it in about 45 ms, and Griffin-Lim asks for it once per clip (216 clips in
    # the demo's listening test). Callers get copies, so the cached array is never changed.
    import librosa

    return librosa.filters.mel(
        sr=sampling_rate, n_fft=n_fft, n_mels=n_mels, fmin=fmin, fmax=fmax, htk=False, norm="slaney", dtype=dtype
    )


class MelSpectrogram(nn.Module):
    """Waveform to log-mel spectrogram, HiFi-GAN framing (see the module docstring).

    Args:
        cfg: the audio section.
        fmax: upper edge of the mel filterbank; None means ``cfg.mel_fmax``.

    The window and filterbank are kept in float64 and cached per (device, dtype) of the input, not
    registered as buffers: ``model.half()`` or ``.to(bfloat16)`` on an enclosing model cannot degrade
    them, they never enter a checkpoint (a model is rebuilt from its config), and the module works on
    whatever device its input is on.
    """

    def __init__(self, cfg: AudioConfig, fmax: float | None = None) -> None:
        super().__init__()
        self.cfg = cfg
        self.fmax = float(cfg.mel_fmax if fmax is None else fmax)
        self.n_fft = cfg.filter_length
        self.hop_length = cfg.hop_length
        self.win_length = cfg.win_length
        self.padding = frame_padding(cfg)
        # torch.stft's convention for a window shorter than the FFT: centred, zero on both sides.
        left = (self.n_fft - self.win_length) // 2
        window = torch.hann_window(cfg.win_length, periodic=True, dtype=torch.float64)
        self._window = nn.functional.pad(window, (left, self.n_fft - self.win_length - left))
        self._basis = torch.from_numpy(mel_basis(cfg, self.fmax, dtype=np.float64))
        # Bins above the last one any filter covers (above fmax) add exactly nothing to the mel: the
        # magnitude and the product skip them (513 -> 372 bins at fmax 8 kHz).
        self.n_bins = int(torch.nonzero(self._basis.any(dim=0)).max()) + 1
        self._cache: dict[tuple[torch.device, torch.dtype], tuple[torch.Tensor, torch.Tensor]] = {}

    @classmethod
    def for_loss(cls, cfg: AudioConfig) -> MelSpectrogram:
        """HiFi-GAN's loss mel: ``fmax = mel_fmax_loss``, or the Nyquist frequency when that is null."""
        fmax = cfg.mel_fmax_loss if cfg.mel_fmax_loss is not None else cfg.sampling_rate / 2
        return cls(cfg, fmax=fmax)

    @property
    def basis(self) -> torch.Tensor:
        """The mel filterbank, float64 ``(n_mels, n_fft // 2 + 1)`` on the CPU."""
        return self._basis

    def _constants(self, device: torch.device, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
        key = (device, dtype)
        if key not in self._cache:
            basis = self._basis[:, : self.n_bins].contiguous()
            self._cache[key] = (self._window.to(device, dtype), basis.to(device, dtype))
        return self._cache[key]

    def forward(self, audio: torch.Tensor) -> torch.Tensor:
        """``(B, N)`` or ``(N,)`` audio in [-1, 1] -> ``(B, n_mels, N // hop)`` or ``(n_mels, N // hop)``.

        float64 input is computed in float64; anything else (float16/bfloat16 under AMP, integers) in
        float32 with autocast off, because the log-mel is a loss target and must not lose precision.
        """
        squeeze = audio.dim() == 1
        if squeeze:
            audio = audio.unsqueeze(0)
        if audio.dim() != 2:
            raise ValueError(f"audio: expected shape (B, N) or (N,), got {tuple(audio.shape)}")
        if audio.shape[-1] <= self.padding:
            raise ValueError(
                f"audio: expected more than {self.padding} samples (the reflect padding), got {audio.shape[-1]}"
            )
        if audio.dtype != torch.float64:
            audio = audio.float()
        window, basis = self._constants(audio.device, audio.dtype)
        with torch.autocast(device_type=audio.device.type, enabled=False):
            padded = nn.functional.pad(audio.unsqueeze(1), (self.padding, self.padding), mode="reflect").squeeze(1)
            # The STFT spelled out (what torch.stft computes, bit for bit): windowed frames (B, T, n_fft)
            # and their real FFT. torch.stft returns (B, freq, T) and copies into that layout; keeping
            # the FFT's own (B, T, freq) layout and transposing inside the matmul is cheaper.
            frames = padded.unfold(-1, self.n_fft, self.hop_length) * window
            spec = torch.fft.rfft(frames, dim=-1)[..., : self.n_bins]
            # re² + im² on the real and imaginary views: same value as summing view_as_real(spec)²,
            # without materialising the (..., 2) tensor (faster on the CPU).
            magnitude = torch.sqrt(spec.real.square() + spec.imag.square() + MAGNITUDE_EPS)  # (B, T, n_bins)
            log_mel = torch.log(torch.clamp(torch.matmul(basis, magnitude.mT), min=LOG_FLOOR))  # (B, n_mels, T)
        return log_mel.squeeze(0) if squeeze else log_mel

    def extra_repr(self) -> str:
        return (
            f"sr={self.cfg.sampling_rate}, n_fft={self.n_fft}, hop={self.hop_length}, win={self.win_length}, "
            f"n_mels={self.cfg.n_mel_channels}, fmin={self.cfg.mel_fmin:g}, fmax={self.fmax:g}"
        )


GRIFFIN_LIM_ITERATIONS = 32
"""librosa's default; more iterations change little for a recogniser or a listener."""


MEL_INVERSION_ITERATIONS = 50
"""Multiplicative updates of :func:`mel_to_magnitude`: the mel of the result is within 0.001 (mean log
difference) of the one asked for, ten times closer than librosa's L-BFGS ``nnls`` and ten times faster."""


def mel_to_magnitude(magnitude: np.ndarray, basis: np.ndarray, n_iter: int = MEL_INVERSION_ITERATIONS) -> np.ndarray:
    """A non-negative linear magnitude spectrogram whose mel is ``magnitude``: float64 ``(n_fft // 2 + 1, T)``.

    Solves ``min ||basis @ S - magnitude||`` over ``S >= 0`` for all frames at once by Lee and Seung's
    multiplicative updates, started from ``basis.T @ magnitude``; ``magnitude`` is ``(n_mels, T)``,
    ``basis`` the ``(n_mels, n_fft // 2 + 1)`` filterbank. The problem is underdetermined (80 equations,
    513 unknowns per frame): this start spreads a mel band's energy over its bins, as speech does.
    """
    target = basis.T @ magnitude
    spectrum = np.maximum(target, 1e-12)
    for _ in range(n_iter):
        # basis.T @ (basis @ S): two thin products, six times cheaper than the (bins x bins) Gram matrix's
        spectrum *= target / np.maximum(basis.T @ (basis @ spectrum), 1e-20)
    return spectrum


def griffin_lim(log_mel: np.ndarray, cfg: AudioConfig, n_iter: int = GRIFFIN_LIM_ITERATIONS) -> np.ndarray:
    """A non-neural inversion of a log-mel (a reference point for vocoders): float32 ``(T * hop,)``.

    ``log_mel`` is ``(n_mels, T)`` as :class:`MelSpectrogram` makes it. The magnitude spectrogram is
    recovered from the mel filterbank (:func:`mel_basis`) by non-negative least squares
    (:func:`mel_to_magnitude`) and its phase by Griffin-Lim (librosa's ``griffinlim`` from a seeded
    random phase). librosa frames with ``center=True``, half a hop away from this module's framing:
    immaterial for listening.
    """
    import librosa

    if log_mel.ndim != 2 or log_mel.shape[0] != cfg.n_mel_channels:
        raise ValueError(f"log_mel: expected shape ({cfg.n_mel_channels}, T), got {log_mel.shape}")
    # librosa's centred framing puts T * hop samples in T + 1 frames: repeat the last frame once.
    magnitude = np.exp(np.concatenate([log_mel, log_mel[:, -1:]], axis=1).astype(np.float64))
    stft_magnitude = mel_to_magnitude(magnitude, mel_basis(cfg, cfg.mel_fmax, dtype=np.float64))
    # A fixed random phase to start from: the same mel gives the same audio (and the same
    # intelligibility figures) in every benchmark run; librosa's default draws a new one each call.
    audio = librosa.griffinlim(
        stft_magnitude,
        n_iter=n_iter,
        hop_length=cfg.hop_length,
        win_length=cfg.win_length,
        window="hann",
        center=True,
        length=log_mel.shape[1] * cfg.hop_length,
        random_state=0,
    )
    return np.clip(audio, -1.0, 1.0).astype(np.float32)
