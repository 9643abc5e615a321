"""Markdown tables in the layout of NVIDIA's inference tables, speed-up and JSON-ready values."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from tts_pipeline.benchmark.nvidia import PUBLISHED
from tts_pipeline.benchmark.report import (
    BENCHMARK_COLUMNS,
    PUBLISHED_COLUMNS,
    QUALITY_COLUMNS,
    Column,
    add_speed_up,
    component_columns,
    json_ready,
    render_table,
)

ROWS = [
    {
        "batch_size": 1,
        "precision": "tf32",
        "latency_mean_s": 0.019,
        "latency_p90_s": 0.0201,
        "latency_p95_s": 0.0215,
        "latency_p99_s": 0.02503,
        "samples_per_s": 9338571.4,
        "x_real_time": 423.5,
        "fastpitch_latency_mean_s": 0.006,
        "fastpitch_latency_p50_s": 0.0059,
        "fastpitch_latency_p99_s": 0.0081,
    },
    {
        "batch_size": 1,
        "precision": "fp16",
        "latency_mean_s": 0.0095,
        "latency_p90_s": 0.0101,
        "latency_p95_s": 0.0109,
        "latency_p99_s": 0.0133,
        "samples_per_s": 18677142.8,
        "x_real_time": 847.0,
        "fastpitch_latency_mean_s": 0.004,
        "fastpitch_latency_p50_s": 0.0039,
        "fastpitch_latency_p99_s": 0.0052,
    },
    {"batch_size": 8, "precision": "fp16", "latency_mean_s": 0.05, "latency_p90_s": 0.051,
     "latency_p95_s": 0.052, "latency_p99_s": 0.06, "samples_per_s": 28_000_000.0, "x_real_time": 1288.0,
     "fastpitch_latency_mean_s": 0.01, "fastpitch_latency_p50_s": 0.01, "fastpitch_latency_p99_s": 0.011},
]  # fmt: skip


def cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def test_benchmark_table_headers_and_numbers() -> None:
    lines = render_table(add_speed_up(ROWS, baseline="tf32"), BENCHMARK_COLUMNS).splitlines()
    assert cells(lines[0]) == [
        "Batch size",
        "Precision",
        "Avg latency (s)",
        "p90 latency (s)",
        "p95 latency (s)",
        "p99 latency (s)",
        "Throughput (samples/s)",
        "Speed-up",
        "x real time",
    ]
    assert all(cell.endswith(":") for i, cell in enumerate(cells(lines[1])) if i != 1)  # numbers right-aligned
    assert not cells(lines[1])[1].endswith(":")
    assert cells(lines[2]) == ["1", "tf32", "0.01900", "0.02010", "0.02150", "0.02503", "9,338,571", "1.00", "423.50"]
    assert cells(lines[3]) == ["1", "fp16", "0.00950", "0.01010", "0.01090", "0.01330", "18,677,143", "2.00", "847.00"]
    assert cells(lines[4])[7] == "-"  # no tf32 row at batch size 8
    assert len(lines) == 5 and len({len(line) for line in lines}) == 1


def test_component_and_quality_tables() -> None:
    lines = render_table(ROWS, component_columns(["fastpitch"])).splitlines()
    assert cells(lines[0]) == ["Batch size", "Precision", "fastpitch avg (s)", "fastpitch p50 (s)", "fastpitch p99 (s)"]
    assert cells(lines[3]) == ["1", "fp16", "0.00400", "0.00390", "0.00520"]
    quality = {"utterances": 10, "mcd_db": 5.123, "f0_rmse_hz": 12.34, "f0_rmse_cents": math.nan,
               "voicing_error": 0.0512, "duration_ratio": 1.0123}  # fmt: skip
    lines = render_table([quality], QUALITY_COLUMNS).splitlines()
    assert cells(lines[2]) == ["10", "5.12", "12.3", "-", "5.1%", "1.012"]


def test_published_figures_render_with_their_columns() -> None:
    lines = render_table(PUBLISHED, PUBLISHED_COLUMNS).splitlines()
    assert cells(lines[2])[:5] == ["1", "fp16", "0.015", "-", "518.43"]
    assert cells(lines[5])[:5] == ["8", "fp16", "-", "16,597,793", "-"]


def test_table_errors_and_escaping() -> None:
    with pytest.raises(ValueError, match="latency_mean"):
        render_table([{"batch_size": 1}], [Column("Avg", "latency_mean")])
    assert "a\\|b" in render_table([{"name": "a|b"}], [Column("Name", "name")])
    with pytest.raises(ValueError, match="two 'tf32' rows"):
        add_speed_up([ROWS[0], ROWS[0]], baseline="tf32")


def test_json_ready_values() -> None:
    payload = {"a": np.float32(1.5), "b": np.int64(3), "c": math.nan, "d": (np.arange(2), math.inf), "e": "x"}
    ready = json_ready(payload)
    assert ready == {"a": 1.5, "b": 3, "c": None, "d": [[0, 1], None], "e": "x"}
    assert json.loads(json.dumps(ready, allow_nan=False)) == ready
