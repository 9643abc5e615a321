"""Where a benchmark ran: device and its name, PyTorch and CUDA versions, threads, TF32, platform."""

from __future__ import annotations

import platform
from typing import TYPE_CHECKING, Any

# The CPU model (Linux ``/proc/cpuinfo``), else what platform knows: named here for the benchmark's commands.
from tts_pipeline.cpu import cpu_model_name as cpu_name

if TYPE_CHECKING:
    import torch


def environment(device: torch.device, tf32: dict[str, bool]) -> dict[str, Any]:
    """The report's ``environment`` section for a run on ``device`` with these TF32 flags."""
    import torch

    return {
        "device": str(device),
        "device_name": device_name(device),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "threads": torch.get_num_threads(),
        "tf32": tf32,
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def command_environment(device: torch.device, precision: str, tf32: str) -> dict[str, Any]:
    """The first keys of a ``bench-*`` command's JSON: the device and its name, torch's threads, the
    precision label and the command's ``--tf32`` switch (the command's own settings follow)."""
    import torch

    return {
        "device": str(device),
        "threads": torch.get_num_threads(),
        "device_name": device_name(device),
        "precision": precision,
        "tf32": tf32,
    }


def device_name(device: torch.device) -> str:
    """The GPU's name for a CUDA device, else the CPU model (:func:`tts_pipeline.cpu.cpu_model_name`)."""
    import torch

    return torch.cuda.get_device_name(device) if device.type == "cuda" else cpu_name()
