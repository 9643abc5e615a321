"""Processes around a GPU job: torchrun through the trainers' own process-group set-up, and
``lease-gpus`` giving concurrent jobs distinct devices (or making one wait) on the real device pool.

The child processes run this interpreter with the package's source folder on ``PYTHONPATH``, so they
import the same code whether or not the package is installed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

import tts_pipeline
from tts_pipeline.devices import gpu_pool

from . import on_cuda

SOURCE = Path(tts_pipeline.__file__).resolve().parents[1]


def child_env(**variables: str) -> dict[str, str]:
    """This process's environment with the package importable from source, and ``variables`` set."""
    path = os.pathsep.join(filter(None, [str(SOURCE), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, **variables}


# --------------------------------------------------------------------------------------------------
# torchrun
# --------------------------------------------------------------------------------------------------

# Joins the job as a stage does (distributed_session), sums rank + 1 over the processes, waits at a
# barrier, and prints what it saw. One process gets no process group from the trainers' set-up (it needs
# none), so the backend that several processes on its device would use (NCCL on CUDA) is then checked
# with a one-rank group of the probe's own.
PROBE = textwrap.dedent(
    """
    import json
    import sys

    import torch
    import torch.distributed as dist

    from tts_pipeline.training.distributed import distributed_session

    with distributed_session(int(sys.argv[1])) as context:
        total = context.all_reduce_sum(torch.tensor([context.rank + 1.0], device=context.device))
        context.barrier()
        report = {
            "rank": context.rank,
            "world_size": context.world_size,
            "device": str(context.device),
            "backend": context.backend,
            "group": dist.is_initialized(),
            "sum": total.item(),
        }
    report["group_after"] = dist.is_initialized()
    if context.world_size == 1:
        cuda = context.device.type == "cuda"
        # torchrun's env:// rendezvous; a CUDA group is bound to its device as the set-up binds it.
        dist.init_process_group("nccl" if cuda else "gloo", **({"device_id": context.device} if cuda else {}))
        value = torch.full((1,), 5.0, device=context.device)
        dist.all_reduce(value)
        dist.barrier(**({"device_ids": [context.device.index]} if cuda else {}))
        report["own_group"] = {"backend": dist.get_backend(), "sum": value.item()}
        dist.destroy_process_group()
    # A file per rank: torchrun interleaves its workers' stdout, so lines of two ranks can run together.
    with open(f"{sys.argv[2]}/report-{report['rank']}.json", "w") as sink:
        json.dump(report, sink)
    """
)


def torchrun(script: Path, processes: int, gpus: int) -> list[dict[str, object]]:
    """Run ``script`` under ``torchrun --standalone`` with ``processes`` processes; their reports, by rank."""
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={processes}"]
    result = subprocess.run(
        [*command, str(script), str(gpus), str(script.parent)], env=child_env(), capture_output=True, text=True,
        timeout=90,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    reports = [json.loads(path.read_text()) for path in script.parent.glob("report-*.json")]
    return sorted(reports, key=lambda report: report["rank"])


@pytest.mark.parametrize(
    ("device", "processes"),
    [
        pytest.param("cpu", 1, id="cpu-one-process"),
        pytest.param("cpu", 2, id="cpu-two-processes", marks=pytest.mark.slow),
        # Two processes where there are two GPUs (NCCL through the set-up), else one (NCCL on its own).
        on_cuda("cuda", None, test_id="cuda"),
    ],
)
def test_torchrun_processes_join_through_the_trainers_set_up(device, processes, tmp_path):
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    # gpus: 0 is the CPU (gloo) even under torchrun; gpus: 1 is cuda:<local rank>.
    gpus, backend = (0, "gloo") if device == "cpu" else (1, "nccl")
    processes = processes or min(2, torch.cuda.device_count())
    reports = torchrun(script, processes, gpus)

    assert [report["rank"] for report in reports] == list(range(processes))
    expected_sum = float(sum(range(1, processes + 1)))
    for rank, report in enumerate(reports):
        assert report["world_size"] == processes and report["sum"] == expected_sum
        assert report["device"] == ("cpu" if device == "cpu" else f"cuda:{rank}")
        assert report["group_after"] is False  # the session leaves its group
        if processes > 1:
            assert (report["backend"], report["group"]) == (backend, True)
        else:
            # One process: no group at all, every collective the identity; the backend works on its own.
            assert (report["backend"], report["group"]) == (None, False)
            assert report["own_group"] == {"backend": backend, "sum": 5.0}


# --------------------------------------------------------------------------------------------------
# lease-gpus
# --------------------------------------------------------------------------------------------------

HOLD_S = 1.0
# A job under a lease: notes that it started, waits until the other job has started too (or HOLD_S
# has passed), and prints its devices, its start and end times and whether it met the other job.
JOB = textwrap.dedent(
    """
    import os
    import sys
    import time
    from pathlib import Path

    started, (folder, name, hold) = time.time(), sys.argv[1:]
    (Path(folder) / name).touch()
    while len(list(Path(folder).iterdir())) < 2 and time.time() < started + float(hold):
        time.sleep(0.01)
    met = len(list(Path(folder).iterdir())) == 2
    print("JOB", name, os.environ["CUDA_VISIBLE_DEVICES"], repr(started), repr(time.time()), met, flush=True)
    """
)


def lease_two_jobs(tmp_path: Path, env: dict[str, str]) -> list[tuple[str, float, float, bool]]:
    """Start two ``lease-gpus --count 1`` jobs at once; ``(devices, start, end, met)`` of each, by start."""
    started = tmp_path / "started"
    started.mkdir()
    lease = [sys.executable, "-m", "tts_pipeline", "lease-gpus", "--count", "1", "--timeout", "60", "--"]
    jobs = [
        subprocess.Popen(
            [*lease, sys.executable, "-c", JOB, str(started), name, str(HOLD_S)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("a", "b")
    ]
    reports = []
    for job in jobs:
        out, err = job.communicate(timeout=120)
        assert job.returncode == 0, out + err
        (line,) = [line.split() for line in out.splitlines() if line.startswith("JOB ")]
        reports.append((line[2], float(line[3]), float(line[4]), line[5] == "True"))
    return sorted(reports, key=lambda report: report[1])


@pytest.mark.parametrize(
    ("device", "pool"),
    [
        pytest.param("cpu", "0", id="cpu-one-device"),
        pytest.param("cpu", "0,1", id="cpu-two-devices"),
        on_cuda("cuda", None, test_id="cuda"),
    ],
)
def test_lease_gpus_gives_concurrent_jobs_distinct_devices_or_makes_one_wait(device, pool, tmp_path):
    env = child_env(TTS_GPU_LOCK_DIR=str(tmp_path / "locks"))
    if pool is not None:
        env["TTS_GPU_POOL"] = pool  # a simulated pool, as the device tests use
    else:
        # The real pool ($CUDA_VISIBLE_DEVICES, else nvidia-smi -L): it must be the devices torch sees.
        assert len(gpu_pool(env)) == torch.cuda.device_count(), (gpu_pool(env), torch.cuda.device_count())
    n_devices = len(gpu_pool(env))
    first, second = lease_two_jobs(tmp_path, env)

    assert {first[0], second[0]} <= set(gpu_pool(env))
    if n_devices == 1:
        # The second job started only once the first had ended, having waited out the first's hold.
        assert first[0] == second[0]
        assert second[1] >= first[2] and second[1] - first[1] >= HOLD_S
        assert not first[3]
    else:
        # Both ran at once, each on a device of its own.
        assert first[0] != second[0]
        assert first[3] and second[3] and second[1] < first[2]
