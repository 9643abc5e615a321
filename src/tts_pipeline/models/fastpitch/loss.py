"""FastPitch's objective (reference 3.4): mel MSE + scale x (log-duration, pitch, energy) MSE.

Every term is a mean over real elements only (frames for the mel, tokens for the rest), so padding
does not change the loss. Scales are arguments; the recipe's are 0.1 each.
"""

from __future__ import annotations

from typing import NamedTuple

import torch

from tts_pipeline.models.fastpitch.model import FastPitchInputs, FastPitchOutput
from tts_pipeline.models.fastpitch.transformer import lengths_to_mask


class FastPitchLossTerms(NamedTuple):
    """The loss and its parts (scalars).

    Attributes:
        total: ``mel + duration_scale * duration + pitch_scale * pitch (+ energy_scale * energy)``.
        mel: Masked MSE of the log-mels.
        duration: MSE of ``log(d + 1)`` over real tokens (unscaled).
        pitch: MSE of normalised pitch over real tokens (unscaled).
        energy: MSE of ``log(1 + energy)`` over real tokens (unscaled), or None without energy.
        duration_error: Mean ``|d_pred - d_target|`` in frames over real tokens (a metric; no gradient).
    """

    total: torch.Tensor
    mel: torch.Tensor
    duration: torch.Tensor
    pitch: torch.Tensor
    energy: torch.Tensor | None
    duration_error: torch.Tensor


def _masked_mse(prediction: torch.Tensor, target: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean squared error over the elements where ``mask`` (broadcastable to the inputs) is True."""
    weight = mask.to(torch.float32).expand_as(prediction)
    return ((prediction.float() - target.float()) ** 2 * weight).sum() / weight.sum().clamp_min(1.0)


def fastpitch_loss(
    output: FastPitchOutput,
    inputs: FastPitchInputs,
    target_mel: torch.Tensor,
    mel_lengths: torch.Tensor,
    *,
    duration_scale: float = 0.1,
    pitch_scale: float = 0.1,
    energy_scale: float = 0.1,
) -> FastPitchLossTerms:
    """FastPitch's training loss, computed in float32.

    Args:
        output: The teacher-forced forward of ``inputs``.
        inputs: The batch (targets: durations, pitch, energy).
        target_mel: ``(B, n_mels, T)`` ground-truth log-mels, zero-padded; ``output.mel`` must have the
            same shape (call the model with ``mel_max_len=T``).
        mel_lengths: ``(B,)`` real frames per item.
        duration_scale, pitch_scale, energy_scale: Weights of the predictor terms.
    """
    if output.mel.shape != target_mel.shape:
        raise ValueError(
            f"mel shapes differ: predicted {tuple(output.mel.shape)}, target {tuple(target_mel.shape)} "
            "(run the model with mel_max_len=target_mel.shape[-1])"
        )
    # Frames are masked by length, not by ``target != 0`` as NVIDIA does: 0 is a legitimate log-mel
    # value (a magnitude of exactly 1), and the lengths say exactly which frames are padding.
    frame_mask = lengths_to_mask(mel_lengths, target_mel.shape[-1]).unsqueeze(1)  # (B, 1, T)
    mel = _masked_mse(output.mel, target_mel, frame_mask)

    token_mask = output.token_mask
    duration = _masked_mse(output.log_duration, torch.log1p(inputs.durations.float()), token_mask)
    pitch = _masked_mse(output.pitch, inputs.pitch, token_mask)
    total = mel + duration_scale * duration + pitch_scale * pitch
    energy = None
    if output.energy is not None:
        if inputs.energy is None:
            raise ValueError("energy: the model predicts energy but the batch has no energy target")
        energy = _masked_mse(output.energy, inputs.energy, token_mask)
        total = total + energy_scale * energy

    with torch.no_grad():
        predicted = (torch.exp(output.log_duration.float()) - 1.0).clamp_min(0.0)
        error = (predicted - inputs.durations.float()).abs() * token_mask
        duration_error = error.sum() / token_mask.sum().clamp_min(1)
    return FastPitchLossTerms(total, mel, duration, pitch, energy, duration_error)
