"""Training throughput of each training stage, collected from its ``metrics.json``.

Every trainer reports the throughput of the run that wrote the file (a resumed run counts only its own
steps); the units differ by stage, and :data:`THROUGHPUT_UNITS` states each. ``frames`` are always
real mel frames (padding excluded, summed over every process), except in
``frames_per_s_nvidia_units``, NVIDIA's HiFi-GAN count (``n_mels`` per clip, reference 2.11).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from tts_pipeline.errors import UserError, name_and_value

THROUGHPUT_UNITS: dict[str, str] = {
    "frames_per_s": "mel frames per second of training (padding excluded, summed over processes; for the "
    "aligner, per second of its whole run including validation)",
    "frames_per_s_nvidia_units": "HiFi-GAN only: NVIDIA's logged frames/s, batch x n_mels per clip "
    "(= frames_per_s x n_mels / (segment_size / hop))",
    "steps_per_s": "optimiser steps per second",
}
"""The throughput figures read from a ``metrics.json``, and their units."""

CONTEXT_KEYS = (
    "device",
    "world_size",
    "amp",
    "global_batch_size",
    "accumulation",
    "step",
    "steps_this_run",
    "train_seconds_this_run",
    "seconds_this_run",
)
"""What the figures were measured under, copied when present."""


class MetricsFile(NamedTuple):
    """A training stage's name (``train_hifigan``, ...) and its ``metrics.json``."""

    name: str
    path: Path


def parse_metrics_argument(value: str) -> MetricsFile:
    """``name=path`` -> :class:`MetricsFile` (the command line's ``--metrics`` items)."""
    name, path = name_and_value(value, "--metrics", "name=path (e.g. train_hifigan=R/hifigan/metrics.json)")
    return MetricsFile(name, Path(path))


def training_throughput(files: Sequence[MetricsFile]) -> list[dict[str, Any]]:
    """One row per file, in the given order: ``stage``, ``metrics`` (the path), the throughput figures
    of :data:`THROUGHPUT_UNITS` (None where the file has none, e.g. a run that did no step) and the
    :data:`CONTEXT_KEYS` it has. Errors name the file."""
    seen: set[str] = set()
    rows = []
    for item in files:
        if item.name in seen:
            raise UserError(f"--metrics: {item.name!r} is given twice")
        seen.add(item.name)
        try:
            payload = json.loads(item.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise UserError(f"--metrics {item.name}: file not found: {item.path}") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise UserError(f"--metrics {item.name}: {item.path} is not JSON ({error})") from None
        if not isinstance(payload, dict):
            raise UserError(f"--metrics {item.name}: {item.path}: expected a JSON object")
        row: dict[str, Any] = {"stage": item.name, "metrics": str(item.path)}
        row.update({key: payload.get(key) for key in THROUGHPUT_UNITS})
        row.update({key: payload[key] for key in CONTEXT_KEYS if key in payload})
        rows.append(row)
    return rows
