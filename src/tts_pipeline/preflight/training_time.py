"""How long a training's epochs or steps imply it runs: steps x a per-step time, an estimate.

The per-step time is the one the stage measured the last time it ran in this experiment
(``steps_per_s`` in its ``metrics.json``) when there is one. Otherwise it is
:data:`ASSUMED_SECONDS_PER_STEP`, about as fast as a step of these models goes on one current GPU,
so the estimate is then a floor: the real run is slower on a CPU or with bigger batches. Either way
the figure is an estimate, and the warning says which one it used.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

ASSUMED_SECONDS_PER_STEP = 0.05
"""Seconds per optimiser step when no earlier run measured it."""

WARN_SECONDS = 30 * 24 * 3600.0
"""A training estimated to take longer than this (30 days) is warned about."""


@dataclass(frozen=True)
class TrainingTime:
    """A training's steps and the time they imply.

    Attributes:
        steps: Optimiser steps it runs (epochs x steps per epoch, or ``max_steps`` if sooner).
        seconds_per_step: The per-step time used.
        measured: Where that time was measured (a ``metrics.json``), or None when assumed.
    """

    steps: int
    seconds_per_step: float
    measured: str | None

    @property
    def seconds(self) -> float:
        return self.steps * self.seconds_per_step

    def describe(self) -> str:
        """``at 0.22 s per step (measured by the last run, R/hifigan/metrics.json) about 3.4 years``."""
        if self.measured is not None:
            basis = f"measured by its last run, {self.measured}"
        else:
            basis = "assumed: no earlier run measured it, and a CPU or bigger batches are slower"
        return f"at {self.seconds_per_step:.3g} s per step ({basis}) about {describe_seconds(self.seconds)}"


def training_steps(epochs: int, steps_per_epoch: int, max_steps: int | None) -> int:
    """Optimiser steps a training runs: ``epochs`` epochs, or ``max_steps`` if that comes sooner."""
    steps = epochs * max(1, steps_per_epoch)
    return steps if max_steps is None else min(steps, max_steps)


def training_time(steps: int, metrics: str | Path) -> TrainingTime:
    """The time ``steps`` steps take at the speed the stage's last ``metrics`` file measured, or at
    :data:`ASSUMED_SECONDS_PER_STEP`."""
    rate = _measured_rate(Path(metrics))
    if rate is None:
        return TrainingTime(steps, ASSUMED_SECONDS_PER_STEP, None)
    return TrainingTime(steps, 1.0 / rate, str(metrics))


def _measured_rate(path: Path) -> float | None:
    try:
        rate = json.loads(path.read_text(encoding="utf-8")).get("steps_per_s")
    except (OSError, ValueError, AttributeError):
        return None
    if isinstance(rate, int | float) and math.isfinite(rate) and rate > 0:
        return float(rate)
    return None


def describe_seconds(seconds: float) -> str:
    """``seconds`` in the largest unit that keeps it readable (``5.2 hours``, ``3.4e+03 years``)."""
    for unit, size in (("years", 365.25 * 86400), ("days", 86400), ("hours", 3600), ("minutes", 60)):
        if seconds >= size:
            value = seconds / size
            if value < 10:
                return f"{value:.1f} {unit}"
            return f"{value:,.0f} {unit}" if value < 1e6 else f"{value:.2g} {unit}"
    return f"{seconds:.0f} seconds"
