"""One Tacotron 2 optimiser step (the shared teacher-forced step of
:mod:`tts_pipeline.training.teacher_forced`, at the epoch's rate) and the loss terms it reports (which
validation reports too)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from tts_pipeline.models.tacotron2 import Tacotron2LossTerms, tacotron2_loss
from tts_pipeline.models.tacotron2.data import Tacotron2Batch
from tts_pipeline.training.engine import learning_rate
from tts_pipeline.training.tacotron2.state import Tacotron2State
from tts_pipeline.training.teacher_forced import TeacherForcedRuntime, accumulated_step

STAGE = "train_tacotron2"
LOSS_NAMES = ("loss", "loss_mel", "loss_mel_postnet", "loss_gate", "loss_attention")
DIVERGED_HINT = "Try a lower tacotron2.learning_rate or tacotron2.grad_clip, or amp: off / bf16 instead of fp16."


@dataclass
class Runtime(TeacherForcedRuntime):
    """What a step needs besides the state: the (DDP-wrapped) Tacotron 2, precision, processes, the clip
    and the guided-attention loss settings."""

    grad_clip: float
    attention_weight: float = 0.0
    attention_sigma: float = 0.2

    def loss_terms(self, model: nn.Module, batch: Tacotron2Batch) -> Tacotron2LossTerms:
        """Teacher-forced forward (under autocast) and loss (float32) of a batch already on the device."""
        with self.precision.autocast():
            output = model(batch.text, batch.text_lengths, batch.mels, batch.mel_lengths)
        return tacotron2_loss(
            output,
            batch.mels,
            batch.gates,
            batch.text_lengths,
            batch.mel_lengths,
            attention_weight=self.attention_weight,
            attention_sigma=self.attention_sigma,
        )

    def loss_values(self, terms: Tacotron2LossTerms) -> list[torch.Tensor]:
        """The terms in :data:`LOSS_NAMES` order, detached."""
        return [value.detach().float() for value in terms]


def train_step(
    state: Tacotron2State, runtime: Runtime, micro_batches: Sequence[Tacotron2Batch], *, checkpoints: Sequence[Path]
) -> dict[str, float]:
    """One optimiser step over ``micro_batches`` (package docstring), at the rate the epoch set.

    Returns the losses averaged over micro-batches and processes (:data:`LOSS_NAMES`), ``grad_norm`` (left
    out of a step the fp16 scaler skips) and ``lr``. Raises
    :class:`tts_pipeline.training.engine.TrainingDiverged` (naming the last checkpoint) before the update
    when a loss, or without gradient scaling the gradient norm, is not finite.
    """
    return accumulated_step(
        state,
        runtime,
        micro_batches,
        names=LOSS_NAMES,
        grad_clip=runtime.grad_clip,
        # The rate is the epoch's (set when it begins); the step does not change it.
        set_rate=lambda step: learning_rate(state.optimizer),
        checkpoints=checkpoints,
        stage=STAGE,
        hint=DIVERGED_HINT,
    )
