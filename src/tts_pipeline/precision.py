"""The mixed-precision (AMP) policy, shared by training and inference, on GPUs and CPUs alike.

A config's ``amp`` value is resolved once per device into a :class:`Precision`, which gives the
autocast context for forward passes and, for training, the gradient scaler that fp16 needs. The
values mean the same on both devices where the device can run them:

- ``off``: float32.
- ``bf16``: autocast to bfloat16 (no gradient scaling: bf16 has fp32's range). On a CPU this can pay
  only where the CPU multiplies bf16 natively (x86 AVX512-BF16 or AMX, Arm's BF16 extension), and not
  on every such CPU; elsewhere oneDNN emulates it and it runs slower than fp32, so it is honoured with
  a warning.
- ``fp16``: autocast to float16 with gradient scaling, on CUDA. CPUs have no fast fp16 path in
  PyTorch's oneDNN kernels, so on a CPU it falls back to float32 with a log line.
- ``auto`` (inference's default): float32 on CUDA (where the choice between fp16 and bf16 is the
  user's to make). On a CPU the synthesizer times the ways it can run each model and keeps the
  fastest whose output stays close to float32's (:mod:`tts_pipeline.inference.auto_precision`): a
  CPU that advertises bf16 instructions may still run bf16 slower than float32, so its flags only
  decide which bf16 ways are tried. Here, without the models, ``auto`` resolves as the flags suggest
  (bf16 where advertised), which the training-step benchmarks use.

TF32 is a separate, process-wide switch (:func:`allow_tf32`): on GPUs of compute capability 8.0 or
newer it lets float32 matrix products and convolutions run on tensor cores with a 10-bit mantissa
(what NVIDIA's tables call "TF32" is ``amp`` off with both switches on). CPUs ignore it.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

import torch

from tts_pipeline.cpu import cpu_flags
from tts_pipeline.errors import UserError

log = logging.getLogger(__name__)

AmpMode = Literal["off", "fp16", "bf16"]
AMP_SETTINGS = ("auto", "off", "fp16", "bf16")
_AMP_DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}

# /proc/cpuinfo flags of CPUs with bf16 arithmetic: x86 (AVX512-BF16 dot products, AMX tiles)
# and Arm (the BF16 extension, "bf16" in the Features line).
_NATIVE_BF16_FLAGS = frozenset({"avx512_bf16", "amx_bf16", "bf16"})


def cpu_bf16_instructions() -> tuple[str, ...]:
    """The bf16 instruction sets this machine's CPU reports (empty if none or unknown).

    Read from ``/proc/cpuinfo`` (Linux: x86 ``flags``, Arm ``Features``; :mod:`tts_pipeline.cpu`);
    other systems report none, so ``auto`` tries no bf16 there.
    """
    return tuple(sorted(cpu_flags() & _NATIVE_BF16_FLAGS))


def cpu_runs_bf16_natively() -> bool:
    """True where the CPU advertises bf16 arithmetic (which need not make it faster: module docstring)."""
    return bool(cpu_bf16_instructions())


@dataclass(frozen=True)
class Precision:
    """The mixed-precision policy in force on one device.

    Attributes:
        amp: The effective mode: ``off``, ``fp16`` (autocast + gradient scaling) or ``bf16``
            (autocast, no scaling).
        device: The device the models run on.
        reason: Why this mode, in words (logged, and shown by the benchmark).
        name: How logs and benchmarks name it when its dtype does not say all (the way ``auto`` chose
            to run a model on a CPU: ``"fp32 fused"``, ``"bf16 held"``); empty: the dtype's name.
    """

    amp: AmpMode
    device: torch.device
    reason: str = ""
    name: str = ""

    @property
    def dtype(self) -> torch.dtype:
        """The compute dtype of autocast regions (float32 when AMP is off)."""
        return _AMP_DTYPES.get(self.amp, torch.float32)

    @property
    def label(self) -> str:
        """The name benchmarks and logs use: :attr:`name`, else ``fp32``, ``fp16`` or ``bf16``."""
        return self.name or ("fp32" if self.amp == "off" else self.amp)

    def autocast(self) -> contextlib.AbstractContextManager[object]:
        """Autocast for forward passes and losses (a no-op context when AMP is off)."""
        if self.amp == "off":
            return contextlib.nullcontext()
        return torch.autocast(device_type=self.device.type, dtype=_AMP_DTYPES[self.amp])

    def full_precision(self) -> contextlib.AbstractContextManager[object]:
        """A region that runs in float32 even inside :meth:`autocast` (STFTs, mel losses)."""
        if self.amp == "off":
            return contextlib.nullcontext()
        return torch.autocast(device_type=self.device.type, enabled=False)

    def grad_scaler(self) -> torch.amp.GradScaler:
        """A gradient scaler, enabled only for fp16 (disabled, it passes losses and steps through)."""
        return torch.amp.GradScaler(self.device.type, enabled=self.amp == "fp16")


def resolve_precision(amp: str, device: torch.device, *, key: str = "amp") -> Precision:
    """The precision to use for config value ``amp`` (``auto``, ``off``, ``fp16``, ``bf16``) on ``device``.

    The choice and its reason are logged. bf16 on a GPU without bf16 support is an error naming ``key``.
    """
    if amp not in AMP_SETTINGS:
        raise UserError(f"{key}: expected one of {', '.join(repr(a) for a in AMP_SETTINGS)}, got {amp!r}")
    if device.type == "cuda":
        precision = _cuda_precision(amp, device, key)
    else:
        precision = _cpu_precision(amp, device, key)
    log.info("%s: %s on %s (%s)", key, precision.label, device.type, precision.reason)
    return precision


def _cuda_precision(amp: str, device: torch.device, key: str) -> Precision:
    if amp == "auto":
        return Precision("off", device, "auto: float32 on CUDA unless fp16 or bf16 is chosen")
    if amp == "bf16" and not torch.cuda.is_bf16_supported():
        raise UserError(f"{key}: 'bf16' is not supported by {torch.cuda.get_device_name(device)}; use 'fp16' or 'off'")
    return Precision(amp, device, "as configured")  # type: ignore[arg-type]


def _cpu_precision(amp: str, device: torch.device, key: str) -> Precision:
    native = cpu_bf16_instructions()
    if amp == "off":
        return Precision("off", device, "as configured")
    if amp == "fp16":
        return Precision("off", device, f"{key} fp16 is a CUDA mode; the {device.type} runs float32")
    if amp == "auto":
        if native:
            return Precision("bf16", device, f"auto: the CPU advertises bf16 instructions ({', '.join(native)})")
        return Precision("off", device, "auto: the CPU has no native bf16 (no AVX512-BF16 / AMX / BF16), float32")
    if not native:
        log.warning("%s is 'bf16' but this CPU has no native bf16 (AVX512-BF16 / AMX): it runs emulated, slower", key)
        return Precision("bf16", device, "as configured; emulated, no native bf16 on this CPU")
    return Precision("bf16", device, f"as configured; native ({', '.join(native)})")


def allow_tf32(enabled: bool) -> tuple[bool, bool]:
    """Let float32 matrix products (cuBLAS) and convolutions (cuDNN) run in TF32, or forbid both.

    Returns the previous ``(torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)``
    pair. PyTorch's own defaults differ between the two (matmul off, cuDNN on), so ``False`` is
    strict float32 for convolutions too. A no-op for CPU work.
    """
    previous = (bool(torch.backends.cuda.matmul.allow_tf32), bool(torch.backends.cudnn.allow_tf32))
    torch.backends.cuda.matmul.allow_tf32 = enabled
    torch.backends.cudnn.allow_tf32 = enabled
    return previous


def add_tf32_argument(parser: argparse.ArgumentParser) -> None:
    """The benchmark commands' ``--tf32 {on,off}`` (default off: strict float32 when ``--amp off``)."""
    help_text = "TF32 float32 matmul and convolutions on CUDA (default off)"
    parser.add_argument("--tf32", choices=("on", "off"), default="off", help=help_text)


@contextlib.contextmanager
def tf32_allowed(enabled: bool) -> Iterator[None]:
    """:func:`allow_tf32` for the block; both switches are restored after it."""
    matmul, cudnn = allow_tf32(enabled)
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32 = matmul
        torch.backends.cudnn.allow_tf32 = cudnn
