"""The bench-fastpitch command end to end on a tiny FastPitch: it trains through the trainer's step and
prints positive throughput for every run and their median."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import pytest
import yaml

from tts_pipeline.commands import bench_fastpitch

from ..inference_models import TINY_FASTPITCH


def test_prints_positive_throughput_per_run_and_median(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "tiny.yaml"
    section = {**TINY_FASTPITCH.model_dump(mode="json"), "batch_size": 2, "global_batch_size": 2}
    config.write_text(yaml.safe_dump({"experiment": "tiny", "fastpitch": section}), encoding="utf-8")
    parser = argparse.ArgumentParser()
    bench_fastpitch.add_arguments(parser)
    argv = ["--config", str(config), "--tokens", "5", "9", "--frames", "20", "40", "--steps", "2", "--runs", "2"]
    args = parser.parse_args([*argv, "--threads", "1", "--json", str(tmp_path / "bench.json")])

    bench_fastpitch.run(args)

    out = capsys.readouterr().out
    runs = re.findall(r"^run \d+: step seconds .*; ([\d.]+) mel frames/s, ([\d.]+) steps/s", out, re.MULTILINE)
    median = re.search(r"^median of 2 runs: ([\d.]+) mel frames/s, ([\d.]+) steps/s$", out, re.MULTILINE)
    assert len(runs) == 2 and median is not None, out
    assert all(float(value) > 0 for figures in [*runs, median.groups()] for value in figures)
    assert "LAMB" in out and "batch 2 utterances of 5-9 symbols and 20-40 mel frames" in out
    report = json.loads((tmp_path / "bench.json").read_text(encoding="utf-8"))
    # Throughput counts real frames only: at most the padded ones, and every utterance has >= 20.
    assert 2 * 2 * 20 <= report["real_frames"] <= report["padded_frames"]
    assert report["runs"][0]["frames"] == report["real_frames"]
