"""Where a benchmark ran: device and its name, PyTorch and CUDA versions, threads, TF32, platform."""

from __future__ import annotations

import platform
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch


def environment(device: torch.device, tf32: dict[str, bool]) -> dict[str, Any]:
    """The report's ``environment`` section for a run on ``device`` with these TF32 flags."""
    import torch

    return {
        "device": str(device),
        "device_name": torch.cuda.get_device_name(device) if device.type == "cuda" else cpu_name(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "threads": torch.get_num_threads(),
        "tf32": tf32,
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def cpu_name() -> str:
    """The CPU model (Linux ``/proc/cpuinfo``), else what :mod:`platform` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "CPU"
