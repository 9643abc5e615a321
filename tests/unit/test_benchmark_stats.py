"""Real-time factors and throughput: both directions, and batches counted per utterance."""

from __future__ import annotations

import pytest

from tts_pipeline.benchmark.stats import real_time_factor, samples_per_second, summarize, x_real_time
from tts_pipeline.benchmark.timing import LatencySamples


def samples_of(*calls: dict[str, float]) -> LatencySamples:
    samples = LatencySamples()
    for call in calls:
        samples.add(call)
    return samples


def test_rtf_and_x_real_time_are_inverse() -> None:
    assert real_time_factor(compute_seconds=2.0, audio_seconds=8.0) == 0.25
    assert x_real_time(audio_seconds=8.0, compute_seconds=2.0) == 4.0
    assert samples_per_second(8 * 22050, 2.0) == 4 * 22050
    with pytest.raises(ValueError, match="compute seconds"):
        x_real_time(8.0, 0.0)


def test_summary_of_batch_one() -> None:
    row = summarize(samples_of({"fastpitch": 0.5, "vocoder": 1.5}), 8.0, batch_size=1, sampling_rate=22050)
    assert row["rtf"] == 0.25 and row["x_real_time"] == 4.0
    assert row["nvidia_avg_rtf"] == 4.0  # at batch size 1 NVIDIA's formula is right
    assert row["fastpitch_x_real_time"] == 16.0 and row["vocoder_x_real_time"] == pytest.approx(8 / 1.5)
    assert row["samples_per_s"] == 4 * 22050
    assert row["audio_seconds_per_utterance"] == 8.0


def test_batch_counts_every_utterance_not_nvidias_one_per_batch() -> None:
    # 4 utterances of 2 s each per call, 1 s per call: 8 s of audio per second of compute.
    calls = [{"fastpitch": 0.25, "vocoder": 0.75}] * 3
    row = summarize(samples_of(*calls), audio_seconds_per_call=4 * 2.0, batch_size=4, sampling_rate=22050)
    assert row["x_real_time"] == 8.0
    assert row["rtf"] == 0.125
    assert row["nvidia_avg_rtf"] == 2.0  # NVIDIA: per-utterance audio / batch latency, B times too small
    assert row["audio_seconds_per_utterance"] == 2.0
    assert row["samples_per_s"] == 8 * 22050
    assert row["latency_mean_s"] == 1.0 and row["n_calls"] == 3


def test_audio_may_differ_per_call() -> None:
    row = summarize(samples_of({"vocoder": 1.0}, {"vocoder": 3.0}), [2.0, 6.0], batch_size=1, sampling_rate=100)
    assert row["x_real_time"] == 2.0  # (2 + 6) s of audio / (1 + 3) s of compute
    with pytest.raises(ValueError, match="one value per call"):
        summarize(samples_of({"vocoder": 1.0}), [2.0, 6.0], batch_size=1, sampling_rate=100)
    with pytest.raises(ValueError, match="no call"):
        summarize(LatencySamples(), 1.0, batch_size=1, sampling_rate=100)
