"""Faults a long run meets, through Snakemake on the tiny demo: what the terminal says, and that nothing
half-done is left behind."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from .test_data_workflow import snakemake, tiny_demo

pytestmark = pytest.mark.slow


def test_absurd_settings_are_refused_before_any_job_naming_each_key(tmp_path):
    config = tiny_demo(
        tmp_path,
        hifigan__segment_size=2147483648,
        benchmark__batch_sizes=[1_000_000],
        aligner__batch_size=1_000_000,
    )
    result = snakemake(tmp_path, config=config, check=False)
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert "hifigan.segment_size: 2,147,483,648 samples" in out
    assert "benchmark.batch_sizes: 1,000,000 copies" in out
    # 24 clips less 3 + 3 held out: at most 18 to train on, before the manifest exists
    assert "aligner.batch_size: 1,000,000 is more than the training clips (18, at most" in out
    assert not (tmp_path / "results").exists() and not (tmp_path / "resources").exists()


def test_epochs_that_imply_years_start_with_a_warning_and_its_estimate(tmp_path):
    config = tiny_demo(tmp_path, fastpitch__epochs=1_000_000_000)
    result = snakemake(tmp_path, "-n", config=config)
    out = result.stdout + result.stderr
    assert "config warning" in out and "fastpitch.epochs: train_fastpitch: 1,000,000,000 epochs" in out
    assert "This is an estimate" in out and "years" in out


@pytest.fixture
def small_disk(tmp_path):
    """A 64 MiB tmpfs in ``tmp_path``: a disk that can be filled (root only; skipped elsewhere)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(mount)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode(errors='replace').strip()}")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(disk: Path, leave: int) -> Path:
    """Fill ``disk`` but ``leave`` bytes with one ballast file; returns it (delete it to free the space)."""
    ballast = disk / "ballast"
    with ballast.open("wb") as handle:
        handle.truncate(0)
        room = shutil.disk_usage(disk).free - leave
        handle.write(b"\0" * max(0, room))
    return ballast


@pytest.mark.faults
def test_a_full_disk_is_named_on_the_terminal_and_the_rerun_completes(tmp_path, small_disk):
    """The disk under ``results_dir`` fills: with the MLflow store on it the workflow stops at its start
    naming the store's folder; with the store elsewhere, ``features`` and then a checkpoint of
    ``train_aligner`` fail, each time the terminal says "no space left" and names the folder (no job
    log could take it), and the end hook hides nothing. Once space is freed the same command completes
    and its outputs load."""
    experiment = small_disk / "results/demo"
    on_disk = tiny_demo(tmp_path, results_dir=str(small_disk / "results"), resources_dir=str(tmp_path / "resources"))
    snakemake(tmp_path, "manifest", config=on_disk)  # the store: results_dir/mlflow.db, on the small disk
    ballast = _fill(small_disk, leave=0)
    refused = snakemake(tmp_path, "features", config=on_disk, check=False)
    out = refused.stdout + refused.stderr
    assert refused.returncode != 0 and not (experiment / "logs/features.log").exists()
    assert f"the MLflow store (sqlite:///{small_disk}/results/mlflow.db): no space left on device: " in out
    assert "database or disk is full" in out
    ballast.unlink()

    raw = yaml.safe_load(on_disk.read_text())
    raw["tracking"]["uri"] = f"sqlite:///{tmp_path / 'store' / 'mlflow.db'}"
    elsewhere = tmp_path / "store-elsewhere.yaml"
    elsewhere.write_text(yaml.safe_dump(raw))
    for target, output in (("features", "features/features.jsonl"), ("train_aligner", "aligner/model.pt")):
        ballast = _fill(small_disk, leave=0)  # not even the job's log can be written
        failed = snakemake(tmp_path, target, config=elsewhere, check=False)
        out = failed.stdout + failed.stderr
        assert failed.returncode != 0, target
        folder = experiment / ("features" if target == "features" else "work/train_aligner")
        assert f"tts-pipeline {target.replace('_', '-')}: error: no space left on device: {folder} has" in out, out
        assert "free of 64.0 MiB" in out
        assert "could not end the workflow's MLflow run" not in out and "onerror" not in out.lower()
        ballast.unlink()
        snakemake(tmp_path, target, config=elsewhere)
        assert (experiment / output).is_file()

    index = [json.loads(line) for line in (experiment / "features/features.jsonl").read_text().splitlines()]
    assert index  # the index reads back
    import torch

    assert torch.load(experiment / "aligner/model.pt", map_location="cpu", weights_only=False)


