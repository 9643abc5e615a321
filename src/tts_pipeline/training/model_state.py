"""The training state of one model under one optimiser (FastPitch, Tacotron 2, WaveGlow): what a step
changes and what a checkpoint stores, saved and restored the same way for each of them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from tts_pipeline.training.checkpoint import Checkpoint, restore_rng_state


@dataclass
class ModelState:
    """The model, its optimiser and gradient scaler, and the loop's counters (see
    :class:`tts_pipeline.training.loop.LoopState`).

    Attributes:
        model: The module trained; it has ``model_config()`` (stored with each checkpoint).
        step: Optimiser steps done.
        epoch: Current epoch, from 1.
        batch_in_epoch: Optimiser steps of ``epoch`` already done.
        history: One dict per finished epoch (and one for the validation before training, epoch 0).
        first_losses: The losses of step 1, which ``metrics.json`` reports as the start of training.
    """

    model: Any
    optimizer: torch.optim.Optimizer
    scaler: torch.amp.GradScaler
    step: int = 0
    epoch: int = 1
    batch_in_epoch: int = 0
    history: list[dict[str, float]] = field(default_factory=list)
    first_losses: dict[str, float] = field(default_factory=dict)

    def states(self) -> dict[str, Any]:
        """Named objects for :meth:`CheckpointManager.save`."""
        return {"model": self.model, "optimizer": self.optimizer, "scaler": self.scaler}

    def extra(self) -> dict[str, Any]:
        """The counters and the model's config, stored beside the states."""
        return {
            "batch_in_epoch": self.batch_in_epoch,
            "history": self.history,
            "first_losses": self.first_losses,
            "model_config": self.model.model_config(),
        }

    def restore(self, checkpoint: Checkpoint, *, restore_rng: bool = True) -> None:
        """Load a checkpoint of this trainer (weights, optimiser, scaler, counters, RNG)."""
        states = checkpoint.states
        self.model.load_state_dict(states["model"])
        self.optimizer.load_state_dict(states["optimizer"])
        if states.get("scaler"):  # a disabled scaler saves an empty dict
            self.scaler.load_state_dict(states["scaler"])
        self.step, self.epoch = checkpoint.step, checkpoint.epoch
        self.batch_in_epoch = int(checkpoint.extra.get("batch_in_epoch", 0))
        self.history = list(checkpoint.extra.get("history", []))
        self.first_losses = dict(checkpoint.extra.get("first_losses", {}))
        if restore_rng:
            restore_rng_state(checkpoint.rng)
