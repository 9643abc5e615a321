"""Tacotron 2's objective, as NVIDIA's recipe computes it: MSE of the decoder mel and of the postnet
mel against the target, plus the binary cross-entropy (with logits) of the stop gate; optionally a
guided-attention term (not NVIDIA's) that pulls the attention towards the diagonal.

Every term is a plain mean over the padded batch, padding included, as in NVIDIA's ``Tacotron2Loss``:
with the model's ``mask_padding`` the padded frames predict exactly the padded targets (mel 0, gate
logit 1000 against gate 1), so they add nothing but still count in the means. The scale of the loss
therefore depends on the padding, which is what NVIDIA's published learning rates were tuned with.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch.nn import functional as F

from tts_pipeline.models.tacotron2.layers import lengths_to_mask
from tts_pipeline.models.tacotron2.model import Tacotron2Output


class Tacotron2LossTerms(NamedTuple):
    """The loss and its parts (float32 scalars).

    Attributes:
        total: ``mel + mel_postnet + gate + attention_weight * attention``.
        mel: MSE of the decoder's mel (before the postnet).
        mel_postnet: MSE of the mel after the postnet.
        gate: Binary cross-entropy of the stop-gate logits.
        attention: The attention's mass off the diagonal (:func:`off_diagonal_attention`), always
            computed: near 0 once the attention has learnt a monotonic alignment, about 0.6-0.8 while
            it is spread over the text, so its curve shows when the alignment forms.
    """

    total: torch.Tensor
    mel: torch.Tensor
    mel_postnet: torch.Tensor
    gate: torch.Tensor
    attention: torch.Tensor


def gate_targets(mel_lengths: torch.Tensor, n_frames: int, frames_per_step: int = 1) -> torch.Tensor:
    """``(B, n_frames)`` float stop targets: 1 from each item's last real frame on, 0 before
    (NVIDIA's collate: the last frame is where the decoder should stop).

    With ``frames_per_step`` r > 1 a decoder step makes r frames and has one gate, which the decoder
    repeats over them: the targets are 1 from the first frame of the step that holds the last real
    frame, so every frame of a step has the same target.
    """
    if int(mel_lengths.min()) < 1 or int(mel_lengths.max()) > n_frames:
        raise ValueError(f"mel_lengths must be in [1, {n_frames}], got {mel_lengths.tolist()}")
    last_step_start = (mel_lengths - 1) // frames_per_step * frames_per_step
    return (~lengths_to_mask(last_step_start, n_frames)).to(torch.float32)


def off_diagonal_attention(
    alignments: torch.Tensor, text_lengths: torch.Tensor, mel_lengths: torch.Tensor, sigma: float
) -> torch.Tensor:
    """Guided attention (Tachibana et al., 2017): the attention weight of each decoder frame placed off
    the diagonal, weighted by ``1 - exp(-(n / N - t / T)^2 / (2 sigma^2))``, summed over symbols and
    averaged over the real frames of the batch (float32 scalar).

    A speech alignment is close to the line from (first symbol, first frame) to (last symbol, last
    frame); attention learnt from scratch starts spread over the whole text and needs thousands of
    steps to find that line without help. ``sigma`` (a fraction of the text and of the utterance) is
    how far from the line attention goes unpenalised: speaking rate varies within an utterance.

    Args:
        alignments: ``(B, T, N)`` attention weights, rows summing to 1 over the item's symbols.
        text_lengths: ``(B,)`` symbols per item (``N_b``).
        mel_lengths: ``(B,)`` frames per item (``T_b``).
        sigma: Width of the unpenalised band, > 0.
    """
    batch, frames, symbols = alignments.shape
    if text_lengths.shape != (batch,) or mel_lengths.shape != (batch,):
        raise ValueError(
            f"expected text and mel lengths of shape ({batch},), got {tuple(text_lengths.shape)} and "
            f"{tuple(mel_lengths.shape)}"
        )
    device = alignments.device
    # Normalised positions: frame t of item b at t / T_b, symbol n at n / N_b; (B, T, 1) and (B, 1, N).
    t = torch.arange(frames, device=device, dtype=torch.float32)[None, :, None] / mel_lengths[:, None, None].float()
    n = torch.arange(symbols, device=device, dtype=torch.float32)[None, None, :] / text_lengths[:, None, None].float()
    weights = 1.0 - torch.exp(-((n - t) ** 2) / (2.0 * sigma**2))
    real = lengths_to_mask(mel_lengths, frames)[:, :, None] & lengths_to_mask(text_lengths, symbols)[:, None, :]
    per_frame = (alignments.float() * weights * real).sum(dim=2)  # (B, T)
    return per_frame.sum() / mel_lengths.sum().clamp(min=1).float()


def tacotron2_loss(
    output: Tacotron2Output,
    mel_target: torch.Tensor,
    gate_target: torch.Tensor,
    text_lengths: torch.Tensor,
    mel_lengths: torch.Tensor,
    *,
    attention_weight: float = 0.0,
    attention_sigma: float = 0.2,
) -> Tacotron2LossTerms:
    """Tacotron 2's training loss, in float32: NVIDIA's when ``attention_weight`` is 0 (the default).

    Args:
        output: The teacher-forced forward of the batch.
        mel_target: ``(B, n_mels, T)`` ground-truth log-mels, zero-padded.
        gate_target: ``(B, T)`` stop targets (:func:`gate_targets`).
        text_lengths: ``(B,)`` symbols per item.
        mel_lengths: ``(B,)`` frames per item.
        attention_weight: Weight of the guided-attention term in the total.
        attention_sigma: Its band width (:func:`off_diagonal_attention`).
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
    attention = off_diagonal_attention(output.alignments, text_lengths, mel_lengths, attention_sigma)
    total = mel + mel_postnet + gate
    if attention_weight:
        total = total + attention_weight * attention
    return Tacotron2LossTerms(total, mel, mel_postnet, gate, attention)
