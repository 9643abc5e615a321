"""What happens to an utterance's waveform after the vocoder: fade-out, optional peak normalisation,
16-bit PCM WAV writing (reference 5.3, step 7).

NVIDIA divides every utterance by its own peak and writes float32 WAVs. Here the level is kept by
default (the vocoder was trained on ``x / 32768`` audio, so its output is already at the corpus level,
and per-file normalisation would make loudness differ between utterances); ``normalize_peak`` restores
NVIDIA's behaviour. Files are 16-bit PCM, rounded and saturated explicitly.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import soundfile as sf

from tts_pipeline.files import atomic_path


def fade_out(audio: np.ndarray, n_samples: int) -> np.ndarray:
    """A copy of ``audio`` ``(N,)`` with a linear ramp from 1 to 0 over its last ``n_samples`` samples.

    The ramp is NVIDIA's ``linspace(1, 0, n)``: the first faded sample keeps its value, the last is 0.
    A clip shorter than the fade is faded over its whole length.
    """
    if n_samples < 0:
        raise ValueError(f"fade-out: expected >= 0 samples, got {n_samples}")
    out = np.array(audio, dtype=np.float32, copy=True)
    n = min(n_samples, out.shape[-1])
    if n > 0:
        out[-n:] *= np.linspace(1.0, 0.0, n, dtype=np.float32)
    return out


def normalize_peak(audio: np.ndarray, peak: float = 1.0) -> np.ndarray:
    """``audio`` scaled so that ``max |x| = peak`` (silence is returned unchanged)."""
    largest = float(np.max(np.abs(audio))) if audio.size else 0.0
    if largest == 0.0:
        return np.array(audio, dtype=np.float32, copy=True)
    return (np.asarray(audio, dtype=np.float32) * np.float32(peak / largest)).astype(np.float32)


def to_pcm16(audio: np.ndarray, max_wav_value: float = 32768.0) -> np.ndarray:
    """float audio in [-1, 1] -> int16 ``round(x * max_wav_value)``, saturated at the int16 range.

    libsndfile would wrap an out-of-range float around instead of clipping it.
    """
    return np.clip(np.rint(np.asarray(audio, dtype=np.float64) * max_wav_value), -32768, 32767).astype(np.int16)


def write_wav(path: str | Path, audio: np.ndarray, sampling_rate: int, max_wav_value: float = 32768.0) -> Path:
    """Write ``audio`` ``(N,)`` as a mono 16-bit PCM WAV atomically; returns the path."""
    path = Path(path)
    with atomic_path(path) as tmp:
        sf.write(tmp, to_pcm16(audio, max_wav_value), sampling_rate, subtype="PCM_16", format="WAV")
    return path
