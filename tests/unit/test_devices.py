"""GPU leasing on a simulated pool: distinct devices, waiting, timeouts, crash release, the CLI."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from tts_pipeline import devices
from tts_pipeline.devices import GpuLeaseError, GpuLeaseTimeout, acquire_gpus, gpu_pool, lease_gpus

POOL = ["0", "1", "2", "3"]


def _use_devices(held: list[str], markers: Path, hold_s: float) -> list[str]:
    """Claim a marker file per device while "using" it; return the devices someone else had."""
    clashes, claimed = [], []
    for device in held:
        try:
            os.close(os.open(markers / f"gpu-{device}", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            claimed.append(device)
        except FileExistsError:
            clashes.append(device)
    time.sleep(hold_s)
    for device in claimed:
        (markers / f"gpu-{device}").unlink()
    return clashes


def _lease_worker(lock_dir: str, markers: str, rounds: int) -> list[str]:
    """One job: lease two devices a few times over; returns any device it shared."""
    clashes = []
    for _ in range(rounds):
        with lease_gpus(2, pool=POOL, lock_dir=lock_dir, timeout_s=20, poll_s=0.01) as held:
            assert len(set(held)) == 2 and set(held) <= set(POOL)
            clashes += _use_devices(held, Path(markers), hold_s=0.05)
    return clashes


def _hold_in_subprocess(lock_dir: Path, count: int) -> subprocess.Popen[str]:
    """A separate process that leases ``count`` devices, says "ready" and sleeps."""
    script = textwrap.dedent(
        f"""
        import sys, time
        from tts_pipeline.devices import lease_gpus
        with lease_gpus({count}, pool={POOL!r}, lock_dir={str(lock_dir)!r}, timeout_s=5) as held:
            print("ready", ",".join(held), flush=True)
            time.sleep(60)
        """
    )
    holder = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None
    assert holder.stdout.readline().startswith("ready")
    return holder


def test_pool_sources_in_order(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert gpu_pool({"TTS_GPU_POOL": "2, 3,2", "CUDA_VISIBLE_DEVICES": "0"}) == ["2", "3"]
    assert gpu_pool({"CUDA_VISIBLE_DEVICES": "1,GPU-ab12"}) == ["1", "GPU-ab12"]
    assert gpu_pool({"CUDA_VISIBLE_DEVICES": "0,-1,2"}) == ["0"]  # CUDA ignores ids after a negative one
    assert gpu_pool({"CUDA_VISIBLE_DEVICES": ""}) == []

    fake = tmp_path / "bin" / "nvidia-smi"
    fake.parent.mkdir()
    listing = ["GPU 0: Fake (UUID: GPU-a)", "  MIG 1g.10gb Device 0", "GPU 1: Fake (UUID: GPU-b)"]
    fake.write_text("#!/bin/sh\n" + "".join(f"echo '{line}'\n" for line in listing))
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(fake.parent), prepend=os.pathsep)
    assert gpu_pool({}) == ["0", "1"]
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert gpu_pool({}) == []


def test_default_lock_dir_is_per_user_and_per_slurm_job(tmp_path: Path) -> None:
    assert devices.default_lock_dir({"TTS_GPU_LOCK_DIR": str(tmp_path)}) == tmp_path
    plain = devices.default_lock_dir({})
    assert str(os.getuid()) in plain.name
    assert devices.default_lock_dir({"SLURM_JOB_ID": "42"}) != plain


def test_zero_gpus_means_cpu_and_takes_no_lock(tmp_path: Path) -> None:
    lock_dir = tmp_path / "locks"
    with acquire_gpus(0, pool=[], lock_dir=lock_dir) as lease:
        assert lease.devices == [] and lease.env() == {"CUDA_VISIBLE_DEVICES": ""}
    assert not lock_dir.exists()


def test_more_than_the_pool_fails_at_once(tmp_path: Path) -> None:
    start = time.monotonic()
    with pytest.raises(GpuLeaseError, match=r"asked for 5 GPU\(s\) but the pool has 4: 0,1,2,3"):
        acquire_gpus(5, pool=POOL, lock_dir=tmp_path, timeout_s=30)
    with pytest.raises(GpuLeaseError, match="no GPUs were found"):
        acquire_gpus(1, pool=[], lock_dir=tmp_path, timeout_s=30)
    assert time.monotonic() - start < 1


def test_concurrent_threads_never_share_a_device(tmp_path: Path) -> None:
    markers = tmp_path / "in-use"
    markers.mkdir()
    results: list[list[str]] = []
    threads = [
        threading.Thread(target=lambda: results.append(_lease_worker(str(tmp_path), str(markers), 3)))
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [[], [], [], []]


def test_concurrent_processes_never_share_a_device(tmp_path: Path) -> None:
    markers = tmp_path / "in-use"
    markers.mkdir()
    with multiprocessing.get_context("spawn").Pool(3) as workers:
        results = workers.starmap(_lease_worker, [(str(tmp_path), str(markers), 3)] * 3)
    assert results == [[], [], []]


def test_waits_until_devices_are_released(tmp_path: Path) -> None:
    first = acquire_gpus(4, pool=POOL, lock_dir=tmp_path)
    threading.Timer(0.3, first.release).start()
    start = time.monotonic()
    with lease_gpus(3, pool=POOL, lock_dir=tmp_path, timeout_s=5, poll_s=0.02) as held:
        waited = time.monotonic() - start
        assert held == ["0", "1", "2"]
    assert 0.2 < waited < 3


def test_timeout_names_the_held_devices_and_their_holder(tmp_path: Path) -> None:
    with lease_gpus(3, pool=POOL, lock_dir=tmp_path) as held:
        assert held == ["0", "1", "2"]
        # One device is free, two are wanted: the request must wait and then give up.
        with pytest.raises(GpuLeaseTimeout) as caught:
            acquire_gpus(2, pool=POOL, lock_dir=tmp_path, timeout_s=0.2, poll_s=0.05)
    message = str(caught.value)
    assert "could not lease 2 GPU(s)" in message
    for device in held:
        assert f"GPU {device}: held by pid {os.getpid()}" in message
    assert "GPU 3:" not in message
    # ... and having given up, it holds nothing: all four are free again.
    with lease_gpus(4, pool=POOL, lock_dir=tmp_path, timeout_s=0):
        pass


def test_a_killed_holder_frees_its_devices(tmp_path: Path) -> None:
    holder = _hold_in_subprocess(tmp_path, 4)
    try:
        with pytest.raises(GpuLeaseTimeout, match=f"pid {holder.pid}"):
            acquire_gpus(1, pool=POOL, lock_dir=tmp_path, timeout_s=0)
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    with lease_gpus(4, pool=POOL, lock_dir=tmp_path, timeout_s=2) as held:
        assert held == POOL


# -------------------------------------------------------------------------------------------------
# the lease-gpus command
# -------------------------------------------------------------------------------------------------


def _cli_env(lock_dir: Path, pool: str = "0,1,2") -> dict[str, str]:
    env = {**os.environ, "TTS_GPU_POOL": pool, "TTS_GPU_LOCK_DIR": str(lock_dir)}
    env.pop("CUDA_VISIBLE_DEVICES", None)
    return env


def test_cli_sets_the_devices_and_returns_the_exit_code(tmp_path: Path) -> None:
    child = "import os, sys; print('CVD=' + os.environ['CUDA_VISIBLE_DEVICES']); sys.exit(3)"
    result = subprocess.run(
        [sys.executable, "-m", "tts_pipeline", "lease-gpus", "--count", "2", "--", sys.executable, "-c", child],
        env=_cli_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 3, result.stderr
    assert "CVD=0,1" in result.stdout


def test_cli_leases_are_disjoint_and_held_while_the_command_runs(tmp_path: Path) -> None:
    holder = _hold_in_subprocess(tmp_path, 1)  # holds device 0
    try:
        result = subprocess.run(
            [sys.executable, "-m", "tts_pipeline", "lease-gpus", "--count", "2", "--timeout", "0", "--",
             "sh", "-c", "echo CVD=$CUDA_VISIBLE_DEVICES"],
            env=_cli_env(tmp_path, pool="0,1,2"),
            capture_output=True,
            text=True,
            timeout=60,
        )  # fmt: skip
    finally:
        holder.kill()
        holder.wait()
    assert result.returncode == 0, result.stderr
    assert "CVD=1,2" in result.stdout


def test_cli_rejects_a_request_larger_than_the_pool(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "tts_pipeline", "lease-gpus", "--count", "4", "--", "true"],
        env=_cli_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "asked for 4 GPU(s)" in result.stderr


def test_cli_forwards_sigterm_to_the_command(tmp_path: Path) -> None:
    # The command traps SIGTERM and exits 7; the wrapper must pass the signal on and return 7.
    child = textwrap.dedent(
        """
        import signal, sys, time
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(7))
        print("started", flush=True)
        time.sleep(30)
        """
    )
    wrapper = subprocess.Popen(
        [sys.executable, "-m", "tts_pipeline", "lease-gpus", "--count", "1", "--", sys.executable, "-c", child],
        env=_cli_env(tmp_path),
        stdout=subprocess.PIPE,
        text=True,
    )
    assert wrapper.stdout is not None
    assert wrapper.stdout.readline().strip() == "started"
    wrapper.send_signal(signal.SIGTERM)
    assert wrapper.wait(timeout=20) == 7
    # The lease ended with the command.
    with lease_gpus(3, pool=["0", "1", "2"], lock_dir=tmp_path, timeout_s=0):
        pass


def test_the_command_keeps_its_devices_if_the_wrapper_is_killed(tmp_path: Path) -> None:
    child = "import os, time; print(os.getpid(), flush=True); time.sleep(30)"
    wrapper = subprocess.Popen(
        [sys.executable, "-m", "tts_pipeline", "lease-gpus", "--count", "3", "--", sys.executable, "-c", child],
        env=_cli_env(tmp_path),
        stdout=subprocess.PIPE,
        text=True,
    )
    assert wrapper.stdout is not None
    child_pid = int(wrapper.stdout.readline())
    wrapper.kill()
    wrapper.wait()
    try:
        # The GPUs are still in use by the command, so they must still be leased.
        with pytest.raises(GpuLeaseTimeout):
            acquire_gpus(1, pool=["0", "1", "2"], lock_dir=tmp_path, timeout_s=0)
    finally:
        os.kill(child_pid, signal.SIGKILL)
    with lease_gpus(3, pool=["0", "1", "2"], lock_dir=tmp_path, timeout_s=5, poll_s=0.02):
        pass


def test_stage_command_uses_torchrun_per_leased_gpu():
    import sys

    from tts_pipeline.commands.lease_gpus import stage_command

    on_cpu = stage_command(["train_hifigan", "--x", "1"], 0)
    assert on_cpu == [sys.executable, "-m", "tts_pipeline", "train_hifigan", "--x", "1"]
    launched = stage_command(["train_hifigan"], 4)
    assert "torch.distributed.run" in launched and "--nproc_per_node=4" in launched
    assert launched[-3:] == ["-m", "tts_pipeline", "train_hifigan"]
