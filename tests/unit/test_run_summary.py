"""The parent run's summary: figures read from the outputs on disk."""

from __future__ import annotations

import json
from pathlib import Path

from tts_pipeline.workflow.run_summary import workflow_summary


def test_summary_reads_data_trainings_and_benchmark(tmp_path: Path) -> None:
    validation = tmp_path / "validation.json"
    validation.write_text(json.dumps({"n_rows": 24, "n_valid": 23, "n_rejected": 1, "corpus_dir": "resources/demo"}))
    fastpitch = tmp_path / "fastpitch.json"
    fastpitch.write_text(json.dumps({"step": 8, "val_loss": 0.5, "train_loss": 0.7, "n_params": 55955,
                                     "device": "cpu", "val_loss_start": float("nan"), "amp": True}))
    benchmark = tmp_path / "report.json"
    benchmark.write_text(json.dumps({
        "speed": {"rows": []},
        "quality": {"synthesized": {"average": {"mcd_db": 7.5}}},
    }))
    summary = workflow_summary(
        validation=validation,
        trainings={"fastpitch": fastpitch, "hifigan": tmp_path / "missing.json"},
        benchmark=benchmark,
    )
    assert summary == {
        "data/n_rows": 24.0, "data/n_valid": 23.0, "data/n_rejected": 1.0,
        "fastpitch/step": 8.0, "fastpitch/val_loss": 0.5, "fastpitch/n_params": 55955.0,
        "benchmark/quality_mcd_db": 7.5,
    }


def test_a_run_that_stopped_early_has_a_short_summary(tmp_path: Path) -> None:
    assert workflow_summary(validation=tmp_path / "none.json", trainings={}, benchmark=None) == {}


def test_benchmark_metrics_keep_their_names_and_read_reports_from_before_the_vocoder_rename(tmp_path: Path) -> None:
    # Speed rows name the vocoder's time vocoder_...; the main rows' vocoder is HiFi-GAN, so the metric keeps
    # its name, and a report.json an older version left on disk (hifigan_...) still gives it.
    row = {"batch_size": 1, "precision": "fp32", "latency_mean_s": 0.3, "latency_p90_s": 0.4, "latency_p99_s": 0.5,
           "x_real_time": 20.0, "rtf": 0.05, "samples_per_s": 1e5, "fastpitch_latency_mean_s": 0.1}
    for key in ("vocoder_latency_mean_s", "hifigan_latency_mean_s"):
        benchmark = tmp_path / "report.json"
        benchmark.write_text(json.dumps({"speed": {"rows": [{**row, key: 0.2}]}, "quality": {}}))
        summary = workflow_summary(validation=tmp_path / "none.json", trainings={}, benchmark=benchmark)
        assert summary["benchmark/b1_fp32_hifigan_latency_mean_s"] == 0.2
        assert summary["benchmark/b1_fp32_fastpitch_latency_mean_s"] == 0.1
        assert not any("vocoder" in name for name in summary)
