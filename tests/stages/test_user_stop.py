"""A user's stop (SIGTERM, Ctrl-C or the workflow's stop file): training saves a checkpoint at its next
step and stops, its MLflow run ends KILLED, and the same command resumes from that checkpoint."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
import torch

from tts_pipeline import stop_request, tracking
from tts_pipeline.config import AlignerConfig
from tts_pipeline.training import aligner as trainer
from tts_pipeline.training.aligner import loop as aligner_loop
from tts_pipeline.training.checkpoint import CheckpointManager
from tts_pipeline.training.distributed import DistributedContext
from tts_pipeline.training.loop import LoopIO

from .test_train_aligner import N_MELS, _datasets, make_corpus, section, stage_argv


@pytest.fixture(autouse=True)
def no_stop_left():
    stop_request.reset()
    yield
    stop_request.reset()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_training_at_the_next_step_with_a_checkpoint_and_it_resumes(tmp_path, monkeypatch, signum):
    manifest_dir, features_dir = make_corpus(tmp_path)
    train_set, val_set = _datasets(manifest_dir, features_dir)
    # checkpoints only every 100 steps: the one at step 3 is the stop's own
    cfg = AlignerConfig(embedding_dim=16, attention_dim=8, batch_size=3, max_steps=8, checkpoint_every_n_steps=100)
    context = DistributedContext(device=torch.device("cpu"))
    sizes = {"n_symbols": 148, "n_mels": N_MELS}
    real_step = aligner_loop.train_step

    def signalled_at_3(state, *args, **kwargs):
        report = real_step(state, *args, **kwargs)
        if state.step == 2:  # this is the third step: the loop counts it once it returns
            os.kill(os.getpid(), signum)
        return report

    monkeypatch.setattr(aligner_loop, "train_step", signalled_at_3)
    manager = CheckpointManager(tmp_path / "work", "h")
    before = signal.getsignal(signum)  # SIG_IGN for SIGINT where the tests run in the background
    with pytest.raises(stop_request.StopRequested, match=rf"{signal.Signals(signum).name}\) at step 3, epoch 2"):
        trainer.fit(cfg, train_set, val_set, LoopIO(manager, context), **sizes)
    assert manager.latest().step == 3
    assert signal.getsignal(signum) == before  # handlers given back

    stop_request.reset()
    monkeypatch.setattr(aligner_loop, "train_step", real_step)
    resumed = trainer.fit(cfg, train_set, val_set, LoopIO(manager, context, manager.latest()), **sizes)
    assert resumed.step == 8 and resumed.metrics["resumed_from_step"] == 3


@pytest.mark.slow
def test_the_stop_file_stops_the_stage_its_run_ends_killed_and_the_rerun_resumes(tmp_path):
    manifest_dir, features_dir = make_corpus(tmp_path, frames_per_char=12)
    payload = section(max_steps=100_000, checkpoint_every_n_steps=100_000, batch_size=2)
    argv = stage_argv(tmp_path, manifest_dir, features_dir, payload)
    stop_file = tmp_path / "STOP"
    env = {
        **{key: value for key, value in os.environ.items() if not key.startswith("TTS_")},
        stop_request.ENV_STOP_FILE: str(stop_file),
        "TTS_TRACKING": "1",
        "TTS_TRACKING_URI": f"sqlite:///{tmp_path / 'mlflow.db'}",
        "TTS_MLFLOW_EXPERIMENT": "stop-test",
    }
    command = [sys.executable, "-m", "tts_pipeline", "train_aligner", *argv]
    log = tmp_path / "train_aligner.log"
    with log.open("w") as stderr:
        job = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=stderr, text=True)
        deadline = time.monotonic() + 180
        while "(step " not in log.read_text() and time.monotonic() < deadline:  # an epoch is done
            time.sleep(0.2)
        stop_file.touch()
        started = time.monotonic()
        out, _ = job.communicate(timeout=120)
    assert job.returncode == 130, log.read_text()
    assert time.monotonic() - started < 30
    assert f"stopped on request (the stop file {stop_file}) at step" in out and "run the same command again" in out
    work = CheckpointManager(tmp_path / "work" / "train_aligner", "unused")  # to list them, not to resume
    (last,) = work.paths()  # the stop's own checkpoint: none was due at its cadence
    saved = torch.load(last, weights_only=True)
    assert 0 < saved["step"] < 100_000 and f"at step {saved['step']}," in out
    settings = tracking.TrackingSettings(enabled=True, uri=env["TTS_TRACKING_URI"], experiment="stop-test")
    run_id = saved["run_id"]
    assert tracking.get_run(settings, run_id)["status"] == "KILLED"

    stop_file.unlink()
    rerun = [*command[:-len(argv)], *stage_argv(tmp_path, manifest_dir, features_dir, section(
        max_steps=saved["step"] + 2, checkpoint_every_n_steps=100_000, batch_size=2))]  # fmt: skip
    subprocess.run(rerun, env=env, check=True, capture_output=True, timeout=300)
    metrics = json.loads((tmp_path / "aligner" / "metrics.json").read_text())
    assert metrics["resumed_from_step"] == saved["step"] and metrics["step"] == saved["step"] + 2
    assert tracking.get_run(settings, run_id)["status"] == "FINISHED"
