"""Timer: exact latencies from a scripted clock, device synchronisation before each clock read (CUDA
only), per-call totals that add the same call's components."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tts_pipeline.benchmark.timing import LatencySamples
from tts_pipeline.timers import Timer, timed


class ScriptedClock:
    """A clock that moves only when told to; logs each read into a shared event list."""

    def __init__(self, events: list[str] | None = None) -> None:
        self.now = 1000.0
        self.events = events if events is not None else []

    def __call__(self) -> float:
        self.events.append("clock")
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def test_timer_records_the_scripted_seconds_per_component_and_adds_repeats() -> None:
    clock = ScriptedClock()
    timer = Timer("cpu", clock)
    with timer("fastpitch"):
        clock.advance(0.25)
    clock.advance(7.0)  # untimed work between components is not counted
    with timer("hifigan"):
        clock.advance(0.5)
    with timer("fastpitch"):
        clock.advance(0.125)
    assert timer.take() == {"fastpitch": 0.375, "hifigan": 0.5}
    assert timer.take() == {}


def test_timer_synchronises_cuda_before_each_clock_read(monkeypatch: pytest.MonkeyPatch) -> None:
    events: list[str] = []
    monkeypatch.setattr(torch.cuda, "synchronize", lambda device=None: events.append("sync"))
    clock = ScriptedClock(events)
    timer = Timer(torch.device("cuda"), clock)
    with timer("hifigan"):
        events.append("work")
        clock.advance(0.5)
    assert events == ["sync", "clock", "work", "sync", "clock"]
    assert timer.take() == {"hifigan": 0.5}


def test_timer_does_not_synchronise_on_the_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    events: list[str] = []
    monkeypatch.setattr(torch.cuda, "synchronize", lambda device=None: events.append("sync"))
    timer = Timer(None, ScriptedClock(events))
    with timer("fastpitch"):
        pass
    assert events == ["clock", "clock"]


def test_timed_returns_value_and_seconds() -> None:
    clock = ScriptedClock()

    def work() -> str:
        clock.advance(0.75)
        return "done"

    result = timed(work, clock=clock)
    assert result.value == "done" and result.seconds == 0.75


def test_timer_rejects_the_reserved_name_and_a_backwards_clock() -> None:
    clock = ScriptedClock()
    timer = Timer("cpu", clock)
    with pytest.raises(ValueError, match="total"), timer("total"):
        pass
    with pytest.raises(ValueError, match="backwards"), timer("fastpitch"):
        clock.advance(-1.0)


def test_total_is_the_sum_of_each_calls_own_components_not_of_sorted_arrays() -> None:
    samples = LatencySamples()
    for fastpitch, hifigan in [(0.001, 0.003), (0.002, 0.002), (0.003, 0.001)]:
        samples.add({"fastpitch": fastpitch, "hifigan": hifigan})
    assert samples.components == ("fastpitch", "hifigan")
    assert len(samples) == 3
    np.testing.assert_allclose(samples["total"], [0.004, 0.004, 0.004], rtol=1e-12)
    # NVIDIA's pairing (sorted + sorted) would give a spread of 0.002..0.006 for calls that all took 0.004.
    nvidia = np.sort(samples["fastpitch"]) + np.sort(samples["hifigan"])
    assert np.ptp(nvidia) == pytest.approx(0.004) and np.ptp(samples["total"]) < 1e-12
    assert samples.as_dict()["total"] == pytest.approx([0.004] * 3)


def test_latency_samples_reject_inconsistent_calls() -> None:
    samples = LatencySamples()
    samples.add({"fastpitch": 0.1, "hifigan": 0.2})
    with pytest.raises(ValueError, match="call 2 timed"):
        samples.add({"fastpitch": 0.1})
    with pytest.raises(ValueError, match="no component"):
        samples.add({})
    with pytest.raises(KeyError, match="waveglow"):
        samples["waveglow"]


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_work_is_finished_when_the_region_ends() -> None:
    device = torch.device("cuda")
    a = torch.randn(4096, 4096, device=device)
    timer = Timer(device)
    with timer("matmul"):
        for _ in range(20):
            a = torch.tanh(a @ a)  # queued asynchronously; far from done when the loop returns
    assert torch.cuda.current_stream(device).query()  # the timer waited for the queued kernels
    assert timer.take()["matmul"] > 0
