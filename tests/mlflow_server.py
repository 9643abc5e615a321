"""A real ``mlflow server`` on a local port, that a test can stop and start again on the same port and
store (a tracking server that goes away in the middle of a run and comes back)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

# Its first start creates the database tables; on a busy machine that takes a while.
START_TIMEOUT_S = 180


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class MlflowServer:
    """``mlflow server`` with a SQLite store and served artifacts in ``folder``, on a fixed port."""

    def __init__(self, folder: Path, port: int | None = None) -> None:
        self.folder = folder
        self.port = port or free_port()
        self.uri = f"http://127.0.0.1:{self.port}"
        self.log = folder / "server.log"
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start it and wait until it answers."""
        self.folder.mkdir(parents=True, exist_ok=True)
        command = [sys.executable, "-m", "mlflow", "server", "--host", "127.0.0.1", "--port", str(self.port),
                   "--workers", "1", "--backend-store-uri", f"sqlite:///{self.folder / 'mlflow.db'}",
                   "--artifacts-destination", str(self.folder / "artifacts")]  # fmt: skip
        # no job runner (a dozen worker processes that nothing here uses), no telemetry
        env = {**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false", "MLFLOW_DISABLE_TELEMETRY": "true"}
        with self.log.open("a") as log:
            # a session of its own: the server starts worker processes, stopped together with it
            self._process = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self.answers():
            if self._process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise AssertionError(f"mlflow server did not start:\n{self.log.read_text()[-3000:]}")
            time.sleep(0.3)

    def answers(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.uri}/health", timeout=2) as response:
                return response.status == 200
        except OSError:
            return False

    def stop(self) -> None:
        """Kill it and its workers at once (a crash, not a shutdown), and wait until the port is free."""
        process, self._process = self._process, None
        if process is None:
            return
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait(timeout=30)
        deadline = time.monotonic() + 30
        while self.answers() and time.monotonic() < deadline:
            time.sleep(0.1)
