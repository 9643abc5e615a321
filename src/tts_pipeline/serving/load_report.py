"""The figures of a load test and their table: per level, the in-process comparison, the long paragraph,
memory, and the acceptance checks.

Percentiles are the benchmark's empirical ones (:func:`tts_pipeline.benchmark.stats.latency_stats`)
over the *successful* requests of a level; failures are counted by kind, never timed (a refusal in
1 ms would flatter the latency). Throughput is successful requests per wall-clock second of the level,
and x real time the seconds of audio they carried per wall-clock second: what the server delivers to
all its clients together, not one request's speed.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from tts_pipeline.benchmark.stats import latency_stats
from tts_pipeline.serving.load_test import LevelRun, RequestResult

MAX_SERVER_RATIO = 1.3
"""Acceptance: a phrase through the server takes at most this many times in-process synthesis."""

MAX_PARAGRAPH_FIRST_AUDIO_S = 0.25
"""Acceptance: the first audio of a 1,000-character paragraph at concurrency 1 arrives within this."""


def error_counts(results: Iterable[RequestResult]) -> dict[str, int]:
    """Failed requests by kind (:attr:`RequestResult.error`), most frequent first."""
    return dict(Counter(result.error for result in results if result.error is not None).most_common())


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else 1000.0 * seconds


def summarize_level(level: LevelRun) -> dict[str, Any]:
    """One level's JSON-ready figures (milliseconds for times; None where no request succeeded)."""
    ok = [result for result in level.results if result.ok]
    figures: dict[str, Any] = {
        "concurrency": level.concurrency,
        "requested": level.requested,
        "sent": len(level.results),
        "ok": len(ok),
        "errors": len(level.results) - len(ok),
        "errors_by_kind": error_counts(level.results),
        "time_limited": level.time_limited,
        "wall_s": level.wall_s,
        "audio_seconds": sum(result.audio_seconds for result in ok),
    }
    figures["throughput_rps"] = len(ok) / level.wall_s if level.wall_s > 0 else None
    figures["x_real_time"] = figures["audio_seconds"] / level.wall_s if level.wall_s > 0 else None
    latency = latency_stats([result.latency_s for result in ok]) if ok else None
    first = latency_stats([result.first_audio_s for result in ok if result.first_audio_s is not None]) if ok else None
    for name in ("p50", "p95", "p99", "mean", "max"):
        figures[f"latency_{name}_ms"] = _ms(getattr(latency, name)) if latency else None
    for name in ("p50", "p95", "p99"):
        figures[f"first_audio_{name}_ms"] = _ms(getattr(first, name)) if first else None
    return figures


def summarize_requests(results: Sequence[RequestResult]) -> dict[str, Any]:
    """Medians of requests sent one at a time (the long paragraph): time to first audio, latency, audio."""
    ok = [result for result in results if result.ok]
    first = [result.first_audio_s for result in ok if result.first_audio_s is not None]
    return {
        "sent": len(results),
        "ok": len(ok),
        "errors_by_kind": error_counts(results),
        "first_audio_ms": [_ms(seconds) for seconds in first],
        "first_audio_median_ms": _ms(statistics.median(first)) if first else None,
        "latency_median_ms": _ms(statistics.median(r.latency_s for r in ok)) if ok else None,
        "audio_seconds": statistics.median(r.audio_seconds for r in ok) if ok else None,
    }


def memory_figures(before_bytes: int, after_bytes: int, requests: int, errors: int) -> dict[str, Any]:
    """The server's resident memory around ``requests`` short requests, and its growth in percent."""
    if before_bytes <= 0:
        raise ValueError(f"resident memory before: expected > 0 bytes, got {before_bytes}")
    return {
        "requests": requests,
        "errors": errors,
        "rss_before_mib": before_bytes / 2**20,
        "rss_after_mib": after_bytes / 2**20,
        "growth_percent": 100.0 * (after_bytes - before_bytes) / before_bytes,
    }


def acceptance(ratio: float | None, paragraph_first_audio_ms: float | None) -> dict[str, dict[str, Any]]:
    """Each acceptance check: its figure, its limit and whether it passed (None: not measured)."""

    def check(value: float | None, limit: float) -> dict[str, Any]:
        return {"value": value, "limit": limit, "passed": None if value is None else value <= limit}

    return {
        "server_over_in_process": check(ratio, MAX_SERVER_RATIO),
        "paragraph_first_audio_ms": check(paragraph_first_audio_ms, 1000.0 * MAX_PARAGRAPH_FIRST_AUDIO_S),
    }


def figure(value: float | None, digits: int = 0) -> str:
    """A figure for a table or a line: ``digits`` decimals, ``-`` when it was not measured."""
    return "-" if value is None else f"{value:.{digits}f}"


LEVEL_COLUMNS = (
    ("conc", 4),
    ("sent", 5),
    ("ok", 5),
    ("lat p50", 8),
    ("p95", 7),
    ("p99", 7),
    ("1st p50", 8),
    ("p95", 7),
    ("req/s", 6),
    ("x RT", 6),
    ("errors", 0),
)


def _row(cells: Sequence[str]) -> str:
    """Cells right-aligned in the widths of :data:`LEVEL_COLUMNS` (the last one, errors, as it is)."""
    return " ".join(f"{cell:>{width}}" for cell, (_, width) in zip(cells, LEVEL_COLUMNS, strict=True))


def format_levels(levels: Sequence[Mapping[str, Any]]) -> str:
    """The levels as a table (times in ms; ``1st`` is time to first audio; ``x RT``: x real time)."""
    lines = [_row([name for name, _ in LEVEL_COLUMNS])]
    for level in levels:
        errors = ", ".join(f"{kind}: {count}" for kind, count in level["errors_by_kind"].items()) or "none"
        if level["time_limited"]:
            errors += " (time limit)"
        cells = (
            str(level["concurrency"]),
            str(level["sent"]),
            str(level["ok"]),
            figure(level["latency_p50_ms"]),
            figure(level["latency_p95_ms"]),
            figure(level["latency_p99_ms"]),
            figure(level["first_audio_p50_ms"]),
            figure(level["first_audio_p95_ms"]),
            figure(level["throughput_rps"], 2),
            figure(level["x_real_time"], 1),
            errors,
        )
        lines.append(_row(cells))
    return "\n".join(lines)


def format_checks(checks: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """One line per acceptance check: ``name: value (limit L): PASS``."""
    lines = []
    for name, check in checks.items():
        verdict = {True: "PASS", False: "FAIL", None: "not measured"}[check["passed"]]
        lines.append(f"{name}: {figure(check['value'], 2)} (limit {check['limit']:g}): {verdict}")
    return lines
