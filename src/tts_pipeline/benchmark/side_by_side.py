"""Timing two implementations of the same work fairly on a shared, noisy machine: interleaved rounds
in one process, medians and their ratio (:mod:`tts_pipeline.interleaved`).

Defined below the inference layer, so that ``inference.amp: auto`` times the ways to run a model with
the benchmarks' procedure; the benchmark's modules and commands import it from here.
"""

from __future__ import annotations

from tts_pipeline.interleaved import SideBySide, interleaved

__all__ = ["SideBySide", "interleaved"]
