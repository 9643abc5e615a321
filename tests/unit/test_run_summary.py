"""The parent run's summary: figures read from the outputs on disk."""

from __future__ import annotations

import json
from pathlib import Path

from tts_pipeline.run_summary import workflow_summary


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
