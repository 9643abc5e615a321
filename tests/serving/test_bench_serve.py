"""``bench-serve``: its figures on made-up timings (percentiles over successes only, failures counted by
kind, throughput and x real time over the level's wall time, memory growth, acceptance), its table,
its workload texts, and one real run against a tiny voice's server."""

from __future__ import annotations

import argparse
import json

import numpy as np
import pytest

from tts_pipeline.commands import bench_serve
from tts_pipeline.errors import UserError
from tts_pipeline.serving import load_report
from tts_pipeline.serving.load_test import WAV_HEADER_BYTES, LevelRun, RequestResult, audio_seconds, paragraph

from ..conftest import REPO
from ..voice_folder import export_tiny_voice


def ok(latency: float, first: float, audio: float = 2.0) -> RequestResult:
    return RequestResult(200, latency, first, audio)


def failed(status: int, latency: float = 0.001, error: str | None = None) -> RequestResult:
    return RequestResult(status, latency, None, 0.0, error or str(status))


def test_level_figures_are_percentiles_of_the_successes_and_rates_over_wall_time():
    latencies = np.arange(1, 101) / 100  # 0.01 .. 1.00 s
    results = [ok(float(t), float(t) / 10) for t in latencies]
    results += [failed(429), failed(429), failed(0, 5.0, "ReadTimeout")]
    row = load_report.summarize_level(LevelRun(4, 110, 20.0, results, time_limited=True))

    assert (row["sent"], row["ok"], row["errors"]) == (103, 100, 3)
    assert row["errors_by_kind"] == {"429": 2, "ReadTimeout": 1}
    assert row["time_limited"] is True
    # type-7 percentiles of 0.01..1.00: p50 = 0.505, p95 = 0.9505, p99 = 0.9901; failures are not timed
    assert row["latency_p50_ms"] == pytest.approx(505.0)
    assert row["latency_p95_ms"] == pytest.approx(950.5)
    assert row["latency_p99_ms"] == pytest.approx(990.1)
    assert row["latency_max_ms"] == pytest.approx(1000.0)
    assert row["first_audio_p50_ms"] == pytest.approx(50.5)
    assert row["first_audio_p95_ms"] == pytest.approx(95.05)
    assert row["throughput_rps"] == pytest.approx(100 / 20.0)
    assert row["audio_seconds"] == pytest.approx(200.0)
    assert row["x_real_time"] == pytest.approx(200.0 / 20.0)


def test_a_level_without_a_success_has_no_times_but_counts_its_failures():
    row = load_report.summarize_level(LevelRun(16, 3, 1.5, [failed(503)] * 3, time_limited=False))
    assert row["ok"] == 0 and row["errors_by_kind"] == {"503": 3}
    assert row["latency_p50_ms"] is None and row["first_audio_p95_ms"] is None
    assert row["throughput_rps"] == 0.0 and row["x_real_time"] == 0.0
    line = load_report.format_levels([row]).splitlines()[1]
    assert line.split()[:4] == ["16", "3", "0", "-"] and line.endswith("503: 3")


def test_the_table_has_a_row_per_level_in_columns_under_its_header():
    rows = [
        load_report.summarize_level(LevelRun(c, 10, 2.0, [ok(0.2 * c, 0.05)] * 10, time_limited=False))
        for c in (1, 4, 16)
    ]
    header, *lines = load_report.format_levels(rows).splitlines()
    assert header.split()[:3] == ["conc", "sent", "ok"] and len(lines) == 3
    assert [line.split()[0] for line in lines] == ["1", "4", "16"]
    assert lines[2].split()[3] == "3200"  # latency p50 in ms
    assert lines[0].split()[-1] == "none"
    assert all(len(line.rsplit(maxsplit=1)[0]) == len(lines[0].rsplit(maxsplit=1)[0]) for line in lines)


def test_requests_sent_alone_give_medians():
    figures = load_report.summarize_requests([ok(1.0, 0.1, 60.0), ok(3.0, 0.3, 60.0), ok(2.0, 0.2, 60.0)])
    assert figures["first_audio_median_ms"] == pytest.approx(200.0)
    assert figures["latency_median_ms"] == pytest.approx(2000.0)
    assert figures["audio_seconds"] == 60.0 and figures["errors_by_kind"] == {}


def test_memory_growth_is_in_percent_of_the_reading_before():
    figures = load_report.memory_figures(400 * 2**20, 410 * 2**20, requests=1000, errors=0)
    assert figures["rss_before_mib"] == 400.0 and figures["rss_after_mib"] == 410.0
    assert figures["growth_percent"] == pytest.approx(2.5)
    with pytest.raises(ValueError, match="resident memory"):
        load_report.memory_figures(0, 1, requests=1, errors=0)


