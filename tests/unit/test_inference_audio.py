"""The bias-spectrum denoiser, fade-out, peak normalisation, PCM writing and length-sorted batching."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf
import torch
from torch import nn

from tts_pipeline.config import AudioConfig
from tts_pipeline.inference import (
    fade_out,
    normalize_peak,
    pad_mels,
    pad_tokens,
    plan_batches,
    to_pcm16,
    write_wav,
)
from tts_pipeline.models.denoiser import Denoiser

AUDIO = AudioConfig()
SR, HOP = AUDIO.sampling_rate, AUDIO.hop_length
HISS_HZ, VOICE_HZ = 186 * SR / AUDIO.filter_length, 300.0  # the hiss on an STFT bin (4005 Hz)


@pytest.fixture(autouse=True)
def one_thread():
    torch.set_num_threads(1)


class HissVocoder(nn.Module):
    """A stand-in vocoder whose output is a stationary 4 kHz tone whatever the mel: a pure bias.

    A cosine, because the first STFT frame is reflect-padded and the reflection of a cosine around
    sample 0 continues it exactly (a sine's would cancel at its own frequency).
    """

    def __init__(self) -> None:
        super().__init__()
        self.level = nn.Parameter(torch.tensor(0.05))

    def forward(self, mel: torch.Tensor) -> torch.Tensor:
        t = torch.arange(mel.shape[-1] * HOP) / SR
        return (self.level * torch.cos(2 * np.pi * HISS_HZ * t)).expand(mel.shape[0], 1, -1)


def band_level(audio: np.ndarray, hz: float) -> float:
    """Magnitude of the spectrum near ``hz`` (Hann-windowed FFT of the middle of the clip)."""
    middle = audio[len(audio) // 4 : 3 * len(audio) // 4]
    spectrum = np.abs(np.fft.rfft(middle * np.hanning(len(middle))))
    freqs = np.fft.rfftfreq(len(middle), 1 / SR)
    return float(spectrum[np.abs(freqs - hz) < 30].max())


def test_denoiser_measures_the_bias_and_removes_it_keeping_the_rest():
    denoiser = Denoiser.from_vocoder(HissVocoder(), AUDIO)
    bins = np.fft.rfftfreq(AUDIO.filter_length, 1 / SR)
    assert denoiser.bias.shape == (AUDIO.filter_length // 2 + 1,)
    assert bins[int(denoiser.bias.argmax())] == pytest.approx(HISS_HZ)

    t = np.arange(SR // 2) / SR
    voice = 0.3 * np.sin(2 * np.pi * VOICE_HZ * t)
    hiss = 0.05 * np.cos(2 * np.pi * HISS_HZ * t)
    noisy = torch.from_numpy((voice + hiss).astype(np.float32))
    cleaned = denoiser(noisy, strength=1.0).numpy()
    assert cleaned.shape == noisy.shape and cleaned.dtype == np.float32
    assert band_level(cleaned, HISS_HZ) < 0.1 * band_level(noisy.numpy(), HISS_HZ)
    assert band_level(cleaned, VOICE_HZ) == pytest.approx(band_level(noisy.numpy(), VOICE_HZ), rel=0.02)


def test_denoiser_at_strength_zero_is_the_identity_and_its_round_trip_is_transparent():
    denoiser = Denoiser(torch.zeros(AUDIO.filter_length // 2 + 1), AUDIO)
    audio = torch.randn(2, 5000) * 0.1
    assert denoiser(audio, 0.0) is audio
    # A positive strength on a zero bias goes through the STFT and back: same samples, same length.
    torch.testing.assert_close(denoiser(audio, 0.5), audio, atol=1e-5, rtol=0)
    single = denoiser(audio[0], 0.5)
    assert single.shape == (5000,)
    for n in (256, 300, 513):  # clips shorter than the reflect padding still work
        assert denoiser(audio[0, :n], 0.5).shape == (n,)
    with pytest.raises(ValueError, match="expected >= 0"):
        denoiser(audio, -0.1)


def test_fade_out_ramps_the_last_samples_to_zero_and_leaves_the_rest():
    audio = np.ones(1000, dtype=np.float32)
    faded = fade_out(audio, 100)
    np.testing.assert_array_equal(faded[:900], 1.0)
    np.testing.assert_allclose(faded[900:], np.linspace(1.0, 0.0, 100), atol=1e-7)
    assert faded[-1] == 0.0 and audio[-1] == 1.0  # the input is not modified
    np.testing.assert_allclose(fade_out(audio[:50], 100), np.linspace(1.0, 0.0, 50), atol=1e-7)
    np.testing.assert_array_equal(fade_out(audio, 0), audio)
    assert fade_out(np.zeros(0, dtype=np.float32), 10).shape == (0,)


def test_peak_normalisation_and_pcm_conversion():
    audio = np.array([0.0, 0.25, -0.5], dtype=np.float32)
    np.testing.assert_allclose(normalize_peak(audio), [0.0, 0.5, -1.0])
    np.testing.assert_array_equal(normalize_peak(np.zeros(4, dtype=np.float32)), 0.0)
    pcm = to_pcm16(np.array([0.0, 0.5, -1.0, 1.0, 1.5, -1.5, 1e-5]))
    assert pcm.dtype == np.int16
    np.testing.assert_array_equal(pcm, [0, 16384, -32768, 32767, 32767, -32768, 0])


def test_write_wav_writes_16_bit_pcm_atomically(tmp_path):
    audio = (0.5 * np.sin(np.linspace(0, 100, 3000))).astype(np.float32)
    path = write_wav(tmp_path / "out" / "x.wav", audio, SR)
    info = sf.info(path)
    assert (info.samplerate, info.channels, info.frames, info.subtype) == (SR, 1, 3000, "PCM_16")
    np.testing.assert_allclose(sf.read(path, dtype="float32")[0], audio, atol=1 / 32768)
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["x.wav"]


def test_batches_are_longest_first_with_ties_in_input_order():
    assert plan_batches([3, 9, 5, 9, 1], 2) == [[1, 3], [2, 0], [4]]
    assert plan_batches([4, 4, 4], 8) == [[0, 1, 2]]
    assert plan_batches([], 4) == []
    with pytest.raises(ValueError):
        plan_batches([1], 0)


def test_padding_of_tokens_and_mels():
    tokens, lengths = pad_tokens([[5, 6, 7], [8]])
    assert tokens.tolist() == [[5, 6, 7], [8, 0, 0]] and lengths.tolist() == [3, 1]
    assert tokens.dtype == lengths.dtype == torch.int64
    mels, mel_lengths = pad_mels([torch.zeros(4, 2), torch.ones(4, 3)], fill=-11.5)
    assert mels.shape == (2, 4, 3) and mel_lengths.tolist() == [2, 3]
    assert mels[0, :, 2].eq(-11.5).all() and mels[1].eq(1.0).all()
