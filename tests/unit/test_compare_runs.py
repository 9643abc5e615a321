"""tools/compare-runs: what two runs of one experiment must share, file by file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from ..conftest import REPO

SCRIPT = REPO / "tools" / "compare-runs"


def compare(before: Path, after: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), str(before), str(after)], capture_output=True, text=True)


def write_run(root: Path, *, val_loss: float, seconds: float, wav: bytes, weight: float) -> None:
    (root / "hifigan").mkdir(parents=True)
    (root / "inference").mkdir()
    (root / "logs").mkdir()
    metrics = {"val_loss_mel": val_loss, "seconds_this_run": seconds, "history": [{"step": 1, "frames_per_s": seconds}]}
    (root / "hifigan" / "metrics.json").write_text(json.dumps(metrics))
    (root / "inference" / "hello.wav").write_bytes(wav)
    (root / "logs" / "hifigan.log").write_text(f"took {seconds} s")  # logs are not compared
    model = {"state_dict": {"w": torch.full((2,), weight)}, "run_id": f"run-{seconds}"}
    torch.save(model, root / "hifigan" / "model.pt")


@pytest.fixture
def before(tmp_path: Path) -> Path:
    write_run(tmp_path / "before", val_loss=1.5, seconds=10.0, wav=b"RIFF0", weight=0.25)
    return tmp_path / "before"


def test_runs_that_differ_in_timings_and_run_ids_only_are_equal(tmp_path, before):
    write_run(tmp_path / "after", val_loss=1.5, seconds=12.5, wav=b"RIFF0", weight=0.25)
    result = compare(before, tmp_path / "after")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 identical, 1 equal but timings, 1 equal models" in result.stdout


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"val_loss": 1.25}, "val_loss_mel"),
        ({"wav": b"RIFF1"}, "hello.wav"),
        ({"weight": 0.5}, "state_dict.w"),
    ],
)
def test_a_changed_result_fails_naming_it(tmp_path, before, change, named):
    write_run(tmp_path / "after", **{"val_loss": 1.5, "seconds": 10.0, "wav": b"RIFF0", "weight": 0.25, **change})
    result = compare(before, tmp_path / "after")
    assert result.returncode == 1
    assert "DIFFERENT" in result.stdout and named in result.stdout


def test_a_file_in_one_run_only_fails(tmp_path, before):
    write_run(tmp_path / "after", val_loss=1.5, seconds=10.0, wav=b"RIFF0", weight=0.25)
    (tmp_path / "after" / "inference" / "extra.wav").write_bytes(b"RIFF")
    result = compare(before, tmp_path / "after")
    assert result.returncode == 1 and "ONLY IN AFTER: inference/extra.wav" in result.stdout
