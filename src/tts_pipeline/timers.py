"""Device-synchronised timing of named regions, for inference, benchmarks and training throughput.

CUDA kernels run asynchronously: a clock read right after ``model(x)`` returns measures the launch,
not the work. :class:`Timer` therefore waits for the device (``torch.cuda.synchronize``) before it
reads the clock at both ends of a timed region, so a region's time covers exactly the device work
queued inside it (work queued earlier is drained before the start reading). On the CPU there is
nothing to wait for and no synchronisation happens.

The clock is injectable (any callable returning seconds, :func:`time.perf_counter` by default), so
tests drive the timer with a scripted clock.

Typical use inside one call (the caller creates the timer)::

    with timer("fastpitch"):
        mel = fastpitch(tokens)
    with timer("vocoder"):
        audio = vocoder(mel)
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from typing import Generic, NamedTuple, TypeVar

import torch


def synchronize(device: torch.device) -> None:
    """Wait for queued device work, so that a clock read measures finished work."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


Clock = Callable[[], float]
"""A clock: returns the current time in seconds (only differences are used)."""

TOTAL = "total"
"""Reserved for the per-call sum of the components (:class:`tts_pipeline.benchmark.timing.LatencySamples`
computes it), so no region may take this name."""

T = TypeVar("T")


def _as_device(device: torch.device | str | None) -> torch.device:
    return torch.device("cpu") if device is None else torch.device(device)


class Timer:
    """Times named regions of one call; each region is bracketed by device synchronisation.

    Args:
        device: The device the timed work runs on; CUDA devices are synchronised before each clock
            read, anything else is not. None means the CPU.
        clock: Returns seconds; :func:`time.perf_counter` unless a test scripts it.

    Calling the timer with a name gives a context manager; the seconds spent inside it are added to
    that name (a component timed twice within one call counts both parts). :meth:`take` returns the
    call's record and starts an empty one.
    """

    def __init__(self, device: torch.device | str | None = None, clock: Clock = time.perf_counter) -> None:
        self.device = _as_device(device)
        self.clock = clock
        self._seconds: dict[str, float] = {}

    @contextlib.contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        if not name or name == TOTAL:
            raise ValueError(f"timer: a component needs a name other than {TOTAL!r}, got {name!r}")
        synchronize(self.device)
        start = self.clock()
        yield
        synchronize(self.device)
        elapsed = self.clock() - start
        if elapsed < 0:
            raise ValueError(f"timer: the clock went backwards while timing {name!r} ({elapsed:g} s)")
        self._seconds[name] = self._seconds.get(name, 0.0) + elapsed

    def take(self) -> dict[str, float]:
        """Seconds per component recorded since the last :meth:`take` (in first-timed order); then clears."""
        seconds, self._seconds = self._seconds, {}
        return seconds


class Timed(NamedTuple, Generic[T]):
    """What :func:`timed` returns: the function's result and its device-synchronised duration."""

    value: T
    seconds: float


def timed(
    function: Callable[[], T], *, device: torch.device | str | None = None, clock: Clock = time.perf_counter
) -> Timed[T]:
    """Run ``function()`` once between two synchronised clock reads; returns its value and the seconds."""
    timer = Timer(device, clock)
    with timer("call"):
        value = function()
    return Timed(value, timer.take()["call"])
