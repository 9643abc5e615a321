"""Losses of the aligner: forward-sum (CTC) over all monotonic paths, and binarisation towards MAS.

- The forward-sum loss treats each token as one CTC label that must be emitted in order, one or
  more frames each, so it maximises the likelihood of every monotonic alignment at once.
- The binarisation loss pulls the soft attention onto its own best hard path (MAS), so that the
  durations read from the hard path agree with what the soft attention learned.
- Its weight ramps up linearly over epochs (:func:`binarization_weight`).
"""

from __future__ import annotations

import numpy as np
import torch
from torch.nn import functional as F

from tts_pipeline.alignment import mas_path

# Log-probability of the CTC blank column; fixed, never learned (as in the reference).
BLANK_LOGPROB = -1.0
# Log-probability of the padded text columns: zero probability in effect, but finite, because CTC's
# backward pass turns a -inf input into NaN gradients that log_softmax then spreads over the row.
_MASKED_LOGPROB = -1e4
# Floor of the soft attention inside logs, so that a zero never makes the loss infinite.
_LOG_FLOOR = 1e-12


def forward_sum_loss(
    attn_logprob: torch.Tensor,
    text_lengths: torch.Tensor,
    mel_lengths: torch.Tensor,
    blank_logprob: float = BLANK_LOGPROB,
) -> torch.Tensor:
    """Forward-sum (CTC) loss.

    Args:
        attn_logprob: ``(B, 1, T_mel, T_text)`` from :class:`~.model.AlignerOutput`.
        text_lengths: ``(B,)`` valid tokens per item (the CTC target lengths).
        mel_lengths: ``(B,)`` valid frames per item (the CTC input lengths).
        blank_logprob: Log-probability given to the prepended blank column.

    Returns:
        Scalar: CTC loss per item divided by its text length, averaged over the batch (torch's
        ``reduction="mean"``); impossible alignments (more tokens than frames) count as 0.
    """
    batch, _, _, n_tokens = attn_logprob.shape
    logprob = F.pad(attn_logprob.float().squeeze(1), (1, 0), value=blank_logprob)  # (B, T_mel, 1 + T_text)
    # Column 0 is the blank, columns 1..text_len the tokens; anything beyond is padding.
    columns = torch.arange(n_tokens + 1, device=logprob.device)[None, None, :]
    logprob = logprob.masked_fill(columns > text_lengths[:, None, None], _MASKED_LOGPROB)
    logprob = F.log_softmax(logprob, dim=2)
    targets = torch.arange(1, n_tokens + 1, device=logprob.device).expand(batch, n_tokens)
    return F.ctc_loss(
        logprob.transpose(0, 1),  # (T_mel, B, 1 + T_text), as CTC expects
        targets,
        input_lengths=mel_lengths,
        target_lengths=text_lengths,
        blank=0,
        reduction="mean",
        zero_infinity=True,
    )


def binarization_loss(attn_hard: torch.Tensor, attn_soft: torch.Tensor) -> torch.Tensor:
    """Mean negative log soft attention on the cells of the hard path.

    Args:
        attn_hard: ``(B, 1, T_mel, T_text)`` 0/1 hard alignment (zero outside valid cells).
        attn_soft: ``(B, 1, T_mel, T_text)`` soft attention.

    Returns:
        Scalar ``-sum(log(max(attn_soft, 1e-12)) at hard cells) / sum(attn_hard)``.
    """
    on_path = attn_hard.bool()
    log_soft = torch.log(torch.clamp(attn_soft.float()[on_path], min=_LOG_FLOOR))
    return -log_soft.sum() / attn_hard.sum().clamp_min(1)


def binarization_weight(epoch: int, start_epoch: int, warmup_epochs: int) -> float:
    """Weight of the binarisation loss in ``epoch`` (counted from 1): ``min((epoch - start) / warmup, 1)``,
    0 before ``start_epoch``. With start 0 and warmup 100, epoch 1 gets 0.01."""
    if epoch < start_epoch:
        return 0.0
    return min((epoch - start_epoch) / warmup_epochs, 1.0)


def hard_alignment(attn_soft: torch.Tensor, text_lengths: torch.Tensor, mel_lengths: torch.Tensor) -> torch.Tensor:
    """Monotonic alignment search on each item's soft attention.

    Args:
        attn_soft: ``(B, 1, T_mel, T_text)`` soft attention (only read, no gradient).
        text_lengths: ``(B,)`` valid tokens per item.
        mel_lengths: ``(B,)`` valid frames per item.

    Returns:
        ``(B, 1, T_mel, T_text)`` 0/1 tensor on the device and dtype of ``attn_soft``: one token per
        valid frame, monotonic, zero on padding.
    """
    log_attn = torch.log(attn_soft.detach().float().clamp_min(torch.finfo(torch.float32).tiny)).cpu().numpy()
    hard = np.zeros(log_attn.shape, dtype=np.float32)
    for index, (n_tokens, n_frames) in enumerate(zip(text_lengths.tolist(), mel_lengths.tolist(), strict=True)):
        hard[index, 0, :n_frames, :n_tokens] = mas_path(log_attn[index, 0, :n_frames, :n_tokens])
    return torch.from_numpy(hard).to(device=attn_soft.device, dtype=attn_soft.dtype)
