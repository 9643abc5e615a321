"""Figures of a benchmark: empirical latency percentiles, throughput and real-time factors.

Percentiles are *empirical*: ``numpy.percentile`` of the measured latencies with its ``"linear"``
method (the q-th percentile of n sorted samples ``x_0 <= ... <= x_{n-1}`` interpolates linearly
between ``x_floor(h)`` and ``x_ceil(h)`` at ``h = (n - 1) q / 100``; Hyndman and Fan's type 7).
NVIDIA's inference script reports ``mean + z * std`` under the name "90%/95%/99% latency" (a normal
tolerance interval, reference 5.3.6); latencies are skewed (a long right tail), so that figure is not
the latency that 90/95/99 % of calls stay under, and nothing here computes it.

Real-time figures, for calls that each synthesise a batch of utterances:

- ``x_real_time`` = seconds of audio produced / seconds of compute. Audio counts every utterance of
  every call (padding excluded); compute is the summed latency of the calls. This is the direction
  NVIDIA calls "RTF" (their 518.43 means 518 x faster than real time).
- ``rtf`` = seconds of compute / seconds of audio = ``1 / x_real_time`` (the usual speech-processing
  real-time factor: below 1 is faster than real time).
- ``nvidia_avg_rtf`` = NVIDIA's formula verbatim: audio seconds *per utterance* / mean *batch*
  latency, i.e. ``x_real_time / B``. It undercounts by the batch size B (reference quirk 18) and is
  kept only to compare with NVIDIA's published tables; at B = 1 it equals ``x_real_time``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

if TYPE_CHECKING:  # a type only: the percentiles stay importable without torch (the speech server's load test)
    from tts_pipeline.benchmark.timing import LatencySamples

PERCENTILES = (50, 90, 95, 99)
"""The latency percentiles reported (``p50`` ... ``p99``)."""

PERCENTILE_METHOD = "linear"
"""``numpy.percentile``'s interpolation between order statistics (its default; see the module docstring)."""


class LatencyStats(NamedTuple):
    """Summary of one component's per-call latencies, all in seconds except ``n``.

    ``std`` is the population standard deviation (``ddof=0``) of the measured samples: it describes
    the samples, it estimates nothing. Percentiles are empirical (:data:`PERCENTILE_METHOD`).
    """

    n: int
    mean: float
    std: float
    min: float
    max: float
    p50: float
    p90: float
    p95: float
    p99: float


def latency_stats(seconds: Sequence[float] | np.ndarray) -> LatencyStats:
    """Count, mean, std, extremes and empirical percentiles of latencies ``(n,)`` in seconds."""
    values = np.asarray(seconds, dtype=np.float64)
    if values.ndim != 1 or values.size == 0:
        raise ValueError(f"latencies: expected a non-empty 1-D array of seconds, got shape {values.shape}")
    if not np.isfinite(values).all() or (values < 0).any():
        raise ValueError("latencies: expected finite, non-negative seconds")
    p50, p90, p95, p99 = np.percentile(values, PERCENTILES, method=PERCENTILE_METHOD)
    return LatencyStats(
        n=int(values.size),
        mean=float(values.mean()),
        std=float(values.std(ddof=0)),
        min=float(values.min()),
        max=float(values.max()),
        p50=float(p50),
        p90=float(p90),
        p95=float(p95),
        p99=float(p99),
    )


def _positive(name: str, value: float) -> float:
    if not value > 0:
        raise ValueError(f"{name}: expected a positive number of seconds, got {value!r}")
    return float(value)


def x_real_time(audio_seconds: float, compute_seconds: float) -> float:
    """Seconds of audio per second of compute (NVIDIA's "RTF" direction; > 1 is faster than real time)."""
    return _positive("audio seconds", audio_seconds) / _positive("compute seconds", compute_seconds)


def real_time_factor(compute_seconds: float, audio_seconds: float) -> float:
    """Seconds of compute per second of audio (< 1 is faster than real time)."""
    return _positive("compute seconds", compute_seconds) / _positive("audio seconds", audio_seconds)


