"""The mixed-precision (AMP) policy, shared by training and inference.

A config's ``amp`` value (``off``, ``fp16``, ``bf16``) is resolved once per device into a
:class:`Precision`, which gives the autocast context for forward passes and, for training, the
gradient scaler that fp16 needs.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass
from typing import Literal

import torch

from tts_pipeline.errors import UserError

log = logging.getLogger(__name__)

AmpMode = Literal["off", "fp16", "bf16"]
_AMP_DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}


@dataclass(frozen=True)
class Precision:
    """The mixed-precision policy in force on one device.

    Attributes:
        amp: The effective mode: ``off``, ``fp16`` (autocast + gradient scaling) or ``bf16``
            (autocast, no scaling: bf16 has fp32's range).
        device: The device the models run on.
    """

    amp: AmpMode
    device: torch.device

    def autocast(self) -> contextlib.AbstractContextManager[object]:
        """Autocast for forward passes and losses (a no-op context when AMP is off)."""
        if self.amp == "off":
            return contextlib.nullcontext()
        return torch.autocast(device_type=self.device.type, dtype=_AMP_DTYPES[self.amp])

    def grad_scaler(self) -> torch.amp.GradScaler:
        """A gradient scaler, enabled only for fp16 (disabled, it passes losses and steps through)."""
        return torch.amp.GradScaler(self.device.type, enabled=self.amp == "fp16")


def resolve_precision(amp: str, device: torch.device, *, key: str = "amp") -> Precision:
    """The precision to use for config value ``amp`` on ``device``.

    AMP is a CUDA feature here: on the CPU it is switched off with a log line (the config stays
    valid for GPU and CPU runs alike). bf16 on a GPU without bf16 support is an error naming ``key``.
    """
    if amp not in ("off", "fp16", "bf16"):
        raise UserError(f"{key}: expected 'off', 'fp16' or 'bf16', got {amp!r}")
    if amp != "off" and device.type != "cuda":
        log.info("%s is %r but training runs on the %s; AMP is off", key, amp, device.type)
        return Precision("off", device)
    if amp == "bf16" and not torch.cuda.is_bf16_supported():
        raise UserError(f"{key}: 'bf16' is not supported by {torch.cuda.get_device_name(device)}; use 'fp16' or 'off'")
    return Precision(amp, device)  # type: ignore[arg-type]
