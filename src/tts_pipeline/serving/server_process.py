"""The speech server as a child process, for a load test: started on a free port in a process group of
its own, ready once ``/healthz`` says so, its resident memory read with psutil, stopped with SIGTERM.

Its own process group (a new session): a Ctrl-C at the terminal reaches the load test alone, which
then stops the server the way a service manager does, with SIGTERM, and checks that it exits; a
server that outlives ``stop``'s grace period is killed with its whole group, so no process is left
holding the port. Its output goes to a log file, not the terminal (uvicorn logs every request).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from tts_pipeline.errors import UserError


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nobody listens on now (the OS picks it; another process could take it before the
    server binds, which then fails to start and says so)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def wait_healthy(url: str, timeout_s: float, alive: Callable[[], bool] = lambda: True) -> dict[str, Any]:
    """Poll ``url``/healthz until it answers 200 with ``"status": "ok"``; its JSON.

    Raises UserError after ``timeout_s``, or as soon as ``alive()`` says the server process has ended."""
    deadline = time.monotonic() + timeout_s
    last = "no answer"
    while time.monotonic() < deadline:
        if not alive():
            raise UserError(f"the speech server exited before it was ready ({last})")
        try:
            response = httpx.get(f"{url}/healthz", timeout=5.0)
            state = response.json()
            if response.status_code == 200 and state.get("status") == "ok":
                return state
            last = f"/healthz answered {response.status_code}: {state}"
        except (httpx.HTTPError, ValueError) as error:
            last = f"{type(error).__name__}: {error}"
        time.sleep(0.2)
    raise UserError(f"{url}/healthz: not ready after {timeout_s:.0f} s ({last})")


def rss_bytes(pid: int) -> int:
    """Resident memory of process ``pid`` and all its descendants, in bytes."""
    import psutil

    process = psutil.Process(pid)
    total = process.memory_info().rss
    for child in process.children(recursive=True):
        try:
            total += child.memory_info().rss
        except psutil.NoSuchProcess:  # a child that ended between the listing and the reading
            pass
    return int(total)


@dataclass(frozen=True)
class StopResult:
    """How the server ended: its exit code, seconds from SIGTERM to exit, and whether it had to be killed."""

    exit_code: int | None
    seconds: float
    killed: bool

    @property
    def clean(self) -> bool:
        return not self.killed and self.exit_code == 0


class ServerProcess:
    """A running ``tts-pipeline serve``; use :meth:`start`, then as a context manager (stopped on exit)."""

    def __init__(self, process: subprocess.Popen[bytes], url: str, log_path: Path) -> None:
        self.process = process
        self.url = url
        self.log_path = log_path
        self.stopped: StopResult | None = None

    @classmethod
    def start(cls, voice: Path, options: Sequence[str], log_path: Path, host: str = "127.0.0.1") -> ServerProcess:
        """``python -m tts_pipeline serve VOICE --host HOST --port <free> OPTIONS...``, its output into
        ``log_path``."""
        port = free_port(host)
        command = [sys.executable, "-m", "tts_pipeline", "serve", str(voice), "--host", host, "--port", str(port)]
        with open(log_path, "wb") as log:
            process = subprocess.Popen(
                [*command, *options], stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True,
            )  # fmt: skip
        return cls(process, f"http://{host}:{port}", log_path)

    @property
    def pid(self) -> int:
        return self.process.pid

    def wait_ready(self, timeout_s: float) -> dict[str, Any]:
        """The server's ``/healthz`` once it is ready; UserError with the end of its log if it is not."""
        try:
            return wait_healthy(self.url, timeout_s, alive=lambda: self.process.poll() is None)
        except UserError as error:
            raise UserError(f"{error}; the end of its log:\n{self.log_tail()}") from None

    def log_tail(self, lines: int = 20) -> str:
        """The last ``lines`` lines of the server's output."""
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])

    def stop(self, grace_s: float = 30.0) -> StopResult:
        """SIGTERM, then wait up to ``grace_s`` for it to exit; past that, SIGKILL to its group."""
        if self.stopped is not None:
            return self.stopped
        start = time.monotonic()
        killed = False
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(grace_s)
            except subprocess.TimeoutExpired:
                killed = True
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self.stopped = StopResult(self.process.returncode, time.monotonic() - start, killed)
        return self.stopped

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
