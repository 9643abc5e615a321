"""Which way to run a model on a CPU, from measured figures: the rule of ``inference.amp: auto``.

Each candidate path of a model (:class:`tts_pipeline.inference.seams.CpuPath`: the model as it is in
float32, HiFi-GAN's fused copy in float32 or bf16, FastPitch's copy held in bf16, ...) has been timed on
the same short input and its output compared with the plain float32 path's
(:mod:`tts_pipeline.inference.auto_precision` measures). :func:`choose_path` keeps the fastest path

- whose output is within :data:`MIN_SNR_DB` of plain float32's (a waveform for a vocoder, the mel for
  an acoustic model; a mel of another length, from other rounded durations, fails), and
- that beats plain float32 by :data:`FASTER_BY` at least, so that timing noise on a short probe cannot
  swap plain float32 for a path that is no faster;

and plain float32 when none qualifies. So ``auto`` never picks a path measured slower than plain float32,
whatever the CPU's flags promise. No timing happens here: the tests feed it tables.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tts_pipeline.inference.seams import PLAIN_FP32

MIN_SNR_DB = 40.0
"""The least SNR (dB) of a path's output against plain float32's: a difference of 1 % in amplitude, the
bound the bf16 vocoder copy is held to in its tests and that the benchmark's precision table reads by
(its note: "40 dB = a difference of 1 % in amplitude"). Measured: HiFi-GAN's fused bf16 copy 51-56 dB,
FastPitch's bf16 copy 45-53 dB; float32 paths about 130 dB."""

FASTER_BY = 0.95
"""A path replaces plain float32 only when its median time is at most this fraction of float32's."""

STEADY_SPREAD = 1.5
"""A measurement whose slowest round of some path took more than this times its fastest was disturbed
(another job on the cores): it decides for the process that made it, and is not cached."""


@dataclass(frozen=True)
class PathFigures:
    """What one path measured on the probe input.

    Attributes:
        name: The path (:attr:`tts_pipeline.inference.seams.CpuPath.name`).
        seconds: Median seconds per call over the interleaved rounds.
        snr_db: Its output against plain float32's, dB (:func:`tts_pipeline.snr.snr_db`: 200 when equal,
            ``-inf`` when the shapes differ).
        spread: Its slowest round over its fastest (1 when steady).
    """

    name: str
    seconds: float
    snr_db: float
    spread: float = 1.0

    def as_dict(self) -> dict[str, Any]:
        # -inf (another mel length) is written as None: JSON has no infinities.
        snr = self.snr_db if math.isfinite(self.snr_db) else None
        return {"name": self.name, "seconds": self.seconds, "snr_db": snr, "spread": self.spread}

    @classmethod
    def from_dict(cls, record: Mapping[str, Any]) -> PathFigures:
        snr = record["snr_db"]
        snr_db = -math.inf if snr is None else float(snr)
        return cls(str(record["name"]), float(record["seconds"]), snr_db, float(record.get("spread", 1.0)))


def qualifies(figures: PathFigures, baseline: PathFigures, min_snr_db: float = MIN_SNR_DB) -> bool:
    """Whether a path may replace plain float32: close enough to its output, and faster by :data:`FASTER_BY`."""
    return figures.snr_db >= min_snr_db and figures.seconds <= FASTER_BY * baseline.seconds


def choose_path(figures: Sequence[PathFigures], min_snr_db: float = MIN_SNR_DB) -> str:
    """The name of the path to run (module docstring): the fastest qualifying one, else :data:`PLAIN_FP32`.

    Raises ValueError when ``figures`` has no :data:`PLAIN_FP32` row (nothing to measure against).
    """
    baseline = next((row for row in figures if row.name == PLAIN_FP32), None)
    if baseline is None:
        raise ValueError(f"choose_path: no {PLAIN_FP32!r} figures among {[row.name for row in figures]}")
    qualified = [row for row in figures if row.name != PLAIN_FP32 and qualifies(row, baseline, min_snr_db)]
    return min(qualified, key=lambda row: row.seconds).name if qualified else PLAIN_FP32


@dataclass(frozen=True)
class PathChoice:
    """``auto``'s choice for one model, with the figures it chose by.

    Attributes:
        model: How logs name the model (``"HiFi-GAN"``).
        chosen: The chosen path's name.
        figures: Every candidate's figures, plain float32 first.
        cached: True when the figures were read from the cache, not measured in this process.
    """

    model: str
    chosen: str
    figures: tuple[PathFigures, ...]
    cached: bool

    @property
    def steady(self) -> bool:
        """Whether no path's rounds spread by more than :data:`STEADY_SPREAD` (worth caching)."""
        return all(row.spread <= STEADY_SPREAD for row in self.figures)

    def describe(self) -> str:
        """One line: ``HiFi-GAN: fp32 21.0 ms; fp32 fused 14.2 ms (131 dB); bf16 fused 9.8 ms (51.7 dB)
        -> bf16 fused (measured)``."""
        parts = []
        for row in self.figures:
            snr = "" if row.name == PLAIN_FP32 else f" ({row.snr_db:.1f} dB)"
            parts.append(f"{row.name} {1000 * row.seconds:.1f} ms{snr}")
        source = "cached" if self.cached else "measured"
        if not self.steady:
            spread = max(row.spread for row in self.figures)
            source += f"; rounds {spread:.1f}x apart, a disturbed measurement: not cached"
        return f"{self.model}: {'; '.join(parts)} -> {self.chosen} ({source})"

    @classmethod
    def from_dict(cls, record: Mapping[str, Any], *, cached: bool) -> PathChoice:
        """The choice :meth:`as_dict` wrote (KeyError, TypeError or ValueError for another shape)."""
        figures = tuple(PathFigures.from_dict(row) for row in record["paths"])
        return cls(str(record["model"]), str(record["chosen"]), figures, cached)

    def as_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "chosen": self.chosen,
            "cached": self.cached,
            "min_snr_db": MIN_SNR_DB,
            "faster_by": FASTER_BY,
            "paths": [row.as_dict() for row in self.figures],
        }
