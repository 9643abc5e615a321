"""WaveGlow's training objective: the negative log-likelihood of the audio under the flow, per sample.

With ``z`` the latent of audio ``x``, ``-log p(x) = |z|^2 / (2 sigma^2) - sum log s - sum log|det W|``
(plus a constant), divided by the number of latent values ``B * n_group * L / n_group`` as NVIDIA's
``WaveGlowLoss`` does. ``sigma`` is the standard deviation of the Gaussian prior (NVIDIA's ``--sigma``,
1.0 in training).
"""

from __future__ import annotations

import torch

from tts_pipeline.models.waveglow.model import WaveGlowOutput


def waveglow_loss(output: WaveGlowOutput, sigma: float = 1.0) -> torch.Tensor:
    """The per-value negative log-likelihood (float32 scalar).

    Args:
        output: :meth:`WaveGlow.forward`'s ``z`` ``(B, n_group, G)``, per-flow ``log_s`` and ``log_det_w``.
        sigma: Standard deviation of the prior (> 0).

    Raises:
        ValueError when ``sigma`` is not positive or no flow is given.
    """
    if not sigma > 0:
        raise ValueError(f"waveglow loss sigma: expected > 0, got {sigma}")
    z, log_s, log_det_w = output
    if not log_s or len(log_s) != len(log_det_w):
        raise ValueError("waveglow loss: expected one log_s and one log_det_w per flow")
    z = z.float()
    log_s_total = torch.stack([item.float().sum() for item in log_s]).sum()
    log_det_total = torch.stack([item.float() for item in log_det_w]).sum()
    nll = (z * z).sum() / (2 * sigma * sigma) - log_s_total - log_det_total
    return nll / z.numel()
