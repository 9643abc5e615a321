"""A user's stop (SIGTERM or Ctrl-C): training finishes its step, saves a checkpoint and stops.

Killing a training loses everything since its last checkpoint, which may be hours; letting it finish
may take days. So a stop is asked for and honoured at the next step boundary, where the state is
whole: the loop (:mod:`tts_pipeline.training.loop`) checkpoints there and raises :class:`StopRequested`,
the job's MLflow run ends KILLED, and the same command run again resumes from that checkpoint.

A stop is asked for in two ways:

- a signal to the job itself: SIGTERM, or SIGINT (Ctrl-C reaches every process of the terminal's
  foreground group, the jobs included). While :func:`listening`, the first one only sets a flag; a
  second one acts as it always did, for a job that must die now;
- a stop file: the workflow names one in ``$TTS_STOP_FILE`` for every job, and creates it when
  ``snakemake`` itself is sent SIGTERM (:mod:`tts_pipeline.workflow.stopping`): Snakemake lets its
  running jobs finish then, and signals none of them. A file also reaches jobs on other machines.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ENV_STOP_FILE = "TTS_STOP_FILE"
"""The file whose existence asks every job of the workflow to stop at its next checkpoint."""

SIGNALS = (signal.SIGTERM, signal.SIGINT)

# The stop file is looked for at most this often (seconds): a step may take milliseconds.
FILE_CHECK_INTERVAL_S = 1.0


class StopRequested(KeyboardInterrupt):
    """Training stopped on a user's request after saving a checkpoint. A kind of KeyboardInterrupt, so
    that what ends a run on Ctrl-C (the job's MLflow run KILLED) ends it so here too."""


_asked: str | None = None  # the signal's name once one asked
_last_file_check = float("-inf")


def _stop_file() -> Path | None:
    name = os.environ.get(ENV_STOP_FILE, "")
    return Path(name) if name else None


def requested() -> str | None:
    """Why a stop is asked for (``"SIGTERM"``, ``"SIGINT"``, ``"the stop file <path>"``), or None."""
    global _last_file_check
    if _asked is not None:
        return _asked
    stop_file = _stop_file()
    now = time.monotonic()
    if stop_file is not None and now - _last_file_check >= FILE_CHECK_INTERVAL_S:
        _last_file_check = now
        if stop_file.exists():
            return f"the stop file {stop_file}"
    return None


def reset() -> None:
    """Forget a stop asked for earlier in this process (tests; a new training)."""
    global _asked, _last_file_check
    _asked, _last_file_check = None, float("-inf")


def _ask(signum: int, frame: Any) -> None:
    global _asked
    name = signal.Signals(signum).name
    if _asked is not None:
        # asked twice: the job must stop now, as it would have without listening
        signal.signal(signum, signal.SIG_DFL if signum != signal.SIGINT else signal.default_int_handler)
        signal.raise_signal(signum)
        return
    _asked = name
    print(f"{name}: stopping at the next step, after saving a checkpoint (send it again to stop now)", flush=True)


@contextlib.contextmanager
def listening() -> Iterator[None]:
    """While inside, SIGTERM and SIGINT ask for a stop instead of ending the process (main thread only;
    elsewhere the stop file alone is heard). The earlier handlers come back on leaving."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.signal(signum, _ask) for signum in SIGNALS}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