def samples_per_second(audio_samples: float, compute_seconds: float) -> float:
    """Throughput: audio samples produced per second of compute."""
    if not audio_samples > 0:
        raise ValueError(f"audio samples: expected a positive count, got {audio_samples!r}")
    return float(audio_samples) / _positive("compute seconds", compute_seconds)


def _audio_per_call(audio_seconds_per_call: float | Sequence[float] | np.ndarray, n_calls: int) -> np.ndarray:
    audio = np.asarray(audio_seconds_per_call, dtype=np.float64)
    if audio.ndim == 0:
        audio = np.full(n_calls, float(audio))
    if audio.shape != (n_calls,):
        raise ValueError(
            f"audio seconds per call: expected a number or one value per call ({n_calls}), got shape {audio.shape}"
        )
    if not np.isfinite(audio).all() or (audio <= 0).any():
        raise ValueError("audio seconds per call: expected positive, finite seconds")
    return audio


def summarize(
    samples: LatencySamples,
    audio_seconds_per_call: float | Sequence[float] | np.ndarray,
    batch_size: int,
    sampling_rate: int,
) -> dict[str, float | int]:
    """One row of figures for a benchmark of ``len(samples)`` calls of ``batch_size`` utterances each.

    Args:
        samples: Per-call latencies of each component (and their per-call sum ``"total"``).
        audio_seconds_per_call: Seconds of audio one call produced, summed over its ``batch_size``
            utterances and excluding padding (NVIDIA counts ``sum(mel_len) * hop``). A number when
            every call produced the same, else one value per call ``(n_calls,)``.
        batch_size: Utterances per call (B).
        sampling_rate: Of the produced audio, Hz (throughput is in samples/s).

    Returns:
        A flat, JSON-ready dict: ``batch_size``, ``n_calls``, ``sampling_rate``,
        ``audio_seconds_per_call`` (mean) and ``audio_seconds_per_utterance`` (mean); then for each
        component ``c`` and for ``"total"``: ``{c}_latency_{n,mean,std,min,max,p50,p90,p95,p99}_s``
        (``n`` without ``_s``; per call, i.e. per batch), ``{c}_x_real_time``, ``{c}_rtf``,
        ``{c}_nvidia_avg_rtf`` and ``{c}_samples_per_s``; finally ``x_real_time``, ``rtf``,
        ``nvidia_avg_rtf``, ``samples_per_s`` and ``latency_{mean,p50,p90,p95,p99}_s`` repeated from
        ``"total"`` for the headline table.
    """
    if len(samples) == 0:
        raise ValueError("latency samples: no call was recorded")
    if batch_size < 1:
        raise ValueError(f"batch size: expected >= 1, got {batch_size}")
    if sampling_rate < 1:
        raise ValueError(f"sampling rate: expected >= 1 Hz, got {sampling_rate}")
    audio = _audio_per_call(audio_seconds_per_call, len(samples))
    total_audio = float(audio.sum())
    row: dict[str, float | int] = {
        "batch_size": int(batch_size),
        "n_calls": len(samples),
        "sampling_rate": int(sampling_rate),
        "audio_seconds_per_call": float(audio.mean()),
        "audio_seconds_per_utterance": float(audio.mean()) / batch_size,
    }
    for name in samples.names:
        seconds = samples[name]
        stats = latency_stats(seconds)
        for field, value in stats._asdict().items():
            row[f"{name}_latency_{field}" if field == "n" else f"{name}_latency_{field}_s"] = value
        compute = float(seconds.sum())
        row[f"{name}_x_real_time"] = x_real_time(total_audio, compute)
        row[f"{name}_rtf"] = real_time_factor(compute, total_audio)
        # NVIDIA: all_samples / (all_utterances * mean batch latency * sr) = per-utterance audio / batch latency.
        row[f"{name}_nvidia_avg_rtf"] = (
            total_audio / (len(samples) * batch_size) / _positive("mean latency", stats.mean)
        )
        row[f"{name}_samples_per_s"] = samples_per_second(total_audio * sampling_rate, compute)
    for key in ("x_real_time", "rtf", "nvidia_avg_rtf", "samples_per_s"):
        row[key] = row[f"total_{key}"]
    for field in ("mean", "p50", "p90", "p95", "p99"):
        row[f"latency_{field}_s"] = row[f"total_latency_{field}_s"]
    return row
