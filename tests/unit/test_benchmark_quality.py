"""Objective quality: MCD-DTW (zero, growth, DTW against silence padding, cepstral identities), F0
RMSE and voicing error on tones of known pitch, duration ratio, mel L1."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from tts_pipeline.benchmark.quality import (
    Alignment,
    QualityMetrics,
    SpeechQuality,
    average_quality,
    f0_errors,
    mcd_per_frame,
    mel_cepstrum,
    mel_l1,
)
from tts_pipeline.config import AudioConfig
from tts_pipeline.errors import UserError

AUDIO = AudioConfig()
RATE = AUDIO.sampling_rate
HOP = AUDIO.hop_length
DB = 10.0 / math.log(10.0)


@pytest.fixture(scope="module")
def quality() -> SpeechQuality:
    return SpeechQuality(AUDIO)


def tone(f0: float, seconds: float = 1.0, edge_silence: int = 10 * HOP) -> np.ndarray:
    """A harmonic tone at ``f0`` Hz with a Hann envelope between stretches of silence, float32."""
    t = np.arange(int(seconds * RATE)) / RATE
    voiced = 0.3 * sum(0.6**k * np.sin(2 * np.pi * k * f0 * t) for k in range(1, 6)) * np.hanning(t.size)
    silence = np.zeros(edge_silence)
    return np.concatenate([silence, voiced, silence]).astype(np.float32)


def noise(seconds: float = 1.0, level: float = 0.1, seed: int = 0) -> np.ndarray:
    return (level * np.random.default_rng(seed).standard_normal(int(seconds * RATE))).astype(np.float32)


# --------------------------------------------------------------------------------------------------
# mel cepstra: the DCT convention behind the MCD formula
# --------------------------------------------------------------------------------------------------


def test_a_cosine_ripple_in_the_log_mel_is_one_cepstral_coefficient() -> None:
    channels, frames, amplitude, order = 80, 5, 0.4, 3
    log_mel = np.random.default_rng(0).normal(size=(channels, frames))
    ripple = amplitude * np.cos(np.pi * order * (np.arange(channels) + 0.5) / channels)[:, None]
    delta = mel_cepstrum(log_mel + ripple, 24) - mel_cepstrum(log_mel, 24)
    expected = np.zeros((24, frames))
    expected[order - 1] = amplitude / 2  # c_d is half the cosine's amplitude (L = c0 + 2 sum c_d cos)
    np.testing.assert_allclose(delta, expected, atol=1e-12)
    # MCD = 10/ln10 * sqrt(2 * (a/2)^2) = 10/ln10 * a / sqrt(2): 1.228 dB here
    frame_mcd = mcd_per_frame(mel_cepstrum(log_mel + ripple, 24), mel_cepstrum(log_mel, 24))
    np.testing.assert_allclose(frame_mcd, DB * amplitude / math.sqrt(2), rtol=1e-12)
    assert frame_mcd[0] == pytest.approx(1.2283, abs=1e-4)


def test_a_level_change_is_c0_only_and_costs_nothing() -> None:
    log_mel = np.random.default_rng(1).normal(size=(80, 4))
    np.testing.assert_allclose(mel_cepstrum(log_mel + 2.5, 24), mel_cepstrum(log_mel, 24), atol=1e-12)


def test_with_every_coefficient_the_mcd_is_parsevals_log_spectral_distance() -> None:
    rng = np.random.default_rng(2)
    a, b = rng.normal(size=(80, 3)), rng.normal(size=(80, 3))
    difference = a - b
    level = difference.mean(axis=0)  # c_0 of the difference
    rms = np.sqrt(np.mean(difference**2, axis=0) - level**2)
    np.testing.assert_allclose(mcd_per_frame(mel_cepstrum(a, 79), mel_cepstrum(b, 79)), DB * rms, rtol=1e-10)


# --------------------------------------------------------------------------------------------------
# MCD-DTW on waveforms
# --------------------------------------------------------------------------------------------------


def test_identical_signals_score_zero(quality: SpeechQuality) -> None:
    audio = tone(120.0)
    metrics = quality.compare(audio, audio.copy())
    assert metrics.mcd_db == 0.0
    assert metrics.f0_rmse_hz == 0.0 and metrics.voicing_error == 0.0
    assert metrics.duration_ratio == 1.0
    assert metrics.aligned_frames == audio.size // HOP and metrics.voiced_frames > 70


def test_mcd_grows_with_added_distortion(quality: SpeechQuality) -> None:
    clean = tone(150.0)
    distortion = noise(seconds=clean.size / RATE, level=1.0, seed=3)
    scores = [quality.compare(clean + level * distortion, clean).mcd_db for level in (0.001, 0.003, 0.01, 0.03, 0.1)]
    assert all(low < high for low, high in zip(scores, scores[1:], strict=False)), scores
    assert scores[0] > 0.5


def test_a_gain_change_of_broadband_audio_costs_nothing(quality: SpeechQuality) -> None:
    audio = noise(level=0.1)
    assert quality.compare(0.3 * audio, audio).mcd_db < 1e-3


def test_dtw_absorbs_extra_silence(quality: SpeechQuality) -> None:
    reference = tone(120.0)
    padded = np.concatenate([np.zeros(20 * HOP, np.float32), reference, np.zeros(40 * HOP, np.float32)])
    metrics = quality.compare(padded, reference)
    assert metrics.mcd_db < 1e-6
    assert metrics.voicing_error < 1e-9 and metrics.f0_rmse_hz < 0.01
    assert metrics.duration_ratio == pytest.approx(padded.size / reference.size)
    # Without the alignment the same pair is far apart.
    a, b = quality.cepstra(reference), quality.cepstra(padded)
    assert mcd_per_frame(a, b[:, : a.shape[1]]).mean() > 2.0
    # A shift by a fraction of a hop changes the framing a little, not the verdict.
    shifted = np.concatenate([np.zeros(20 * HOP + 100, np.float32), reference])
    assert quality.compare(shifted, reference).mcd_db < 0.6


# --------------------------------------------------------------------------------------------------
# F0, voicing, duration
# --------------------------------------------------------------------------------------------------


def test_f0_rmse_of_120_against_130_hz_is_10_hz(quality: SpeechQuality) -> None:
    metrics = quality.compare(tone(130.0), tone(120.0))
    assert metrics.f0_rmse_hz == pytest.approx(10.0, abs=0.3)
    assert metrics.f0_rmse_cents == pytest.approx(1200 * math.log2(130 / 120), abs=5.0)
    assert metrics.voicing_error < 0.05
    assert metrics.voiced_frames > 60


def test_unvoiced_synthesis_is_a_voicing_error_on_every_voiced_reference_frame(quality: SpeechQuality) -> None:
    reference = tone(120.0, edge_silence=0)
    metrics = quality.compare(noise(seconds=reference.size / RATE, level=0.05), reference)
    assert math.isnan(metrics.f0_rmse_hz) and metrics.voiced_frames == 0
    assert metrics.voicing_error > 0.85


def test_f0_errors_on_known_arrays() -> None:
    reference = np.array([0, 0, 120, 120, 120, 0, 200], dtype=np.float32)
    synthesized = np.array([0, 130, 130, 110, 120, 0, 0], dtype=np.float32)
    same = np.arange(7)
    errors = f0_errors(reference, synthesized, Alignment(same, same))
    assert errors.rmse_hz == pytest.approx(math.sqrt((100 + 100 + 0) / 3))
    assert errors.voicing_error == pytest.approx(2 / 7)  # frames 1 and 6
    assert errors.voiced_pairs == 3 and errors.pairs == 7
    # On an alignment that repeats a frame, each pair counts.
    errors = f0_errors(reference, synthesized, Alignment(np.array([2, 2, 3]), np.array([2, 4, 4])))
    assert errors.rmse_hz == pytest.approx(math.sqrt((100 + 0 + 0) / 3))


def test_precomputed_pitch_is_used_and_checked(quality: SpeechQuality) -> None:
    audio = tone(120.0)
    frames = audio.size // HOP
    flat = np.full(frames, 100.0)
    metrics = quality.compare(audio, audio, synthesized_f0=flat * 1.1, reference_f0=flat)
    assert metrics.f0_rmse_hz == pytest.approx(10.0)
    with pytest.raises(UserError, match=rf"LJ001-0001: reference pitch: expected shape \({frames},\)"):
        quality.compare(audio, audio, reference_f0=flat[:-1], utterance="LJ001-0001")


def test_duration_ratio_and_bad_input(quality: SpeechQuality) -> None:
    reference = tone(120.0, seconds=1.0, edge_silence=0)
    longer = tone(120.0, seconds=1.5, edge_silence=0)
    assert quality.compare(longer, reference).duration_ratio == pytest.approx(1.5, abs=1e-4)
    with pytest.raises(UserError, match="LJ002: synthesised audio: expected shape"):
        quality.compare(reference[None], reference, utterance="LJ002")
    with pytest.raises(UserError, match="at least 1024 samples"):
        quality.compare(reference[:500], reference)


def test_average_quality_skips_missing_f0() -> None:
    a = QualityMetrics(4.0, 10.0, 100.0, 0.1, 1.0, 50, 40)
    b = QualityMetrics(6.0, math.nan, math.nan, 0.3, 1.2, 50, 0)
    mean = average_quality([a, b])
    assert mean["mcd_db"] == 5.0 and mean["f0_rmse_hz"] == 10.0 and mean["utterances_with_f0"] == 1
    assert mean["voicing_error"] == pytest.approx(0.2) and mean["duration_ratio"] == pytest.approx(1.1)


def test_mel_l1() -> None:
    target = np.zeros((80, 10), dtype=np.float32)
    assert mel_l1(target + 0.5, target) == pytest.approx(0.5)
    assert mel_l1(torch.ones(2, 80, 10), torch.zeros(2, 80, 10)) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="mel shapes differ"):
        mel_l1(np.zeros((80, 10)), np.zeros((80, 11)))
