"""GPU leasing: each job gets its own device ids.

Snakemake counts GPUs (``resources: gpu=N``) but never says which ones a job should use, so two
concurrent GPU jobs would both land on GPU 0. A job here leases N distinct ids from the machine's
pool before it starts and runs with ``CUDA_VISIBLE_DEVICES`` set to them.

A lease is one lock file per device in a lock folder shared by the jobs of one user on one machine,
locked with ``flock``. The kernel releases such locks when the holding process ends, however it
ends (even SIGKILL), so a crashed job never strands a device. A lease is all-or-nothing: a job that
cannot get all N devices takes none and waits, so two jobs never each hold half of what they need.

The pool is ``$TTS_GPU_POOL`` (``"0,1,2,3"``: simulation, or reserving a subset), else an existing
``$CUDA_VISIBLE_DEVICES`` (what the job was given), else every GPU ``nvidia-smi -L`` lists.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from tts_pipeline.errors import UserError

if TYPE_CHECKING:
    import torch

log = logging.getLogger(__name__)

ENV_POOL = "TTS_GPU_POOL"
ENV_LOCK_DIR = "TTS_GPU_LOCK_DIR"
CUDA_VISIBLE_DEVICES = "CUDA_VISIBLE_DEVICES"

DEFAULT_TIMEOUT_S = 600.0
DEFAULT_POLL_S = 0.5


class GpuLeaseError(UserError):
    """A job cannot get the GPUs it asked for."""


class GpuLeaseTimeout(GpuLeaseError):
    """Not enough devices became free before the timeout."""


# --------------------------------------------------------------------------------------------------
# the pool
# --------------------------------------------------------------------------------------------------


def parse_device_list(raw: str) -> list[str]:
    """``"0, 1,2"`` -> ``["0", "1", "2"]``. Like CUDA, stops at a negative id (``"-1"`` = none)."""
    devices: list[str] = []
    for entry in raw.split(","):
        entry = entry.strip()
        if not entry:
            continue
        if entry.startswith("-"):
            break
        if entry not in devices:
            devices.append(entry)
    return devices


def count_nvidia_gpus() -> int:
    """Number of GPUs ``nvidia-smi -L`` lists; 0 without the tool or a driver."""
    executable = shutil.which("nvidia-smi")
    if executable is None:
        return 0
    try:
        result = subprocess.run([executable, "-L"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError) as error:
        log.debug("nvidia-smi -L failed: %s", error)
        return 0
    if result.returncode != 0:
        log.debug("nvidia-smi -L exited with %d: %s", result.returncode, result.stderr.strip())
        return 0
    # "GPU 0: NVIDIA H100 ... (UUID: ...)"; MIG instances are indented lines beneath and not counted.
    return sum(1 for line in result.stdout.splitlines() if line.startswith("GPU "))


def gpu_pool(environ: Mapping[str, str] | None = None) -> list[str]:
    """The device ids jobs on this machine may lease (see the module docstring for the order)."""
    env = os.environ if environ is None else environ
    if ENV_POOL in env:
        return parse_device_list(env[ENV_POOL])
    if CUDA_VISIBLE_DEVICES in env:
        return parse_device_list(env[CUDA_VISIBLE_DEVICES])
    return [str(index) for index in range(count_nvidia_gpus())]


def default_lock_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``$TTS_GPU_LOCK_DIR``, else a per-user folder in the temp dir.

    Inside a Slurm job the folder is per job: Slurm renumbers the devices of each allocation from 0,
    so the same id means different GPUs in two jobs, and Slurm already keeps their devices apart.
    """
    env = os.environ if environ is None else environ
    if env.get(ENV_LOCK_DIR):
        return Path(env[ENV_LOCK_DIR])
    name = f"tts-pipeline-gpu-locks-{os.getuid()}"
    if env.get("SLURM_JOB_ID"):
        name += f"-slurm-{env['SLURM_JOB_ID']}"
    return Path(tempfile.gettempdir()) / name


def _lock_path(lock_dir: Path, device: str) -> Path:
    # Device ids may be UUIDs ("GPU-5d1c...") or MIG names; keep the file name plain.
    return lock_dir / f"gpu-{re.sub(r'[^A-Za-z0-9_.-]', '_', device)}.lock"


# --------------------------------------------------------------------------------------------------
# locks
# --------------------------------------------------------------------------------------------------


def _try_lock(path: Path) -> int | None:
    """Take the flock on ``path`` without waiting; return its descriptor, or None if it is held."""
    # No O_TRUNC: opening must not erase the holder's note while it holds the lock.
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise
    # Note who holds it, for the message another job prints when it gives up waiting.
    since = datetime.now(UTC).isoformat(timespec="seconds")
    note = f"pid {os.getpid()} on {socket.gethostname()} since {since}\n"
    os.ftruncate(fd, 0)
    os.pwrite(fd, note.encode(), 0)
    return fd


