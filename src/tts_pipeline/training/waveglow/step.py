"""WaveGlow's loss on an audio batch, one optimiser step over its micro-batches (gradient accumulation,
NaN guard, optional clip, update) and the validation on the same loss."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.utils.data import DataLoader

from tts_pipeline.audio import MelSpectrogram
from tts_pipeline.models.waveglow import waveglow_loss
from tts_pipeline.precision import Precision
from tts_pipeline.training.distributed import DistributedContext, no_sync
from tts_pipeline.training.engine import TrainingDiverged, check_finite, last_checkpoint_text
from tts_pipeline.training.waveglow.state import WaveGlowState

STAGE = "train_waveglow"
DIVERGED_HINT = "Try a lower waveglow.learning_rate, a waveglow.grad_clip, or amp: off / bf16 instead of fp16."


@dataclass
class Runtime:
    """What a step needs besides the state: the (DDP-wrapped) model, the mel function, precision, processes
    and the section's loss and clip settings."""

    context: DistributedContext
    precision: Precision
    model: nn.Module  # WaveGlow, inside DDP when several processes train
    mel_fn: MelSpectrogram  # on the device
    sigma: float
    grad_clip: float | None


def negative_log_likelihood(
    model: torch.nn.Module, mel_fn: MelSpectrogram, audio: torch.Tensor, sigma: float, precision: Precision
) -> torch.Tensor:
    """WaveGlow's loss for a ``(B, L)`` float32 audio batch: its mel in float32 (no gradients), the flows
    under ``precision``'s autocast, the likelihood in float32. ``model`` may be DDP-wrapped."""
    with torch.no_grad():
        mel = mel_fn(audio)
    with precision.autocast():
        output = model(mel, audio)
    return waveglow_loss(output, sigma)


def train_step(
    state: WaveGlowState, runtime: Runtime, micro_batches: Sequence[Mapping[str, Any]], *, checkpoints: Sequence[Path]
) -> dict[str, float]:
    """One optimiser step over ``micro_batches`` (items ``{"audio": (B, segment_size)}``, still on the host):
    each backpropagates ``loss / k``, only the last one all-reducing under DDP.

    Returns ``{"loss": ...}``, the mean over micro-batches and processes. Raises :class:`TrainingDiverged`
    (naming the last checkpoint of ``checkpoints``) before the update when the loss, or with a clip but
    without fp16 scaling the gradient norm, is not finite.
    """
    context, k = runtime.context, len(micro_batches)
    state.optimizer.zero_grad(set_to_none=True)
    total = torch.zeros((), dtype=torch.float64, device=context.device)
    for index, batch in enumerate(micro_batches):
        audio = batch["audio"].to(context.device, non_blocking=True).float()
        with no_sync(runtime.model, index < k - 1):
            loss = negative_log_likelihood(runtime.model, runtime.mel_fn, audio, runtime.sigma, runtime.precision)
            state.scaler.scale(loss / k).backward()
        total += loss.detach().double()
    (mean_loss,) = context.mean_floats([float(total) / k])
    check_finite(
        {"loss": mean_loss},
        stage=STAGE,
        step=state.step + 1,
        epoch=state.epoch,
        checkpoints=checkpoints,
        hint=DIVERGED_HINT,
    )
    if runtime.grad_clip is not None:
        state.scaler.unscale_(state.optimizer)
        norm = torch.nn.utils.clip_grad_norm_(state.model.parameters(), runtime.grad_clip)
        if not torch.isfinite(norm) and not state.scaler.is_enabled():
            raise TrainingDiverged(
                f"{STAGE}: non-finite gradient norm at step {state.step + 1} (epoch {state.epoch}); "
                f"{last_checkpoint_text(checkpoints)}. {DIVERGED_HINT}"
            )
    state.scaler.step(state.optimizer)
    state.scaler.update()
    return {"loss": mean_loss}


@torch.no_grad()
def evaluate(state: WaveGlowState, runtime: Runtime, loader: DataLoader) -> dict[str, float]:
    """``val_loss``: the mean loss over this rank's validation segments, reduced over processes (the
    model unwrapped and in eval mode); ``{}`` without segments."""
    model = state.model
    was_training = model.training
    model.eval()
    total, count = 0.0, 0.0
    for batch in loader:
        audio = batch["audio"].to(runtime.context.device).float()
        loss = negative_log_likelihood(model, runtime.mel_fn, audio, runtime.sigma, runtime.precision)
        total += float(loss) * audio.shape[0]
        count += audio.shape[0]
    total, count = runtime.context.sum_floats([total, count])
    model.train(was_training)
    if count == 0:
        return {}
    return {"val_loss": total / count}
