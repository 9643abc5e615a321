"""What this machine's CPU is, as Linux's ``/proc/cpuinfo`` says: its model name and its feature flags.

The benchmarks report the model name; ``inference.amp: auto`` keys what it measured by it, and tries
bf16 only where the flags advertise bf16 arithmetic (:mod:`tts_pipeline.precision`). Standard library
only: the speech server's tools import it without torch.
"""

from __future__ import annotations

import functools
import platform
from pathlib import Path


@functools.cache
def _cpuinfo() -> dict[str, str]:
    """``/proc/cpuinfo``'s fields of the first processor, by name (empty off Linux)."""
    cpuinfo = Path("/proc/cpuinfo")
    if platform.system() != "Linux" or not cpuinfo.is_file():
        return {}
    fields: dict[str, str] = {}
    for line in cpuinfo.read_text(errors="replace").splitlines():
        name, _, value = line.partition(":")
        fields.setdefault(name.strip(), value.strip())
    return fields


def cpu_model_name() -> str:
    """The CPU model (``model name``), else what :mod:`platform` knows."""
    return _cpuinfo().get("model name") or platform.processor() or platform.machine() or "CPU"


def cpu_flags() -> frozenset[str]:
    """The CPU's feature flags (x86 ``flags``, Arm ``Features``); empty where unknown."""
    info = _cpuinfo()
    return frozenset(info.get("flags", "").split()) | frozenset(info.get("Features", "").split())
