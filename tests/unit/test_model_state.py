"""The training state every trainer keeps (training.model_state): what a checkpoint stores beside the
weights, and how a state comes back from it."""

from __future__ import annotations

import random
from dataclasses import dataclass

import torch

from tts_pipeline.training.aligner import AlignerState
from tts_pipeline.training.checkpoint import CheckpointManager
from tts_pipeline.training.model_state import ModelState


class Tiny(torch.nn.Linear):
    def model_config(self) -> dict:
        return {"in": self.in_features, "out": self.out_features}


@dataclass
class TinyState(ModelState):
    model: Tiny


def tiny_state(cls: type[ModelState] = TinyState, seed: int = 0) -> ModelState:
    torch.manual_seed(seed)
    model = Tiny(3, 2)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
    return cls(model=model, optimizer=optimizer, scaler=torch.amp.GradScaler("cpu", enabled=False))


def test_a_saved_state_comes_back_with_its_weights_counters_losses_and_random_streams(tmp_path):
    state = tiny_state()
    state.model(torch.ones(1, 3)).sum().backward()
    state.optimizer.step()
    state.step, state.epoch, state.batch_in_epoch = 7, 2, 3
    state.history, state.first_losses = [{"epoch": 1.0, "train_loss": 0.5}], {"loss": 0.9}
    manager = CheckpointManager(tmp_path, "h")
    path = state.save(manager, "run-1", {"world_size": 1})
    expected_random = (random.random(), torch.rand(1))

    saved = manager.latest()
    assert saved is not None and saved.path == path and saved.run_id == "run-1"
    assert list(saved.extra) == ["batch_in_epoch", "history", "first_losses", "model_config", "world_size"]
    restored = tiny_state(seed=1)
    restored.restore(saved)
    assert (restored.step, restored.epoch, restored.batch_in_epoch) == (7, 2, 3)
    assert restored.history == state.history and restored.first_losses == {"loss": 0.9}
    assert torch.equal(restored.model.weight, state.model.weight)
    assert restored.optimizer.state_dict()["state"][0]["step"] == 1
    assert (random.random(), torch.rand(1)) == expected_random  # the streams continue where they were saved


def test_the_aligner_checkpoints_its_counters_alone(tmp_path):
    # its model file records the model's config, and its metrics report no losses of step 1
    state = tiny_state(AlignerState)
    state.batch_in_epoch, state.history = 1, [{"epoch": 1.0}]
    assert state.extra() == {"batch_in_epoch": 1, "history": [{"epoch": 1.0}]}
    state.save(CheckpointManager(tmp_path, "h"), None)
    assert list(CheckpointManager(tmp_path, "h").latest().extra) == ["batch_in_epoch", "history"]
