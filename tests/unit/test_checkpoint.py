"""Resumable checkpoints: round trip, retention, corrupt-file fallback, config changes."""

from __future__ import annotations

import logging
import random

import numpy as np
import pytest
import torch

from tts_pipeline.training.checkpoint import (
    CheckpointManager,
    capture_rng_state,
    load_checkpoint,
    restore_rng_state,
)


def trained_pair(seed: int = 0) -> tuple[torch.nn.Module, torch.optim.Optimizer]:
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    for _ in range(3):
        optimizer.zero_grad()
        model(torch.randn(5, 4)).pow(2).sum().backward()
        optimizer.step()
    return model, optimizer


def draws() -> tuple[float, float, float]:
    return random.random(), float(np.random.rand()), float(torch.rand(()))


def test_round_trip_restores_states_counters_and_rng(tmp_path):
    model, optimizer = trained_pair()
    manager = CheckpointManager(tmp_path / "work", "abc123", keep=2)
    random.seed(1)
    np.random.seed(1)
    torch.manual_seed(1)
    path = manager.save(
        40, 3, {"model": model, "optimizer": optimizer}, run_id="run-1", extra={"batch_in_epoch": 5, "h": [1.5]}
    )
    expected = draws()
    draws()  # move every generator on

    checkpoint = manager.latest()
    assert checkpoint is not None and checkpoint.path == path and path.name == "step-00000040.pt"
    assert (checkpoint.step, checkpoint.epoch, checkpoint.run_id) == (40, 3, "run-1")
    assert checkpoint.config_hash == "abc123" and checkpoint.extra == {"batch_in_epoch": 5, "h": [1.5]}
    restore_rng_state(checkpoint.rng)
    assert draws() == expected

    fresh, fresh_optimizer = trained_pair(seed=9)
    fresh.load_state_dict(checkpoint.states["model"])
    fresh_optimizer.load_state_dict(checkpoint.states["optimizer"])
    for a, b in zip(model.state_dict().values(), fresh.state_dict().values(), strict=True):
        assert torch.equal(a, b)
    assert fresh_optimizer.state_dict()["state"][0]["step"] == optimizer.state_dict()["state"][0]["step"]
    # everything is weights_only-safe
    torch.load(path, weights_only=True)


def test_rng_state_is_plain_tensors():
    state = capture_rng_state()
    assert isinstance(state["numpy"]["keys"], torch.Tensor) and isinstance(state["python"]["state"], torch.Tensor)


def test_only_the_newest_k_are_kept(tmp_path):
    model, _ = trained_pair()
    manager = CheckpointManager(tmp_path, "h", keep=3)
    for step in (10, 20, 30, 40, 50):
        manager.save(step, 1, {"model": model})
    assert [p.name for p in manager.paths()] == ["step-00000030.pt", "step-00000040.pt", "step-00000050.pt"]
    # ordering is numeric, not by name length or time
    assert manager.latest().step == 50


def test_a_truncated_newest_checkpoint_falls_back_to_the_previous(tmp_path, caplog):
    model, _ = trained_pair()
    manager = CheckpointManager(tmp_path, "h", keep=3)
    manager.save(10, 1, {"model": model})
    newest = manager.save(20, 1, {"model": model})
    newest.write_bytes(newest.read_bytes()[: newest.stat().st_size // 2])
    with caplog.at_level(logging.WARNING):
        checkpoint = manager.latest()
    assert checkpoint is not None and checkpoint.step == 10
    assert "step-00000020.pt does not load" in caplog.text
    with pytest.raises(Exception):  # noqa: B017 - whatever torch raises for a truncated zip
        load_checkpoint(newest)


def test_all_checkpoints_unreadable_means_a_fresh_start(tmp_path):
    manager = CheckpointManager(tmp_path, "h")
    (tmp_path / "step-00000005.pt").write_bytes(b"not a checkpoint")
    assert manager.latest() is None


def test_another_config_moves_old_checkpoints_aside(tmp_path):
    model, _ = trained_pair()
    old = CheckpointManager(tmp_path, "old-hash", keep=2)
    old.save(10, 1, {"model": model})
    old.save(20, 2, {"model": model})

    new = CheckpointManager(tmp_path, "new-hash", keep=2)
    assert new.latest() is None
    assert new.paths() == []
    moved = list((tmp_path / "superseded").iterdir())
    assert len(moved) == 1 and moved[0].name.endswith("-old-hash")
    assert sorted(p.name for p in moved[0].iterdir()) == ["config.json", "step-00000010.pt", "step-00000020.pt"]

    new.save(5, 1, {"model": model})
    assert new.latest().step == 5 and new.latest().config_hash == "new-hash"
    assert CheckpointManager(tmp_path, "new-hash").latest().step == 5


def test_foreign_checkpoint_without_marker_is_moved_aside_too(tmp_path):
    model, _ = trained_pair()
    CheckpointManager(tmp_path, "old").save(10, 1, {"model": model})
    (tmp_path / "config.json").unlink()
    assert CheckpointManager(tmp_path, "new").latest() is None
    assert not list(tmp_path.glob("step-*.pt")) and (tmp_path / "superseded").is_dir()
