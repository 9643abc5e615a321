"""FastPitch's optimisers: LAMB set up to follow apex's FusedLAMB (what the recipe uses, reference 3.7), or
Adam in its decoupled-decay form (apex FusedAdam's default, the recipe's alternative).

LAMB comes from the ``pytorch-optimizer`` package (``pytorch_optimizer.Lamb``), which runs on any device;
apex's FusedLAMB needs apex's CUDA extensions. How the two compare, per optimiser step, with
``g`` the gradients, ``m``/``v`` the moments, ``p`` a parameter tensor, ``wd`` the weight decay:

===========================  ==========================================  ==========================================
step                         apex FusedLAMB (defaults the recipe keeps)  pytorch_optimizer.Lamb as set up here
===========================  ==========================================  ==========================================
global gradient clip         ``g *= min(1, 1 / ||g||)`` (max_grad_norm   ``pre_norm=True, max_grad_norm=1``: the
                             1.0 inside the optimiser)                   same, with ``||g|| + eps``
moments                      ``m = b1 m + (1 - b1) g``,                  the same (``grad_averaging=True``)
                             ``v = b2 v + (1 - b2) g^2``
bias correction              ``m / (1 - b1^t)`` and ``v / (1 - b2^t)``   none on the direction (see below);
                                                                         ``adam_debias=True`` keeps the step
                                                                         size at ``lr`` (the package's default
                                                                         divides it by ``1 - b1^t``)
direction ``u``              ``m_hat / (sqrt(v_hat) + eps) + wd p``      ``m / (sqrt(v) + eps) + wd p``
                             (adam_w_mode: decay added to the update)    (``weight_decouple=False``)
trust ratio                  ``||p|| / ||u||`` when both are non-zero    ``||p|| / (||u|| + eps)``; the weight
                             and ``wd != 0`` (use_nvlamb off)            norm is not clamped (the package clamps
                                                                         it at 10 unless told otherwise)
update                       ``p -= lr * ratio * u``                     the same
===========================  ==========================================  ==========================================

What differs, and why it hardly matters:

- Bias correction multiplies apex's Adam direction by the per-step scalar ``sqrt(1 - b2^t) / (1 - b1^t)``;
  the trust ratio rescales the direction to ``||p||`` anyway, so the scalar cancels. What remains is its
  weight against ``eps`` (elements whose ``sqrt(v)`` is near eps = 1e-9) and against the decay term
  ``wd p`` (1e-6 of the weights); ``tests/stages/test_train_fastpitch.py`` checks the parameters after a few
  steps against apex's formulas.
- With ``wd = 0`` apex skips the trust ratio (plain Adam steps) while this LAMB keeps it; the recipe's
  decay is 1e-6, so both apply it.
- ``eps`` also enters the gradient-clip and trust-ratio denominators here (1e-9: no effect).

The training loop still clips the global norm at ``fastpitch.grad_clip`` (1000) before the step, as the
recipe does; the optimiser's own normalisation to norm 1 then applies on top, as in apex.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Protocol

import torch
from torch import nn

from tts_pipeline.errors import UserError

OPTIMIZERS = ("lamb", "adam")


def lamb(
    parameters: Iterable[nn.Parameter],
    *,
    lr: float,
    betas: tuple[float, float],
    eps: float,
    weight_decay: float,
    max_grad_norm: float = 1.0,
) -> torch.optim.Optimizer:
    """LAMB configured as apex's FusedLAMB (module docstring)."""
    from pytorch_optimizer import Lamb

    optimizer = Lamb(
        parameters,
        lr=lr,
        betas=betas,
        eps=eps,
        weight_decay=weight_decay,
        weight_decouple=False,
        grad_averaging=True,
        pre_norm=max_grad_norm > 0,
        max_grad_norm=max_grad_norm,
        adam_debias=True,
    )
    # The package caps ||p|| at 10 in the trust ratio (the LAMB paper's phi); apex applies no cap.
    optimizer.clamp = math.inf
    return optimizer


class OptimizerSettings(Protocol):
    """The config fields that choose and set up the optimiser (``fastpitch.*``)."""

    optimizer: str
    betas: tuple[float, float]
    eps: float
    weight_decay: float


def build_optimizer(
    parameters: Iterable[nn.Parameter], cfg: OptimizerSettings, *, lr: float, key: str = "fastpitch.optimizer"
) -> torch.optim.Optimizer:
    """``cfg.optimizer`` ``"lamb"`` (:func:`lamb`) or ``"adam"`` (``torch.optim.AdamW``: decay decoupled
    from the moments, as apex FusedAdam's default ``adam_w_mode``), starting at rate ``lr``.
    Raises UserError naming ``key`` for another kind."""
    betas = (float(cfg.betas[0]), float(cfg.betas[1]))
    if cfg.optimizer == "lamb":
        return lamb(parameters, lr=lr, betas=betas, eps=cfg.eps, weight_decay=cfg.weight_decay)
    if cfg.optimizer == "adam":
        return torch.optim.AdamW(parameters, lr=lr, betas=betas, eps=cfg.eps, weight_decay=cfg.weight_decay)
    raise UserError(f"{key}: expected one of {', '.join(OPTIMIZERS)}, got {cfg.optimizer!r}")
