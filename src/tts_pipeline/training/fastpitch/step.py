"""One FastPitch optimiser step (the Noam rate of the step, then the shared teacher-forced step of
:mod:`tts_pipeline.training.teacher_forced`) and the loss terms it reports."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from tts_pipeline.config import FastPitchConfig
from tts_pipeline.models.fastpitch import FastPitchLossTerms, fastpitch_loss
from tts_pipeline.models.fastpitch.data import FastPitchBatch
from tts_pipeline.training.fastpitch.state import FastPitchState, set_step_learning_rate
from tts_pipeline.training.teacher_forced import TeacherForcedRuntime, accumulated_step

STAGE = "train_fastpitch"
DIVERGED_HINT = (
    "Try a lower fastpitch.learning_rate or more fastpitch.warmup_steps, or amp: off / bf16 instead of fp16."
)


def loss_names(energy: bool) -> tuple[str, ...]:
    """Names of the figures a step reports (the energy loss only for energy-conditioned models)."""
    names = ("loss", "loss_mel", "loss_duration", "loss_pitch")
    return (*names, "loss_energy", "duration_error") if energy else (*names, "duration_error")


def loss_values(terms: FastPitchLossTerms) -> list[torch.Tensor]:
    """The terms in :func:`loss_names` order, detached."""
    values = [terms.total, terms.mel, terms.duration, terms.pitch]
    if terms.energy is not None:
        values.append(terms.energy)
    values.append(terms.duration_error)
    return [value.detach().float() for value in values]


@dataclass
class Runtime(TeacherForcedRuntime):
    """What a step needs besides the state: the (DDP-wrapped) FastPitch, precision, processes, settings."""

    cfg: FastPitchConfig
    accumulation: int

    def loss_terms(self, model: nn.Module, batch: FastPitchBatch) -> FastPitchLossTerms:
        """Teacher-forced forward and loss of a batch already on the device."""
        inputs = batch.inputs()
        with self.precision.autocast():
            output = model(inputs, mel_max_len=int(batch.mels.shape[-1]))
            return fastpitch_loss(
                output,
                inputs,
                batch.mels,
                batch.mel_lengths,
                duration_scale=self.cfg.duration_loss_scale,
                pitch_scale=self.cfg.pitch_loss_scale,
                energy_scale=self.cfg.energy_loss_scale,
            )

    def loss_values(self, terms: FastPitchLossTerms) -> list[torch.Tensor]:
        return loss_values(terms)


def train_step(
    state: FastPitchState, runtime: Runtime, micro_batches: Sequence[FastPitchBatch], *, checkpoints: Sequence[Path]
) -> dict[str, float]:
    """One optimiser step over ``micro_batches`` at the Noam rate of its step number (package docstring).

    Returns the step's losses averaged over micro-batches and processes (:func:`loss_names`), plus
    ``grad_norm`` (left out of a step the fp16 scaler skips) and ``lr``. Raises :class:`TrainingDiverged`
    (naming the last checkpoint of ``checkpoints``) before the update when a loss, or without gradient
    scaling the gradient norm, is not finite.
    """
    cfg = runtime.cfg
    return accumulated_step(
        state,
        runtime,
        micro_batches,
        names=loss_names(state.model.energy_conditioning),
        grad_clip=cfg.grad_clip,
        set_rate=lambda step: set_step_learning_rate(state.optimizer, cfg, step),
        checkpoints=checkpoints,
        stage=STAGE,
        hint=DIVERGED_HINT,
    )