def _holder(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8").strip() or "unknown holder"
    except OSError:
        return "unknown holder"


@dataclass
class GpuLease:
    """Devices held by this process until :meth:`release` (or the process ends).

    ``fds`` are the lock descriptors: pass them to a child process (``pass_fds``) and the devices
    stay held for as long as the child runs, even if this process dies first.
    """

    devices: list[str]
    fds: tuple[int, ...] = field(default=())

    def env(self) -> dict[str, str]:
        """``{"CUDA_VISIBLE_DEVICES": "2,3"}``; ``""`` (CPU only) for an empty lease."""
        return {CUDA_VISIBLE_DEVICES: ",".join(self.devices)}

    def release(self) -> None:
        """Give the devices back (idempotent)."""
        fds, self.fds = self.fds, ()
        for fd in fds:
            os.close(fd)  # closing the last descriptor of a flock releases it

    def __enter__(self) -> GpuLease:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _try_lease(pool: Sequence[str], count: int, lock_dir: Path) -> GpuLease | None:
    """All ``count`` devices or none."""
    taken: list[tuple[str, int]] = []
    try:
        for device in pool:
            fd = _try_lock(_lock_path(lock_dir, device))
            if fd is not None:
                taken.append((device, fd))
                if len(taken) == count:
                    return GpuLease([d for d, _ in taken], tuple(f for _, f in taken))
    except BaseException:
        for _, fd in taken:
            os.close(fd)
        raise
    for _, fd in taken:
        os.close(fd)
    return None


def acquire_gpus(
    count: int,
    *,
    pool: Sequence[str] | None = None,
    lock_dir: str | Path | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    poll_s: float = DEFAULT_POLL_S,
) -> GpuLease:
    """Lease ``count`` distinct devices, waiting up to ``timeout_s`` for them to be free.

    Args:
        count: Number of devices; 0 gives an empty lease (``CUDA_VISIBLE_DEVICES=""``: CPU).
        pool: Device ids to choose from; default :func:`gpu_pool`.
        lock_dir: Folder of the lock files; default :func:`default_lock_dir`.
        timeout_s: How long to wait for enough free devices.
        poll_s: How often to look again while waiting.

    Raises:
        GpuLeaseError: ``count`` is more than the pool holds (at once, without waiting).
        GpuLeaseTimeout: Not enough devices became free in time; the message lists who holds them.
    """
    if count < 0:
        raise GpuLeaseError(f"GPU count: expected 0 or more, got {count}")
    if count == 0:
        return GpuLease([])
    devices = list(pool) if pool is not None else gpu_pool()
    if count > len(devices):
        found = f"the pool has {len(devices)}: {','.join(devices)}" if devices else "no GPUs were found"
        raise GpuLeaseError(
            f"asked for {count} GPU(s) but {found} (pool: ${ENV_POOL}, else ${CUDA_VISIBLE_DEVICES}, "
            f"else nvidia-smi -L). Lower the stage's gpu setting or the pool's restriction."
        )
    directory = Path(lock_dir) if lock_dir is not None else default_lock_dir()
    directory.mkdir(parents=True, exist_ok=True)

    deadline = time.monotonic() + timeout_s
    waiting_logged = False
    while True:
        lease = _try_lease(devices, count, directory)
        if lease is not None:
            log.info("leased GPU(s) %s", ",".join(lease.devices))
            return lease
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise GpuLeaseTimeout(_timeout_message(count, devices, directory, timeout_s))
        if not waiting_logged:
            log.info("waiting up to %.0f s for %d free GPU(s) of %s", timeout_s, count, devices)
            waiting_logged = True
        time.sleep(min(poll_s, remaining))


def _timeout_message(count: int, devices: Sequence[str], lock_dir: Path, timeout_s: float) -> str:
    held = []
    for device in devices:
        path = _lock_path(lock_dir, device)
        fd = _try_lock(path)
        if fd is None:
            held.append(f"  GPU {device}: held by {_holder(path)}")
        else:
            os.close(fd)
    listing = "\n".join(held) or "  (none held now: they were freed just after the timeout)"
    return (
        f"could not lease {count} GPU(s) of {list(devices)} within {timeout_s:g} s "
        f"(locks in {lock_dir}):\n{listing}"
    )


@contextlib.contextmanager
def lease_gpus(
    count: int,
    *,
    pool: Sequence[str] | None = None,
    lock_dir: str | Path | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    poll_s: float = DEFAULT_POLL_S,
) -> Iterator[list[str]]:
    """Hold ``count`` distinct devices for the block; yields their ids (see :func:`acquire_gpus`).

    Setting ``CUDA_VISIBLE_DEVICES`` is the caller's job (it must happen before CUDA starts):
    ``",".join(devices)``.
    """
    with acquire_gpus(count, pool=pool, lock_dir=lock_dir, timeout_s=timeout_s, poll_s=poll_s) as lease:
        yield list(lease.devices)


def single_device(gpus: int, key: str) -> torch.device:
    """The device of a one-process stage (synthesis, benchmark): the first visible GPU when ``gpus``
    is 1 and one is present, else the CPU (with a warning when a GPU was asked for).

    Raises UserError naming ``key`` for anything but 0 or 1.
    """
    import torch

    if gpus not in (0, 1):
        raise UserError(f"{key}: expected 0 (CPU) or 1 (one GPU), got {gpus}")
    if gpus and not torch.cuda.is_available():
        log.warning("%s is 1 but no CUDA device is visible; running on the CPU", key)
    return torch.device("cuda", 0) if gpus and torch.cuda.is_available() else torch.device("cpu")