def test_acceptance_passes_at_its_limits_and_says_what_was_not_measured():
    checks = load_report.acceptance(1.3, 250.0)
    assert all(check["passed"] for check in checks.values())
    checks = load_report.acceptance(1.31, None)
    assert checks["server_over_in_process"]["passed"] is False
    assert checks["paragraph_first_audio_ms"]["passed"] is None
    lines = load_report.format_checks(checks)
    assert lines[0].endswith("FAIL") and lines[1].endswith("not measured")


def test_audio_seconds_from_the_bytes_received():
    rate = 22050
    assert audio_seconds(WAV_HEADER_BYTES + 2 * rate, "wav", rate) == pytest.approx(1.0)
    assert audio_seconds(2 * rate // 2, "pcm", rate) == pytest.approx(0.5)
    assert audio_seconds(WAV_HEADER_BYTES, "wav", rate) == 0.0


def test_a_paragraph_is_whole_words_of_the_texts_in_turn_up_to_the_length():
    texts = ["Hello there.", "The old lighthouse keeper painted the door."]
    text = paragraph(texts, 1000)
    assert 1000 - len("lighthouse ") <= len(text) <= 1000
    assert text.startswith("Hello there. The old lighthouse") and "  " not in text
    assert set(text.split()) <= set(" ".join(texts).split())
    assert paragraph(texts, 5) == "Hello"


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    bench_serve.add_arguments(parser)
    return parser.parse_args(["voice", *argv])


def test_levels_default_to_more_requests_at_higher_concurrency():
    assert bench_serve.levels(parse()) == [(1, 50), (4, 50), (16, 200)]
    assert bench_serve.levels(parse("--concurrency", "2,8", "--requests", "7")) == [(2, 7), (8, 7)]
    assert bench_serve.levels(parse("--concurrency", "2,8", "--requests", "3,9")) == [(2, 3), (8, 9)]
    with pytest.raises(UserError, match="--requests: one number or one per level"):
        bench_serve.levels(parse("--requests", "3,9"))
    with pytest.raises(UserError, match="comma-separated"):
        bench_serve.levels(parse("--concurrency", "1,four"))


@pytest.mark.slow
def test_bench_serve_measures_a_real_server_of_a_tiny_voice(tmp_path, capsys):
    voice = export_tiny_voice(tmp_path)
    out = tmp_path / "bench.json"
    args = parse(
        "--concurrency", "1,3", "--requests", "4,6", "--threads", "1", "--warmup", "1", "--rounds", "2",
        "--repeats", "1", "--paragraph-chars", "300", "--paragraph-requests", "2", "--memory-requests", "12",
        "--memory-concurrency", "2", "--time-limit", "120", "--json", str(out),
        "--phrases", str(REPO / bench_serve.HELD_OUT),
        "--benchmark-phrase", str(REPO / "config/phrases/benchmark_128.txt"),
    )  # fmt: skip
    args.voice = str(voice)
    bench_serve.run(args)

    record = json.loads(out.read_text())
    assert record["voice"] == "tiny" and record["engine"] == "onnx" and record["cpu"]
    assert record["threads"]["engine_threads"] == 1 and record["threads"]["queue"] == 16
    assert [level["concurrency"] for level in record["levels"]] == [1, 3]
    for level, sent in zip(record["levels"], (4, 6), strict=True):
        assert (level["sent"], level["ok"], level["errors"]) == (sent, sent, 0)
        for key in ("latency_p50_ms", "latency_p95_ms", "latency_p99_ms", "first_audio_p50_ms", "first_audio_p95_ms"):
            assert level[key] > 0, key
        assert level["first_audio_p50_ms"] <= level["latency_p50_ms"]
        assert level["throughput_rps"] > 0 and level["x_real_time"] > 0
    comparison = record["in_process_comparison"]
    assert comparison["errors_by_kind"] == {} and comparison["ratio"] > 0
    assert record["paragraph"]["ok"] == 2 and record["paragraph"]["first_audio_median_ms"] > 0
    memory = record["memory"]
    assert memory["requests"] == 12 and memory["errors"] == 0
    assert memory["rss_before_mib"] > 0 and memory["rss_after_mib"] > 0 and "growth_percent" in memory
    assert set(record["acceptance"]) == {"server_over_in_process", "paragraph_first_audio_ms"}
    assert record["server"]["started"] and record["server"]["stop"]["clean"]
    printed = capsys.readouterr().out
    assert "conc" in printed and "server stopped with SIGTERM" in printed
