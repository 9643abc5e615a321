"""Device-synchronised timing of the components of one inference call, and the latencies collected.

CUDA kernels run asynchronously: a clock read right after ``model(x)`` returns measures the launch,
not the work. :class:`Timer` therefore waits for the device (``torch.cuda.synchronize``) before it
reads the clock at both ends of a timed region, so a region's time covers exactly the device work
queued inside it (work queued earlier is drained before the start reading). On the CPU there is
nothing to wait for and no synchronisation happens.

The clock is injectable (any callable returning seconds, :func:`time.perf_counter` by default), so
tests drive the timer with a scripted clock.

Typical use inside one call (the runner creates the timer)::

    with timer("fastpitch"):
        mel = fastpitch(tokens)
    with timer("hifigan"):
        audio = hifigan(mel)
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Generic, NamedTuple, TypeVar

import numpy as np
import torch

from tts_pipeline.training.engine import synchronize

Clock = Callable[[], float]
"""A clock: returns the current time in seconds (only differences are used)."""

TOTAL = "total"
"""Name of the per-call sum of the component latencies in :class:`LatencySamples`."""

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


class LatencySamples:
    """Per-call latencies (seconds) of each component, and of their per-call sum ``"total"``.

    Every call must time the same components. ``samples["total"][i]`` is the sum of call ``i``'s
    own components, so its percentiles describe whole calls. NVIDIA's inference script instead sorts
    each component's latencies separately and adds the sorted arrays element-wise (reference 5.3.6,
    quirk 18): its i-th "pair" value mixes the i-th fastest generator call with the i-th fastest
    vocoder call, which need not come from the same call. The mean is unaffected, but the spread is
    the largest possible (it assumes the slowest generator call always coincides with the slowest
    vocoder call), so its tail figures overstate the tail of real calls.
    """

    def __init__(self) -> None:
        self._components: dict[str, list[float]] = {}
        self._total: list[float] = []

    def add(self, call: Mapping[str, float]) -> None:
        """Record one call: ``{component: seconds}`` with the same components as every earlier call."""
        if not call:
            raise ValueError("latency samples: the call timed no component (wrap each model in `with timer(name):`)")
        if TOTAL in call:
            raise ValueError(f"latency samples: {TOTAL!r} is computed, not recorded")
        if self._components and set(call) != set(self._components):
            raise ValueError(
                f"latency samples: call {len(self._total) + 1} timed {sorted(call)}, "
                f"earlier calls timed {sorted(self._components)}"
            )
        for name, seconds in call.items():
            self._components.setdefault(name, []).append(float(seconds))
        self._total.append(float(sum(call.values())))

    @property
    def components(self) -> tuple[str, ...]:
        """The component names, in the order the first call timed them (``"total"`` excluded)."""
        return tuple(self._components)

    @property
    def names(self) -> tuple[str, ...]:
        """The component names followed by ``"total"``."""
        return (*self.components, TOTAL)

    def __len__(self) -> int:
        """Number of calls recorded."""
        return len(self._total)

    def __getitem__(self, name: str) -> np.ndarray:
        """float64 ``(n_calls,)`` seconds of one component, or of ``"total"``, in call order."""
        if name == TOTAL:
            return np.asarray(self._total, dtype=np.float64)
        if name not in self._components:
            raise KeyError(f"latency samples: no component {name!r} (have {list(self.names)})")
        return np.asarray(self._components[name], dtype=np.float64)

    def as_dict(self) -> dict[str, list[float]]:
        """JSON-ready ``{name: [seconds per call]}``, ``"total"`` included."""
        return {name: self[name].tolist() for name in self.names}
