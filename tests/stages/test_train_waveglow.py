"""The train_waveglow stage and its trainer on a tiny synthetic corpus: outputs that rebuild alone,
resuming after a crash, a finished run, the config rules, DDP against accumulation, CUDA."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from tts_pipeline import tracking
from tts_pipeline.config import AudioConfig, WaveGlowSection
from tts_pipeline.errors import UserError
from tts_pipeline.models.waveglow.model_file import load_waveglow
from tts_pipeline.stages import train_waveglow as stage
from tts_pipeline.training.checkpoint import CheckpointManager, load_checkpoint
from tts_pipeline.training.waveglow import loop as waveglow_loop

from ..conftest import REPO
from ..stage_helpers import run_in_process, untracked_env
from .test_train_hifigan import make_corpus

AUDIO = AudioConfig()
# A WaveGlow of a few thousand weights: 4 flows, early output after flow 2, 2 WN layers of 8 channels.
TINY: dict[str, Any] = {
    "n_flows": 4,
    "n_group": 4,
    "n_early_every": 2,
    "n_early_size": 2,
    "wn_layers": 2,
    "wn_channels": 8,
    "segment_size": 2048,
    "global_batch_size": 4,
    "batch_size": 2,
    "gpus": 0,
    "num_workers": 0,
    "epochs": 100,
    "validation_every_n_epochs": 1,
    "checkpoint_every_n_epochs": 1,
}


@pytest.fixture(autouse=True)
def one_thread():
    torch.set_num_threads(1)


def section(**waveglow: Any) -> str:
    return json.dumps({"waveglow": {**TINY, **waveglow}, "audio": AUDIO.model_dump(mode="json")})


def stage_argv(root: Path, payload: str) -> list[str]:
    return [
        "--section", payload,
        "--manifest-dir", str(root / "data"),
        "--work-dir", str(root / "work" / "waveglow"),
        "--model", str(root / "waveglow" / "model.pt"),
        "--metrics", str(root / "waveglow" / "metrics.json"),
    ]  # fmt: skip


def run_stage(argv: list[str]) -> dict:
    return json.loads(run_in_process(stage, argv).metrics.read_text())


@pytest.fixture
def corpus(tmp_path) -> Path:
    make_corpus(tmp_path, n_train=8, n_val=2)
    return tmp_path


def test_steps_write_a_model_that_rebuilds_alone_and_a_crash_resumes_where_it_stopped(corpus, monkeypatch):
    metrics = run_stage(stage_argv(corpus, section(max_steps=2)))
    # 8 clips, 4 per optimiser step (2 micro-batches of 2): 2 steps an epoch
    assert metrics["step"] == 2 and metrics["steps_this_run"] == 2 and metrics["accumulation"] == 2
    assert metrics["steps_per_epoch"] == 2 and metrics["n_train"] == 8 and metrics["n_val"] == 2
    assert np.isfinite(metrics["val_loss_start"]) and np.isfinite(metrics["val_loss"])
    assert np.isfinite(metrics["train_loss"]) and metrics["samples_per_s"] > 0
    model, info = load_waveglow(corpus / "waveglow" / "model.pt", audio=AUDIO)
    assert info.step == 2 and info.extra["kind"] == "waveglow" and model.has_weight_norm
    assert model.config.n_flows == 4 and model.config.wn_channels == 8
    assert model.infer(torch.zeros(1, 80, 5), sigma=0.5).shape == (1, 5 * 256)

    # the next run crashes in step 4 (the second of epoch 2, before its epoch-end checkpoint): the
    # newest checkpoint is still the one of step 2
    real_step = waveglow_loop._Loop.train_step

    def crash_at_4(self, batches):
        if self.state.step == 3:
            raise RuntimeError("simulated crash")
        return real_step(self, batches)

    monkeypatch.setattr(waveglow_loop._Loop, "train_step", crash_at_4)
    with pytest.raises(RuntimeError, match="simulated crash"):
        run_stage(stage_argv(corpus, section(max_steps=6)))
    work = corpus / "work" / "waveglow"
    assert [load_checkpoint(p).step for p in sorted(work.glob("step-*.pt"))][-1] == 2
    monkeypatch.setattr(waveglow_loop._Loop, "train_step", real_step)

    metrics = run_stage(stage_argv(corpus, section(max_steps=6)))
    assert metrics["resumed_from_step"] == 2 and metrics["step"] == 6 and metrics["steps_this_run"] == 4
    assert metrics["epochs_completed"] == 3 and load_waveglow(corpus / "waveglow" / "model.pt")[1].step == 6
    # resumed at step 2 = the start of epoch 2: the same weights as an uninterrupted run of 6 steps
    straight = corpus / "straight"
    straight.mkdir()
    (straight / "data").symlink_to(corpus / "data")
    run_stage(stage_argv(straight, section(max_steps=6)))
    resumed = torch.load(corpus / "waveglow" / "model.pt", weights_only=True)["state_dict"]
    uninterrupted = torch.load(straight / "waveglow" / "model.pt", weights_only=True)["state_dict"]
    for key, value in uninterrupted.items():
        torch.testing.assert_close(resumed[key], value, rtol=1e-5, atol=1e-6, msg=key)


def test_a_finished_run_reruns_without_training(corpus):
    argv = stage_argv(corpus, section(epochs=1))
    first = run_stage(argv)
    again = run_stage(argv)
    assert first["step"] == again["step"] == 2 and again["steps_this_run"] == 0
    assert again["val_loss"] == first["val_loss"]


@pytest.mark.slow
def test_a_crashed_run_resumes_into_the_same_mlflow_run(corpus, monkeypatch):
    monkeypatch.setenv("TTS_TRACKING", "1")
    monkeypatch.setenv("TTS_TRACKING_URI", f"sqlite:///{corpus / 'mlflow.db'}")
    monkeypatch.setenv("TTS_MLFLOW_EXPERIMENT", "waveglow-test")
    monkeypatch.setenv("TTS_LOG_EVERY_N_STEPS", "1")
    argv = stage_argv(corpus, section(max_steps=4))
    real_step = waveglow_loop._Loop.train_step

    def crash_at_3(self, batches):
        if self.state.step == 2:
            raise RuntimeError("killed")
        return real_step(self, batches)

    monkeypatch.setattr(waveglow_loop._Loop, "train_step", crash_at_3)
    with pytest.raises(RuntimeError, match="killed"):
        run_stage(argv)
    run_id = load_checkpoint(CheckpointManager(corpus / "work" / "waveglow", "unused").paths()[-1]).run_id
    settings = tracking.settings_from_env(tracking.TrackingSettings(enabled=False, uri="", experiment=""))
    assert run_id and tracking.get_run(settings, run_id)["status"] == "FAILED"

    monkeypatch.setattr(waveglow_loop._Loop, "train_step", real_step)
    assert run_stage(argv)["resumed_from_step"] == 2
    summary = tracking.get_run(settings, run_id)
    assert summary["status"] == "FINISHED" and "val/loss" in summary["metrics"]
    assert summary["params"]["waveglow.n_flows"] == "4" and summary["tags"]["stage"] == "train_waveglow"
    assert [step for step, _ in tracking.metric_history(settings, run_id, "train/loss")] == [1, 2, 3, 4]
    artifacts = Path(summary["artifact_uri"].removeprefix("file://"))
    assert (artifacts / "metrics.json").is_file() and (artifacts / "model" / "model.pt").is_file()


def test_a_hop_other_than_256_and_a_bad_network_are_named():
    audio = AudioConfig(hop_length=128, win_length=512, filter_length=512)
    payload = json.dumps({"waveglow": TINY, "audio": audio.model_dump(mode="json")})
    argv = stage_argv(Path("/nonexistent"), payload)
    with pytest.raises(UserError, match="hop of 256"):
        run_stage(argv)
    with pytest.raises(ValueError, match="n_group"):
        WaveGlowSection(n_group=5)
    with pytest.raises(ValueError, match="at least 2 must remain"):
        WaveGlowSection(n_flows=12, n_group=4, n_early_every=2, n_early_size=2)


STAGE_RUNNER = """
import sys
from tts_pipeline import cli
cli.main(sys.argv[1:])
"""


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("torchrun") is None, reason="needs torchrun")
def test_two_processes_make_the_same_update_as_one_process_accumulating(corpus):
    """DDP (2 CPU processes x 1 micro-batch of 2) against accumulation (1 process x 2 micro-batches): the
    same weights. Every clip is shorter than the segment, so no random crop tells the runs apart."""
    payload = section(max_steps=2, segment_size=8192)
    runner = corpus / "runner.py"
    runner.write_text(STAGE_RUNNER)
    two = corpus / "two"
    argv = stage_argv(two, payload)
    argv[argv.index("--manifest-dir") + 1] = str(corpus / "data")
    command = ["torchrun", "--standalone", "--nproc_per_node=2", str(runner), "train_waveglow", *argv]
    subprocess.run(command, cwd=REPO, env=untracked_env(), check=True, capture_output=True, timeout=180)
    distributed = json.loads((two / "waveglow" / "metrics.json").read_text())
    assert distributed["world_size"] == 2 and distributed["accumulation"] == 1 and distributed["step"] == 2

    single = run_stage(stage_argv(corpus, payload))
    assert single["world_size"] == 1 and single["accumulation"] == 2
    assert distributed["val_loss"] == pytest.approx(single["val_loss"], rel=1e-4)
    one_model = torch.load(corpus / "waveglow" / "model.pt", weights_only=True)["state_dict"]
    two_model = torch.load(two / "waveglow" / "model.pt", weights_only=True)["state_dict"]
    for name, value in one_model.items():
        torch.testing.assert_close(two_model[name], value, atol=1e-5, rtol=1e-4, msg=name)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("amp", ["off", "fp16", "bf16"])
def test_two_steps_on_cuda(corpus, amp):
    metrics = run_stage(stage_argv(corpus, section(max_steps=2, gpus=1, amp=amp)))
    assert metrics["device"].startswith("cuda") and metrics["amp"] == amp and metrics["step"] == 2
    assert math.isfinite(metrics["val_loss"]) and math.isfinite(metrics["train_loss"])
    model, _ = load_waveglow(corpus / "waveglow" / "model.pt")
    assert next(model.parameters()).device.type == "cpu"
