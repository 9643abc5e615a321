"""Shared training pieces: precision, accumulation, seeding, NaN guard, throughput, schedules, means."""

from __future__ import annotations

import math
import random
from pathlib import Path

import numpy as np
import pytest
import torch

from tts_pipeline.errors import UserError
from tts_pipeline.training import engine
from tts_pipeline.training.distributed import DistributedContext


def test_accumulation_keeps_the_global_batch():
    assert engine.accumulation_steps(128, 16, 1, section="hifigan") == 8
    assert engine.accumulation_steps(128, 16, 8, section="hifigan") == 1
    assert engine.accumulation_steps(128, 32, 2, section="hifigan") == 2
    with pytest.raises(UserError) as error:
        engine.accumulation_steps(128, 16, 3, section="hifigan")
    message = str(error.value)
    assert "hifigan.global_batch_size (128)" in message and "hifigan.batch_size (16)" in message
    assert "3 process(es)/GPU(s) granted = 48" in message
    with pytest.raises(UserError, match="fastpitch.batch_size"):
        engine.accumulation_steps(10, 4, 1, section="fastpitch")


def _draws() -> tuple[float, float, float]:
    return random.random(), float(np.random.rand()), float(torch.rand(()))


def test_seeding_is_reproducible_and_differs_per_rank():
    assert engine.seed_everything(1234, rank=2) == 1236
    first = _draws()
    engine.seed_everything(1234, rank=2)
    assert _draws() == first
    engine.seed_everything(1234, rank=3)
    assert _draws() != first


def test_the_nan_guard_names_the_step_and_the_last_good_checkpoint(tmp_path):
    saved = [tmp_path / "step-00000010.pt", tmp_path / "step-00000020.pt"]
    engine.check_finite({"loss": 1.0}, stage="s", step=21, epoch=3, checkpoints=saved)
    with pytest.raises(engine.TrainingDiverged) as error:
        engine.check_finite(
            {"loss_gen": 2.0, "loss_mel": math.inf}, stage="train_x", step=21, epoch=3, checkpoints=saved, hint="Try X."
        )
    message = str(error.value)
    assert isinstance(error.value, UserError)
    assert message.startswith("train_x: non-finite loss (loss_gen 2.0, loss_mel inf) at step 21 (epoch 3)")
    assert f"the last good checkpoint is {saved[-1]}" in message and message.endswith("Try X.")
    with pytest.raises(engine.TrainingDiverged, match="no checkpoint was saved yet"):
        engine.check_finite({"loss": math.nan}, stage="s", step=1, epoch=1, checkpoints=[])


def test_throughput_counts_frames_per_second(monkeypatch):
    clock = iter([100.0, 102.0])
    monkeypatch.setattr(engine.time, "perf_counter", lambda: next(clock))
    meter = engine.ThroughputMeter(DistributedContext())
    meter.add(frames=32 * 16, items=16)
    meter.add(frames=32 * 16, items=16)
    assert meter.rate() == (512.0, 16.0)
    # NVIDIA's unit counts 80 mel bins per 32-frame item.
    assert engine.nvidia_frames_per_s(512.0, n_mels=80, frames_per_item=32) == pytest.approx(1280.0)


def test_learning_rate_helpers():
    optimizer = torch.optim.AdamW([torch.nn.Parameter(torch.zeros(1))], lr=2e-4)
    scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.5)
    engine.scale_learning_rate(optimizer, 3.0)
    assert engine.learning_rate(optimizer) == pytest.approx(6e-4)
    optimizer.step()
    scheduler.step()
    assert engine.learning_rate(optimizer) == pytest.approx(3e-4)
    # FastPitch's warm-up (reference 3.7): 3.16e-6 at step 1 and 3.16e-3 at step 1000 for lr 0.1.
    assert 0.1 * engine.noam_scale(1, 1000) == pytest.approx(3.162e-6, rel=1e-3)
    assert 0.1 * engine.noam_scale(1000, 1000) == pytest.approx(3.162e-3, rel=1e-3)
    assert engine.noam_scale(4000, 1000) == pytest.approx(1 / 4000**0.5)


def test_running_means():
    means = engine.RunningMeans()
    assert means.means() == {}
    means.add({"a": 1.0, "b": 4.0})
    means.add({"a": 3.0, "b": 0.0})
    assert means.means("train_") == {"train_a": 2.0, "train_b": 2.0}
    means.reset()
    assert means.count == 0


def test_last_checkpoint_text():
    assert engine.last_checkpoint_text([]) == "no checkpoint was saved yet"
    assert engine.last_checkpoint_text([Path("a"), Path("b")]) == "the last good checkpoint is b"
