"""The training state of every trainer: what a step changes and what a checkpoint stores.

:class:`TrainingState` holds the loop's counters and saves and restores them the same way for every
trainer; :class:`ModelState` adds one model under one optimiser and gradient scaler (the aligner,
FastPitch, Tacotron 2, WaveGlow). HiFi-GAN's generator and discriminators, with their two optimisers,
scalers and schedulers, extend :class:`TrainingState` in ``training/hifigan/state.py``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from tts_pipeline.training.checkpoint import Checkpoint, CheckpointManager, restore_rng_state


@dataclass(kw_only=True)
class TrainingState:
    """The loop's counters (what :class:`tts_pipeline.training.loop.EpochLoop` advances); subclasses add
    what they train and name it in :meth:`states`.

    Attributes:
        step: Optimiser steps done.
        epoch: Current epoch, from 1.
        batch_in_epoch: Optimiser steps of ``epoch`` already done.
        history: One dict per finished epoch (and one for the validation before training, epoch 0).
    """

    step: int = 0
    epoch: int = 1
    batch_in_epoch: int = 0
    history: list[dict[str, float]] = field(default_factory=list)

    def states(self) -> dict[str, Any]:
        """Named objects with a ``state_dict()`` for :meth:`CheckpointManager.save`."""
        raise NotImplementedError

    def counters(self) -> dict[str, Any]:
        """The counters a checkpoint stores beside the states (step and epoch are its own fields)."""
        return {"batch_in_epoch": self.batch_in_epoch, "history": self.history}

    def extra(self) -> dict[str, Any]:
        """Everything a checkpoint stores beside the states: the counters, and what a subclass adds."""
        return self.counters()

    def restore(self, checkpoint: Checkpoint, *, restore_rng: bool = True) -> None:
        """Load a checkpoint of this trainer: its states, then :meth:`restore_counters`."""
        raise NotImplementedError

    def save(self, manager: CheckpointManager, run_id: str | None, extra: Mapping[str, Any] | None = None) -> Path:
        """Write a checkpoint of this state (with ``extra`` after :meth:`extra`); returns its path."""
        return manager.save(
            self.step, self.epoch, self.states(), run_id=run_id, extra={**self.extra(), **(extra or {})}
        )

    def restore_counters(self, checkpoint: Checkpoint, *, restore_rng: bool = True) -> None:
        """Continue the counters of ``checkpoint`` and, with ``restore_rng``, its RNG streams (rank 0
        only: the loop reseeds the other ranks)."""
        self.step, self.epoch = checkpoint.step, checkpoint.epoch
        self.batch_in_epoch = int(checkpoint.extra.get("batch_in_epoch", 0))
        self.history = list(checkpoint.extra.get("history", []))
        if restore_rng:
            restore_rng_state(checkpoint.rng)


def load_scaler(scaler: torch.amp.GradScaler, saved: Mapping[str, Any] | None) -> None:
    """Load a gradient scaler's saved state; a disabled scaler saved an empty dict (or nothing)."""
    if saved:
        scaler.load_state_dict(saved)


@dataclass(kw_only=True)
class ModelState(TrainingState):
    """One model, its optimiser and gradient scaler, and the loop's counters.

    Attributes:
        model: The module trained; it has ``model_config()`` (stored with each checkpoint).
        optimizer: Its optimiser.
        scaler: Enabled for fp16 only; disabled, it passes losses and steps through.
        first_losses: The losses of step 1, which ``metrics.json`` reports as the start of training.
    """

    model: Any
    optimizer: torch.optim.Optimizer
    scaler: torch.amp.GradScaler
    first_losses: dict[str, float] = field(default_factory=dict)

    def states(self) -> dict[str, Any]:
        return {"model": self.model, "optimizer": self.optimizer, "scaler": self.scaler}

    def extra(self) -> dict[str, Any]:
        """The counters, the losses of step 1 and the model's config."""
        return {**self.counters(), "first_losses": self.first_losses, "model_config": self.model.model_config()}

    def restore(self, checkpoint: Checkpoint, *, restore_rng: bool = True) -> None:
        """Load a checkpoint of this trainer (weights, optimiser, scaler, counters, RNG)."""
        states = checkpoint.states
        self.model.load_state_dict(states["model"])
        self.optimizer.load_state_dict(states["optimizer"])
        load_scaler(self.scaler, states.get("scaler"))
        self.first_losses = dict(checkpoint.extra.get("first_losses", {}))
        self.restore_counters(checkpoint, restore_rng=restore_rng)
