"""Print the machine as JSON: GPU, driver, CUDA, cuDNN, NCCL, torch, Python, CPU, and the versions of
the image's packages that the kit was resolved against (``tools/gpu-kit/image.txt``).

Run with the Python under test (the GPU image's, or the rehearsal's), before the kit is installed:
it needs torch and the standard library only.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

IMAGE_LIST = Path("tools/gpu-kit/image.txt")


def nvidia_smi() -> dict[str, str]:
    """Name, driver and memory of each GPU as nvidia-smi reports them (empty without nvidia-smi)."""
    if shutil.which("nvidia-smi") is None:
        return {}
    query = "name,driver_version,memory.total"
    try:
        out = subprocess.run(
            ["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=10, check=True,
        ).stdout.strip()
    except (subprocess.SubprocessError, OSError) as error:
        return {"nvidia_smi_error": str(error)}
    return {"nvidia_smi": out.replace("\n", "; ")}


def torch_facts() -> dict[str, object]:
    import torch

    facts: dict[str, object] = {
        "torch": torch.__version__,
        "cuda_build": torch.version.cuda,
        "cuda_available": torch.cuda.is_available(),
    }
    if torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        facts.update(
            gpu=torch.cuda.get_device_name(0),
            gpu_count=torch.cuda.device_count(),
            capability=".".join(map(str, torch.cuda.get_device_capability(0))),
            gpu_memory_gib=round(props.total_memory / 2**30, 1),
            multiprocessors=props.multi_processor_count,
            cudnn=torch.backends.cudnn.version(),
            nccl=".".join(map(str, torch.cuda.nccl.version())),
            bf16_supported=torch.cuda.is_bf16_supported(),
        )
    return facts


def image_packages() -> dict[str, object]:
    """Installed version of each package of the image list, and the lines where it differs."""
    if not IMAGE_LIST.exists():
        return {}
    installed, differs = {}, []
    for line in IMAGE_LIST.read_text().splitlines():
        match = re.match(r"\s*([A-Za-z0-9_.\-]+)==([^\s#;]+)\s*(?:;([^#]*))?", line)
        if not match or (match.group(3) and not _marker_holds(match.group(3))):
            continue
        name, pinned = match.group(1), match.group(2)
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            version = "missing"
        installed[name] = version
        if version.split("+")[0] != pinned:
            differs.append(f"{name}: {version} here, {pinned} in {IMAGE_LIST}")
    return {"image_packages": installed, "image_list_differs": differs}


def _marker_holds(marker: str) -> bool:
    """Whether an environment marker (``python_version >= "3.12"``) holds for this Python."""
    try:
        from packaging.markers import Marker
    except ImportError:  # the image has packaging; a bare venv has pip's copy
        from pip._vendor.packaging.markers import Marker
    return Marker(marker.strip()).evaluate()


def main() -> None:
    facts: dict[str, object] = {
        "python": platform.python_version(),
        "python_executable": sys.executable,
        "platform": platform.platform(),
        "cpu": _cpu_name(),
        "cpu_count": os.cpu_count(),
    }
    facts.update(nvidia_smi())
    facts.update(torch_facts())
    facts.update(image_packages())
    print(json.dumps(facts))


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


if __name__ == "__main__":
    main()
