"""Timing two implementations of the same work fairly on a shared, noisy machine: interleaved rounds
in one process, medians and their ratio.

Timing A for a minute and then B for a minute lets a neighbour's load, CPU frequency drift or cache
state favour one side. Here every round times ``repeats`` calls of each side back to back, and the
order alternates between rounds (A B, B A, A B, ...) so that neither side always runs first after the
other has warmed or cooled the caches. Figures are medians over all timed calls of a side (robust to
the odd preempted call), and ratios are of those medians.

The benchmarks compare engines with it, ``serve --engine auto`` the serving engines, and
``inference.amp: auto`` the ways to run a model on a CPU. Standard library only (no torch): the load
test of the speech server uses it too.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class SideBySide:
    """Per-call seconds of each side, by round.

    Attributes:
        seconds: ``{side: [[call seconds of round 1], [round 2], ...]}``.
    """

    seconds: dict[str, list[list[float]]]

    def median(self, side: str) -> float:
        """Median seconds per call of ``side`` over all its timed calls."""
        return statistics.median(t for round_ in self.seconds[side] for t in round_)

    def round_medians(self, side: str) -> list[float]:
        """Median seconds per call of ``side`` in each round (to see the drift between rounds)."""
        return [statistics.median(round_) for round_ in self.seconds[side]]

    def ratio(self, slower: str, faster: str) -> float:
        """``median(slower) / median(faster)``: how many times ``faster`` outruns ``slower``."""
        return self.median(slower) / self.median(faster)


def interleaved(
    calls: Mapping[str, Callable[[], object]],
    *,
    rounds: int,
    repeats: int,
    warmup: int,
    synchronize: Callable[[], None] = lambda: None,
) -> SideBySide:
    """Time each of ``calls`` (side name -> one unit of work) in ``rounds`` interleaved rounds of
    ``repeats`` calls, after ``warmup`` untimed calls of each.

    ``synchronize`` waits for the device (CUDA) before each clock reading; a no-op on the CPU.
    """
    if rounds < 1 or repeats < 1 or warmup < 0:
        raise ValueError(
            f"interleaved timing: expected rounds, repeats >= 1 and warmup >= 0, got {rounds}, {repeats}, {warmup}"
        )
    names = list(calls)
    for name in names:
        for _ in range(warmup):
            calls[name]()
    seconds: dict[str, list[list[float]]] = {name: [] for name in names}
    for number in range(rounds):
        for name in names if number % 2 == 0 else reversed(names):
            times = []
            for _ in range(repeats):
                synchronize()
                start = time.perf_counter()
                calls[name]()
                synchronize()
                times.append(time.perf_counter() - start)
            seconds[name].append(times)
    return SideBySide(seconds)
