"""Tacotron 2's objective, as NVIDIA's recipe computes it: MSE of the decoder mel and of the postnet
mel against the target, plus the binary cross-entropy (with logits) of the stop gate.

Every term is a plain mean over the padded batch, padding included, as in NVIDIA's ``Tacotron2Loss``:
with the model's ``mask_padding`` the padded frames predict exactly the padded targets (mel 0, gate
logit 1000 against gate 1), so they add nothing but still count in the means. The scale of the loss
therefore depends on the padding, which is what NVIDIA's published learning rates were tuned with.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch.nn import functional as F

from tts_pipeline.models.tacotron2.model import Tacotron2Output, lengths_to_mask


class Tacotron2LossTerms(NamedTuple):
    """The loss and its parts (float32 scalars).

    Attributes:
        total: ``mel + mel_postnet + gate``.
        mel: MSE of the decoder's mel (before the postnet).
        mel_postnet: MSE of the mel after the postnet.
        gate: Binary cross-entropy of the stop-gate logits.
    """

    total: torch.Tensor
    mel: torch.Tensor
    mel_postnet: torch.Tensor
    gate: torch.Tensor


def gate_targets(mel_lengths: torch.Tensor, n_frames: int) -> torch.Tensor:
    """``(B, n_frames)`` float stop targets: 1 from each item's last real frame on, 0 before
    (NVIDIA's collate: the last frame is where the decoder should stop)."""
    if int(mel_lengths.min()) < 1 or int(mel_lengths.max()) > n_frames:
        raise ValueError(f"mel_lengths must be in [1, {n_frames}], got {mel_lengths.tolist()}")
    return (~lengths_to_mask(mel_lengths - 1, n_frames)).to(torch.float32)


def tacotron2_loss(output: Tacotron2Output, mel_target: torch.Tensor, gate_target: torch.Tensor) -> Tacotron2LossTerms:
    """Tacotron 2's training loss, in float32.

    Args:
        output: The teacher-forced forward of the batch.
        mel_target: ``(B, n_mels, T)`` ground-truth log-mels, zero-padded.
        gate_target: ``(B, T)`` stop targets (:func:`gate_targets`).
    """
    if output.mel.shape != mel_target.shape or output.gate.shape != gate_target.shape:
        raise ValueError(
            f"shapes differ: mel {tuple(output.mel.shape)} vs target {tuple(mel_target.shape)}, "
            f"gate {tuple(output.gate.shape)} vs target {tuple(gate_target.shape)}"
        )
    target = mel_target.float()
    mel = F.mse_loss(output.mel.float(), target)
    mel_postnet = F.mse_loss(output.mel_postnet.float(), target)
    gate = F.binary_cross_entropy_with_logits(output.gate.float(), gate_target.float())
    return Tacotron2LossTerms(mel + mel_postnet + gate, mel, mel_postnet, gate)
