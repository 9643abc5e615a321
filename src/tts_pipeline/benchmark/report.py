"""Benchmark and quality rows rendered as Markdown tables and JSON-ready values.

The headline table mirrors the columns of NVIDIA's published inference tables (batch size,
precision, average latency, three latency columns at 90/95/99 %, throughput in samples/s, speed-up
with mixed precision, real-time figure), with two deliberate differences that :data:`LATENCY_NOTES`
states under the table: our 90/95/99 % columns are empirical percentiles (theirs are
``mean + z * std``), and our real-time figure counts every utterance of a batch (theirs undercounts
by the batch size).

Rows are the flat dicts of :func:`tts_pipeline.benchmark.stats.summarize` (or
:func:`tts_pipeline.benchmark.quality.average_quality`) with the labels the stage adds, e.g.
``{"precision": "fp16", **summary}``. A cell whose key a row lacks, or whose value is None or NaN,
shows as "-"; a column that no row has is an error (a misspelt key).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

MISSING = "-"


class Column(NamedTuple):
    """One table column: its header, the row key it shows and the format spec of the value."""

    header: str
    key: str
    fmt: str = ""


# The columns the speed tables share (ours, NVIDIA's beside ours, per model), spelled once so that a
# figure has the same header in each.
BATCH_SIZE = Column("Batch size", "batch_size", "d")
PRECISION = Column("Precision", "precision")
THROUGHPUT = Column("Throughput (samples/s)", "samples_per_s", ",.0f")
X_REAL_TIME = Column("x real time", "x_real_time", ".2f")

BENCHMARK_COLUMNS: tuple[Column, ...] = (
    BATCH_SIZE,
    PRECISION,
    Column("Avg latency (s)", "latency_mean_s", ".5f"),
    Column("p90 latency (s)", "latency_p90_s", ".5f"),
    Column("p95 latency (s)", "latency_p95_s", ".5f"),
    Column("p99 latency (s)", "latency_p99_s", ".5f"),
    THROUGHPUT,
    Column("Speed-up", "speed_up", ".2f"),
    X_REAL_TIME,
)
"""The headline table, in the column order of NVIDIA's published inference tables."""

LATENCY_NOTES = (
    "Latency is per call (one batch), FastPitch + HiFi-GAN, measured with the device synchronised. "
    "p90/p95/p99 are empirical percentiles of the measured calls (numpy, linear interpolation), "
    "not NVIDIA's mean + z x std. Speed-up is the mean latency of the baseline precision at the same "
    "batch size divided by this row's. x real time = seconds of audio produced (all utterances of a "
    "batch) / seconds of compute; NVIDIA's published RTF equals it at batch size 1 and is B times "
    "smaller at batch size B. Throughput counts audio samples without padding."
)
"""What the headline table's columns mean; render it under the table."""

PUBLISHED_COLUMNS: tuple[Column, ...] = (
    BATCH_SIZE,
    PRECISION,
    Column("Avg latency (s)", "latency_mean_s", ".3f"),
    THROUGHPUT,
    X_REAL_TIME,
    Column("Source", "source"),
)
"""For :data:`tts_pipeline.benchmark.nvidia.PUBLISHED` (NVIDIA publishes no percentiles we could show)."""

QUALITY_COLUMNS: tuple[Column, ...] = (
    Column("Utterances", "utterances", "d"),
    Column("MCD-DTW (dB)", "mcd_db", ".2f"),
    Column("F0 RMSE (Hz)", "f0_rmse_hz", ".1f"),
    Column("F0 RMSE (cents)", "f0_rmse_cents", ".0f"),
    Column("Voicing error", "voicing_error", ".1%"),
    Column("Duration ratio", "duration_ratio", ".3f"),
)
"""Objective quality (keys of :func:`tts_pipeline.benchmark.quality.average_quality`)."""


def component_columns(components: Sequence[str], headers: Mapping[str, str] | None = None) -> tuple[Column, ...]:
    """Columns for a per-component breakdown: mean, p50 and p99 latency of each component (e.g.
    ``("fastpitch", "vocoder")``), after batch size and precision.

    ``headers`` names a component in its column headers (default: the component's own name), so a table
    can say which model the generic ``vocoder`` component was, e.g. ``{"vocoder": "WaveGlow"}``.
    """
    columns = [BATCH_SIZE, PRECISION]
    for name in components:
        header = (headers or {}).get(name, name)
        columns += [
            Column(f"{header} avg (s)", f"{name}_latency_mean_s", ".5f"),
            Column(f"{header} p50 (s)", f"{name}_latency_p50_s", ".5f"),
            Column(f"{header} p99 (s)", f"{name}_latency_p99_s", ".5f"),
        ]
    return tuple(columns)


def add_speed_up(rows: Sequence[Mapping[str, Any]], baseline: str) -> list[dict[str, Any]]:
    """Copies of ``rows`` with ``speed_up`` = baseline mean latency / the row's mean latency.

    The baseline is the row of precision ``baseline`` (e.g. ``"tf32"`` or ``"fp32"``) with the same
    batch size; rows without one get no ``speed_up``. Reads ``batch_size``, ``precision`` and
    ``latency_mean_s``.
    """
    reference: dict[int, float] = {}
    for row in rows:
        if row["precision"] == baseline:
            if row["batch_size"] in reference:
                raise ValueError(f"speed-up: two {baseline!r} rows for batch size {row['batch_size']}")
            reference[row["batch_size"]] = float(row["latency_mean_s"])
    out = []
    for row in rows:
        copy = dict(row)
        if row["batch_size"] in reference:
            copy["speed_up"] = reference[row["batch_size"]] / float(row["latency_mean_s"])
        out.append(copy)
    return out


def _cell(value: Any, fmt: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return MISSING
    text = format(value, fmt) if fmt else str(value)
    return text.replace("|", "\\|")  # a literal pipe would split the cell


def render_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[Column]) -> str:
    """A GitHub-flavoured Markdown table, one line per row; numeric columns right-aligned.

    Raises ValueError for a column whose key no row has. Ends with a newline.
    """
    if not columns:
        raise ValueError("table: no columns")
    for column in columns:
        if rows and not any(column.key in row for row in rows):
            raise ValueError(f"table: no row has {column.key!r} (column {column.header!r})")
    body = [[_cell(row.get(column.key), column.fmt) for column in columns] for row in rows]
    widths = [max([len(column.header), 3, *(len(line[i]) for line in body)]) for i, column in enumerate(columns)]
    numeric = [bool(column.fmt) and column.fmt[-1] in "dfeg%" for column in columns]

    def line(cells: Sequence[str]) -> str:
        padded = [c.rjust(w) if right else c.ljust(w) for c, w, right in zip(cells, widths, numeric, strict=True)]
        return "| " + " | ".join(padded) + " |"

    rule = ["-" * (w - 1) + ":" if right else "-" * w for w, right in zip(widths, numeric, strict=True)]
    return "\n".join([line([c.header for c in columns]), line(rule), *(line(cells) for cells in body)]) + "\n"


def json_ready(value: Any) -> Any:
    """``value`` with numpy scalars/arrays turned into Python numbers/lists and NaN/inf into None
    (JSON has no NaN), recursively through dicts, lists and tuples (tuples become lists)."""
    if isinstance(value, Mapping):
        return {str(key): json_ready(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(item) for item in value]
    if isinstance(value, np.ndarray):
        return json_ready(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
