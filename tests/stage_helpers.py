"""What stage tests share: running a stage in-process, spying on its MLflow run, killing a training
command after its first checkpoint (the resume tests of every trainer)."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path
from types import ModuleType

import pytest

from .conftest import REPO


def untracked_env() -> dict[str, str]:
    """This environment without the workflow's TTS_* variables, one thread per process."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("TTS_")}
    env["OMP_NUM_THREADS"] = "1"
    return env


def kill_after_first_checkpoint(command: list[str], work_dir: Path, timeout_s: float = 60) -> list[int]:
    """Start ``command``, SIGKILL it as soon as ``work_dir`` holds a ``step-*.pt``; the saved steps."""
    process = subprocess.Popen(command, cwd=REPO, env=untracked_env(), stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + timeout_s
        while not list(work_dir.glob("step-*.pt")) and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL, "the run ended before it could be killed"
    return sorted(int(path.name[5:13]) for path in work_dir.glob("step-*.pt"))


def rerun(command: list[str]) -> None:
    subprocess.run(command, cwd=REPO, env=untracked_env(), check=True, stderr=subprocess.DEVNULL)


def run_in_process(stage: ModuleType, argv: list[str]) -> argparse.Namespace:
    """Parse ``argv`` with the stage's own arguments and run it here; the parsed arguments."""
    parser = argparse.ArgumentParser()
    stage.add_arguments(parser)
    args = parser.parse_args(argv)
    stage.run(args)
    return args


def track_into(monkeypatch: pytest.MonkeyPatch, stage: ModuleType, store: Path, experiment: str) -> list[str]:
    """Switch tracking on into a SQLite store under ``store``; the list fills with the stage's run ids."""
    monkeypatch.setenv("TTS_TRACKING", "1")
    monkeypatch.setenv("TTS_TRACKING_URI", f"sqlite:///{store / 'mlflow.db'}")
    monkeypatch.setenv("TTS_MLFLOW_EXPERIMENT", experiment)
    runs: list[str] = []
    real_tracked = stage.tracked

    @contextlib.contextmanager
    def spy(*args, **kwargs):
        with real_tracked(*args, **kwargs) as run_log:
            runs.append(run_log.run_id)
            yield run_log

    monkeypatch.setattr(stage, "tracked", spy)
    return runs