@pytest.mark.faults
def test_sigterm_to_snakemake_stops_training_at_a_checkpoint_runs_killed_and_the_rerun_resumes(tmp_path):
    """SIGTERM to ``snakemake`` alone (as a scheduler or ``kill`` sends it): the running training saves a
    checkpoint at its next step and stops, within seconds rather than at its end; the workflow's and the
    job's MLflow runs end KILLED; the terminal says how to resume; the same command resumes."""
    import signal
    import time

    import mlflow

    from .test_data_workflow import BIN, REPO

    config = tiny_demo(tmp_path, aligner__epochs=100_000, aligner__checkpoint_every_n_steps=100_000)
    snakemake(tmp_path, "features", config=config)
    command = [
        str(BIN / "snakemake"), "--snakefile", str(REPO / "workflow/Snakefile"),
        "--workflow-profile", str(REPO / "workflow/profiles/default"), "--directory", str(tmp_path),
        "--cores", "1", "train_aligner", "--configfile", str(config),
    ]  # fmt: skip
    env = {key: value for key, value in os.environ.items() if not key.startswith("TTS_")}
    env["PATH"] = f"{BIN}{os.pathsep}{env['PATH']}"
    log = tmp_path / "results/demo/logs/train_aligner.log"
    with (tmp_path / "terminal.txt").open("w") as terminal:
        workflow = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=terminal, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 300
        while not (log.is_file() and "(step " in log.read_text()) and time.monotonic() < deadline:
            time.sleep(0.2)  # until the aligner has trained an epoch
        assert workflow.poll() is None, "snakemake ended before the training got going"
        workflow.send_signal(signal.SIGTERM)
        stopped_at = time.monotonic()
        workflow.wait(timeout=180)
    out = (tmp_path / "terminal.txt").read_text()
    assert workflow.returncode != 0 and time.monotonic() - stopped_at < 60, out
    assert "SIGTERM: stopping. Running trainings save a checkpoint at their next step" in out
    match = re.search(r"tts-pipeline train-aligner: stopped on request \(the stop file .+\) at step (\d+),", out)
    assert match, out
    assert "Stopped on request (SIGTERM)" in out and "Run the same snakemake command again to resume" in out
    assert not (tmp_path / "results/demo/work/STOP").exists()

    client = mlflow.MlflowClient(f"sqlite:///{tmp_path / 'results/mlflow.db'}")
    experiment = client.get_experiment_by_name("demo").experiment_id
    parents = client.search_runs([experiment], "tags.kind = 'workflow'", order_by=["start_time ASC"])
    assert parents[-1].info.status == "KILLED"
    (aligner_run,) = client.search_runs([experiment], "tags.rule = 'train_aligner'")
    assert aligner_run.info.status == "KILLED"

    step = int(match.group(1))
    raw = yaml.safe_load(config.read_text())
    raw["aligner"]["max_steps"] = step + 2  # a short rest of the training, from the stop's checkpoint
    config.write_text(yaml.safe_dump(raw))
    snakemake(tmp_path, "train_aligner", config=config)
    assert f"resuming from results/demo/work/train_aligner/step-{step:08d}.pt (step {step}," in log.read_text()
    metrics = json.loads((tmp_path / "results/demo/aligner/metrics.json").read_text())
    assert metrics["resumed_from_step"] == step and metrics["step"] == step + 2
