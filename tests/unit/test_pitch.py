"""Frame-level pitch: a known f0 glide recovered on our frame grid, silence, lengths, alignment of
Praat's frames with ours, interpolation rules, and statistics."""

from __future__ import annotations

import numpy as np
import parselmouth
import pytest

from tts_pipeline.audio import frame_times
from tts_pipeline.config import AudioConfig, PitchConfig
from tts_pipeline.features.pitch import (
    PitchMoments,
    extract_pitch,
    pitch_stats,
    praat_pitch,
    praat_span,
    pyin_pitch,
    resample_pitch,
)

AUDIO = AudioConfig()
PITCH = PitchConfig()
RATE = AUDIO.sampling_rate


def glide(seconds: float = 1.0, start_hz: float = 120.0, end_hz: float = 240.0, n_extra: int = 1) -> tuple:
    """A harmonic-rich voiced signal whose f0 rises linearly; returns (audio float32, f0 at our frame centres)."""
    n = int(seconds * RATE) + n_extra
    t = np.arange(n) / RATE
    f0 = start_hz + (end_hz - start_hz) * t / seconds
    phase = 2 * np.pi * np.cumsum(f0) / RATE
    audio = 0.3 * sum(0.6**k * np.sin(k * phase) for k in range(1, 9))
    centres = frame_times(n // AUDIO.hop_length, AUDIO)
    return audio.astype(np.float32), start_hz + (end_hz - start_hz) * centres / seconds


def test_praat_recovers_a_glide_within_one_percent_on_our_frames() -> None:
    audio, truth = glide()
    pitch = praat_pitch(audio, PITCH, AUDIO)
    assert pitch.dtype == np.float32 and pitch.shape == (audio.size // 256,)
    voiced = pitch > 0
    assert np.abs(pitch[voiced] / truth[voiced] - 1).max() < 0.01
    # Every frame Praat can analyse is voiced; only the edges (half a 40 ms window) are not.
    span = praat_span(audio.size, PITCH.floor_hz, 256, RATE)
    assert span is not None
    assert voiced[span.first : span.last + 1].all()
    assert not voiced[: span.first].any() and not voiced[span.last + 1 :].any()
    assert span.first <= 2 and span.last >= pitch.size - 3


def test_pitch_follows_a_shifted_glide_in_time() -> None:
    """A frame-misplacement bug would show as a bias on a glide: check the sign of the error is balanced."""
    audio, truth = glide(start_hz=100.0, end_hz=300.0)
    pitch = praat_pitch(audio, PITCH, AUDIO)
    voiced = pitch > 0
    relative = pitch[voiced] / truth[voiced] - 1
    assert abs(np.median(relative)) < 0.002


@pytest.mark.parametrize("n_extra", [1, 255])
def test_praat_at_half_the_rate_recovers_the_glide_on_the_same_frames(n_extra: int) -> None:
    audio, truth = glide(start_hz=100.0, end_hz=300.0, n_extra=n_extra)
    pitch = praat_pitch(audio, PITCH, AUDIO, analysis_rate=11025)
    assert pitch.shape == truth.shape
    voiced = pitch > 0
    assert voiced.sum() >= truth.size - 4
    relative = pitch[voiced] / truth[voiced] - 1
    assert np.abs(relative).max() < 0.01 and abs(np.median(relative)) < 0.002  # no time shift
    full_rate = praat_pitch(audio, PITCH, AUDIO)
    both = voiced & (full_rate > 0)
    assert np.abs(pitch[both] / full_rate[both] - 1).max() < 0.005


def test_praat_analysis_rate_must_divide_the_hop() -> None:
    with pytest.raises(ValueError, match="16000 Hz"):
        praat_pitch(np.zeros(RATE, np.float32), PITCH, AUDIO, analysis_rate=16000)
    with pytest.raises(ValueError, match="44100 Hz"):
        praat_pitch(np.zeros(RATE, np.float32), PITCH, AUDIO, analysis_rate=44100)


@pytest.mark.slow
def test_pyin_recovers_the_glide_too() -> None:
    audio, truth = glide()
    pitch = pyin_pitch(audio, PITCH, AUDIO)
    assert pitch.dtype == np.float32 and pitch.shape == truth.shape
    voiced = pitch > 0
    assert voiced.mean() > 0.9
    inner = voiced.copy()
    inner[:2] = inner[-2:] = False  # the zero-padded edges
    assert np.abs(pitch[inner] / truth[inner] - 1).max() < 0.01
    assert extract_pitch(audio, PITCH.model_copy(update={"method": "pyin"}), AUDIO).shape == truth.shape


def test_silence_and_noise_floor_are_unvoiced() -> None:
    silence = np.zeros(RATE, dtype=np.float32)
    np.testing.assert_array_equal(praat_pitch(silence, PITCH, AUDIO), np.zeros(RATE // 256, np.float32))
    quiet = (1e-4 * np.random.default_rng(0).standard_normal(RATE)).astype(np.float32)
    assert (praat_pitch(quiet, PITCH, AUDIO) == 0).mean() > 0.95


@pytest.mark.slow
def test_pyin_silence_is_unvoiced() -> None:
    np.testing.assert_array_equal(pyin_pitch(np.zeros(RATE // 2, np.float32), PITCH, AUDIO), np.zeros(RATE // 2 // 256))


@pytest.mark.parametrize("n_samples", [0, 100, 255, 256, 900, 2047, 3001, 10001, 22051, 22050 * 2 + 129])
def test_length_is_the_mel_frame_count(n_samples: int) -> None:
    audio = (0.1 * np.sin(2 * np.pi * 150 * np.arange(n_samples) / RATE)).astype(np.float32)
    pitch = extract_pitch(audio, PITCH, AUDIO)
    assert pitch.shape == (n_samples // 256,) and pitch.dtype == np.float32


@pytest.mark.parametrize("floor_hz", [40.0, 60.0, 75.0, 100.0, 300.0])
def test_praat_frames_land_exactly_on_our_frame_centres(floor_hz: float) -> None:
    rng = np.random.default_rng(int(floor_hz))
    for n_samples in [*rng.integers(3000, 200_000, 12), 22050, 22051, 65536]:
        span = praat_span(int(n_samples), floor_hz, 256, RATE)
        assert span is not None
        assert 0 <= span.start < span.stop <= n_samples
        sound = parselmouth.Sound(
            rng.standard_normal(span.stop - span.start), sampling_frequency=RATE, start_time=(span.start - 0.5) / RATE
        )
        times = sound.to_pitch_ac(time_step=256 / RATE, pitch_floor=floor_hz, pitch_ceiling=600.0).xs()
        expected = frame_times(int(n_samples) // 256, AUDIO)[span.first : span.last + 1]
        assert times.shape == expected.shape
        np.testing.assert_allclose(times, expected, rtol=0, atol=1e-9)


def test_too_short_for_a_praat_window_gives_none() -> None:
    assert praat_span(800, 75.0, 256, RATE) is None  # a 40 ms window does not fit with slack
    assert praat_span(1400, 75.0, 256, RATE) is not None


def test_resample_pitch_needs_voiced_neighbours_and_stays_inside() -> None:
    src_t = np.array([0.10, 0.20, 0.30, 0.40])
    src_f = np.array([100.0, 200.0, 0.0, 300.0])
    dst = np.array([0.05, 0.10, 0.15, 0.20, 0.25, 0.35, 0.40, 0.45])
    out = resample_pitch(src_t, src_f, dst)
    #              before  hit  between  hit  next unvoiced  prev unvoiced  hit  after
    np.testing.assert_allclose(out, [0.0, 100.0, 150.0, 200.0, 0.0, 0.0, 300.0, 0.0])
    assert resample_pitch(np.array([]), np.array([]), dst).tolist() == [0.0] * dst.size


def test_pitch_stats_use_voiced_frames_only() -> None:
    arrays = [np.array([0.0, 100.0, 200.0], np.float32), np.array([300.0, 0.0], np.float32), np.zeros(4)]
    stats = pitch_stats(arrays)
    assert stats["n_voiced_frames"] == 3
    assert stats["mean"] == pytest.approx(200.0)
    assert stats["std"] == pytest.approx(np.std([100.0, 200.0, 300.0]))
    assert pitch_stats([np.zeros(3)]) == {"mean": 0.0, "std": 0.0, "n_voiced_frames": 0}
    moments = PitchMoments.of(arrays[0]) + PitchMoments.of(arrays[1])
    assert moments.stats() == stats


def test_unknown_method_is_refused() -> None:
    bogus = PitchConfig.model_construct(**{**PITCH.model_dump(), "method": "crepe"})
    with pytest.raises(ValueError, match="crepe"):
        extract_pitch(np.zeros(1000, np.float32), bogus, AUDIO)
