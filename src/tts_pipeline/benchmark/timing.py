"""The latencies a benchmark collects: per call, per component, and their per-call sum.

Each call is timed with :class:`tts_pipeline.timers.Timer` (device-synchronised regions); this module
keeps the records of many calls.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from tts_pipeline.timers import TOTAL


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
