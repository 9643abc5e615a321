"""Runner and statistics on scripted latencies: exactly the scripted values are recorded, warm-up
calls are not, and the percentiles are numpy's empirical ones (not NVIDIA's mean + z * std)."""

from __future__ import annotations

import numpy as np
import pytest

from tts_pipeline.benchmark.runner import CallResult, benchmark
from tts_pipeline.benchmark.stats import latency_stats
from tts_pipeline.timers import Timer

WARMUP_SECONDS = 100.0  # a warm-up latency; it must never show up in the figures


class ScriptedClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def skewed_latencies(n: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """FastPitch and HiFi-GAN latencies with a long right tail (seconds), as on a real device."""
    rng = np.random.default_rng(7)
    fastpitch = 0.004 + rng.lognormal(mean=-7.0, sigma=1.0, size=n)
    hifigan = 0.010 + rng.lognormal(mean=-6.0, sigma=1.2, size=n)
    return fastpitch, hifigan


def scripted_call(clock: ScriptedClock, fastpitch: np.ndarray, hifigan: np.ndarray, warmup: int):
    """A call that, for its k-th invocation, spends the scripted seconds inside each component."""
    state = {"k": 0}

    def call(timer: Timer) -> CallResult:
        k = state["k"]
        state["k"] += 1
        timed_index = k - warmup
        with timer("fastpitch"):
            clock.advance(WARMUP_SECONDS if timed_index < 0 else fastpitch[timed_index])
        clock.advance(3.0)  # untimed work between the models
        with timer("hifigan"):
            clock.advance(WARMUP_SECONDS if timed_index < 0 else hifigan[timed_index])
        return CallResult(utterances=1, audio_samples=22050 * 8)

    return call, state


def test_runner_records_exactly_the_scripted_latencies_and_skips_warmup() -> None:
    fastpitch, hifigan = skewed_latencies()
    clock = ScriptedClock()
    call, state = scripted_call(clock, fastpitch, hifigan, warmup=5)
    run = benchmark(call, warmup=5, repeats=fastpitch.size, clock=clock)
    assert state["k"] == 5 + fastpitch.size
    assert len(run.latencies) == len(run.calls) == fastpitch.size
    np.testing.assert_allclose(run.latencies["fastpitch"], fastpitch, rtol=0, atol=1e-9)
    np.testing.assert_allclose(run.latencies["hifigan"], hifigan, rtol=0, atol=1e-9)
    np.testing.assert_allclose(run.latencies["total"], fastpitch + hifigan, rtol=0, atol=1e-9)
    assert run.latencies["total"].max() < WARMUP_SECONDS


def test_percentiles_are_numpys_empirical_ones_and_not_mean_plus_z_std() -> None:
    fastpitch, hifigan = skewed_latencies()
    clock = ScriptedClock()
    call, _ = scripted_call(clock, fastpitch, hifigan, warmup=2)
    row = benchmark(call, warmup=2, repeats=fastpitch.size, clock=clock).summarize(sampling_rate=22050)
    total = fastpitch + hifigan
    for name, values in [("fastpitch", fastpitch), ("hifigan", hifigan), ("total", total)]:
        expected = np.percentile(values, [50, 90, 95, 99])
        got = [row[f"{name}_latency_p{q}_s"] for q in (50, 90, 95, 99)]
        np.testing.assert_allclose(got, expected, rtol=1e-9)
        assert row[f"{name}_latency_mean_s"] == pytest.approx(values.mean(), rel=1e-9)
        assert row[f"{name}_latency_n"] == values.size
    assert row["latency_p99_s"] == row["total_latency_p99_s"]
    # NVIDIA's "percentiles" are mean + z * population std: on this long-tailed sample their "90%" is
    # too high and their "99%" too low (the two curves cross near 95 %).
    mean, std = total.mean(), total.std()
    assert row["latency_p90_s"] < 0.9 * (mean + 1.6449 * std)
    assert row["latency_p99_s"] > 1.2 * (mean + 2.5758 * std)


def test_percentiles_differ_from_mean_plus_z_std_on_a_bimodal_sample() -> None:
    # 90 calls at 10 ms and 10 hiccups at 50 ms: 90 % of calls take at most ~10 ms.
    latencies = np.array([0.010] * 90 + [0.050] * 10)
    stats = latency_stats(latencies)
    assert (stats.p50, stats.p90, stats.p95, stats.p99) == pytest.approx((0.010, 0.014, 0.050, 0.050))
    mean, std = latencies.mean(), latencies.std()
    nvidia = {90: mean + 1.6449 * std, 95: mean + 1.9600 * std, 99: mean + 2.5758 * std}
    assert nvidia == pytest.approx({90: 0.03374, 95: 0.03752, 99: 0.04491}, abs=1e-5)
    for q, empirical in [(90, stats.p90), (95, stats.p95), (99, stats.p99)]:
        assert abs(empirical - nvidia[q]) > 0.1 * nvidia[q]


def test_latency_stats_fields_on_a_small_known_sample() -> None:
    stats = latency_stats([0.1, 0.2, 0.3, 0.4, 1.0])
    assert stats.n == 5 and stats.min == 0.1 and stats.max == 1.0
    assert stats.mean == pytest.approx(0.4)
    assert stats.std == pytest.approx(np.std([0.1, 0.2, 0.3, 0.4, 1.0]))
    assert stats.p50 == pytest.approx(0.3)
    # linear interpolation: h = (n - 1) * 0.9 = 3.6 -> 0.4 + 0.6 * (1.0 - 0.4)
    assert stats.p90 == pytest.approx(0.76)
    with pytest.raises(ValueError, match="non-empty"):
        latency_stats([])


def test_runner_rejects_bad_arguments_and_results() -> None:
    with pytest.raises(ValueError, match="repeats >= 1"):
        benchmark(lambda timer: CallResult(1, 1), warmup=0, repeats=0)
    with pytest.raises(TypeError, match="CallResult"):
        benchmark(lambda timer: None, warmup=1, repeats=1)  # type: ignore[arg-type, return-value]
    with pytest.raises(ValueError, match="timed no component"):
        benchmark(lambda timer: CallResult(1, 1), warmup=0, repeats=1)
    with pytest.raises(ValueError, match="utterance"):
        CallResult(utterances=0, audio_samples=10)


def test_run_refuses_to_summarise_mixed_batch_sizes() -> None:
    clock = ScriptedClock()
    sizes = iter([1, 2])

    def call(timer: Timer) -> CallResult:
        with timer("hifigan"):
            clock.advance(0.5)
        return CallResult(utterances=next(sizes), audio_samples=100)

    run = benchmark(call, warmup=0, repeats=2, clock=clock)
    with pytest.raises(ValueError, match="one batch size"):
        run.summarize(22050)
