"""The aligner's losses on a batch (forward-sum CTC + ramped binarisation), one optimiser step, and the
validation on the same losses."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch.utils.data import DataLoader

from tts_pipeline.config import AlignerConfig
from tts_pipeline.models.aligner.data import AlignerBatch
from tts_pipeline.models.aligner.loss import binarization_loss, forward_sum_loss, hard_alignment
from tts_pipeline.models.aligner.model import Aligner, AlignerOutput
from tts_pipeline.precision import Precision
from tts_pipeline.training.aligner.state import AlignerState
from tts_pipeline.training.checkpoint import CheckpointManager
from tts_pipeline.training.engine import TrainingDiverged, last_checkpoint_text


@dataclass
class AlignerLosses:
    """Scalar losses of one batch: ``total = ctc + kl_weight * bin``."""

    total: torch.Tensor
    ctc: torch.Tensor
    bin: torch.Tensor

    def figures(self) -> dict[str, float]:
        """The step's figures: ``loss``, ``ctc``, ``bin``."""
        return {"loss": float(self.total.detach()), "ctc": float(self.ctc.detach()), "bin": float(self.bin.detach())}


def compute_losses(
    model: Aligner, batch: AlignerBatch, kl_weight: float, precision: Precision
) -> tuple[AlignerOutput, AlignerLosses]:
    """Forward pass and losses of one batch (already on the model's device).

    The forward runs under ``precision``'s autocast; the losses outside it, in float32. The
    binarisation loss needs MAS on the CPU; it is skipped while its weight is 0.
    """
    device = batch.mels.device
    with precision.autocast():
        output = model(batch.text, batch.text_lengths, batch.mels, batch.prior)
    ctc = forward_sum_loss(output.attn_logprob, batch.text_lengths, batch.mel_lengths)
    if kl_weight > 0:
        hard = hard_alignment(output.attn_soft, batch.text_lengths, batch.mel_lengths)
        bin_loss = binarization_loss(hard, output.attn_soft)
    else:
        bin_loss = torch.zeros((), device=device)
    return output, AlignerLosses(total=ctc + kl_weight * bin_loss, ctc=ctc, bin=bin_loss)


def _diverged(state: AlignerState, manager: CheckpointManager, what: str) -> TrainingDiverged:
    last = last_checkpoint_text(manager.paths())
    return TrainingDiverged(
        f"train_aligner: non-finite {what} at step {state.step + 1} (epoch {state.epoch}); {last}. "
        "Try a lower aligner.learning_rate or aligner.grad_clip, or amp: off."
    )


def train_step(
    state: AlignerState,
    batch: AlignerBatch,
    kl_weight: float,
    cfg: AlignerConfig,
    manager: CheckpointManager,
    precision: Precision,
) -> AlignerLosses:
    """One optimiser step (the loop then advances the counters); raises :class:`TrainingDiverged` on a
    NaN/Inf loss, or a non-finite gradient norm without fp16 scaling (nothing is updated)."""
    state.optimizer.zero_grad(set_to_none=True)
    _, losses = compute_losses(state.model, batch, kl_weight, precision)
    if not torch.isfinite(losses.total):
        ctc, bin_loss = float(losses.ctc.detach()), float(losses.bin.detach())
        raise _diverged(state, manager, f"loss (ctc {ctc}, binarisation {bin_loss})")
    state.scaler.scale(losses.total).backward()
    state.scaler.unscale_(state.optimizer)
    norm = torch.nn.utils.clip_grad_norm_(state.model.parameters(), cfg.grad_clip)
    if not torch.isfinite(norm) and not state.scaler.is_enabled():
        # With fp16 scaling an overflow now and then is expected: the scaler skips the step and lowers
        # its scale. Without it (fp32, bf16) a non-finite gradient is divergence.
        raise _diverged(state, manager, "gradient norm")
    state.scaler.step(state.optimizer)
    state.scaler.update()
    return losses


def attention_sharpness(attn_soft: torch.Tensor, mel_lengths: torch.Tensor) -> torch.Tensor:
    """Sum over valid frames of the largest attention weight of each frame (``(B, 1, T_mel, T_text)`` in).

    Divided by the number of frames this is near 1/T_text for a flat attention and 1 for a hard one.
    """
    best = attn_soft.squeeze(1).amax(dim=2)  # (B, T_mel)
    valid = torch.arange(best.shape[1], device=best.device)[None, :] < mel_lengths[:, None]
    return (best * valid).sum()


@torch.no_grad()
def evaluate(model: Aligner, loader: DataLoader, kl_weight: float, device: torch.device, precision: Precision) -> dict:
    """Validation figures: item-weighted mean ``val_loss``, ``val_ctc``, ``val_bin``, and ``val_attn_max``
    (mean over frames of each frame's largest attention weight)."""
    was_training = model.training
    model.eval()
    sums = {"val_loss": 0.0, "val_ctc": 0.0, "val_bin": 0.0}
    items = frames = 0
    sharpness = 0.0
    for batch in loader:
        batch = batch.to(device)
        # The binarisation loss is computed even before it is weighted in, so that its curve starts at once.
        output, losses = compute_losses(model, batch, max(kl_weight, 1e-6), precision)
        size = len(batch.ids)
        sums["val_ctc"] += float(losses.ctc) * size
        sums["val_bin"] += float(losses.bin) * size
        sums["val_loss"] += float(losses.ctc + kl_weight * losses.bin) * size
        sharpness += float(attention_sharpness(output.attn_soft, batch.mel_lengths))
        items += size
        frames += int(batch.mel_lengths.sum())
    model.train(was_training)
    if items == 0:
        return {}
    return {**{key: value / items for key, value in sums.items()}, "val_attn_max": sharpness / max(frames, 1)}
