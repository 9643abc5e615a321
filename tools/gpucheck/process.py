"""Run a command under a time limit, its output appended to the check's log.

A command that outlives its limit is stopped with its whole process group (Snakemake's jobs, torchrun's
workers, pytest's subprocesses), so a stuck step cannot eat the next step's time.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Outcome:
    """How a command ended: ``returncode`` None when it was stopped at its limit."""

    returncode: int | None
    seconds: float
    output: str

    @property
    def timed_out(self) -> bool:
        return self.returncode is None

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def tail(self, n_lines: int = 15) -> str:
        return "\n".join(self.output.strip().splitlines()[-n_lines:])


def run(
    command: Sequence[str], limit_s: float, log: Path, env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> Outcome:
    """Run ``command``, at most ``limit_s`` seconds; its stdout and stderr go to ``log`` and are returned."""
    start = time.monotonic()
    with log.open("a") as sink:
        sink.write(f"\n$ {' '.join(command)}   (limit {limit_s:.0f} s)\n")
        sink.flush()
    process = subprocess.Popen(
        list(command),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
        env=dict(env) if env is not None else None,
        cwd=cwd,
        start_new_session=True,
    )
    try:
        output, _ = process.communicate(timeout=max(limit_s, 1))
        returncode: int | None = process.returncode
    except subprocess.TimeoutExpired:
        stop(process)
        output, _ = process.communicate()
        returncode = None
    seconds = time.monotonic() - start
    with log.open("a") as sink:
        sink.write(output)
        ending = "stopped at its time limit" if returncode is None else f"exit {returncode}"
        sink.write(f"\n[{ending} after {seconds:.1f} s]\n")
    return Outcome(returncode, seconds, output)


def start(command: Sequence[str], log: Path, env: Mapping[str, str] | None = None) -> subprocess.Popen:
    """Start ``command`` in the background, in its own process group, its output going to ``log``."""
    sink = log.open("a")
    sink.write(f"\n$ {' '.join(command)}   (background)\n")
    sink.flush()
    return subprocess.Popen(
        list(command), stdout=sink, stderr=subprocess.STDOUT, env=dict(env) if env is not None else None,
        start_new_session=True,
    )


def stop(process: subprocess.Popen, grace_s: float = 5.0) -> None:
    """SIGTERM the process group (Snakemake then stops its jobs cleanly), SIGKILL after ``grace_s``."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=grace_s)
            return
        except subprocess.TimeoutExpired:
            continue
