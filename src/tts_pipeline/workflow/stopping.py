"""A user's stop of the whole workflow: SIGTERM or Ctrl-C to ``snakemake``.

On SIGTERM Snakemake lets its running jobs finish, which for a training may be days, and signals none
of them; on Ctrl-C the jobs get the terminal's SIGINT themselves. Either way :class:`StopWatch` (armed
in the Snakefile's ``onstart``) creates the stop file every job was told of (``$TTS_STOP_FILE``), so
each running training saves a checkpoint at its next step and stops (:mod:`tts_pipeline.stop_request`),
then hands the signal on to Snakemake's own handling: no new job starts. The workflow's MLflow run then
ends KILLED rather than FAILED, and the terminal says how to resume: the same command again.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import Any

from tts_pipeline.stop_request import ENV_STOP_FILE, SIGNALS


class StopWatch:
    """The workflow's side of a user's stop.

    Args:
        stop_file: The file whose existence asks the jobs to stop (``R/work/STOP``).
    """

    def __init__(self, stop_file: str | Path) -> None:
        self.stop_file = Path(stop_file).absolute()
        self.asked: str | None = None
        self._previous: dict[int, Any] = {}

    def export_env(self) -> None:
        """Name the stop file to every job (they inherit the environment, on this machine or a cluster's)."""
        os.environ[ENV_STOP_FILE] = str(self.stop_file)

    def arm(self) -> None:
        """Before the first job: forget a stop file a stopped invocation left, and listen for SIGTERM and
        SIGINT (after Snakemake's own handler is in place, which is handed each signal on)."""
        self.stop_file.unlink(missing_ok=True)
        for signum in SIGNALS:
            self._previous[signum] = signal.signal(signum, self._on_signal)

    def _on_signal(self, signum: int, frame: Any) -> None:
        name = signal.Signals(signum).name
        if self.asked is None:
            self.asked = name
            self.stop_file.parent.mkdir(parents=True, exist_ok=True)
            self.stop_file.touch()
            print(
                f"{name}: stopping. Running trainings save a checkpoint at their next step and stop; no new "
                "job starts. Run the same command again to resume.",
                file=sys.stderr,
                flush=True,
            )
        previous = self._previous.get(signum)
        if callable(previous):
            previous(signum, frame)
        elif previous == signal.SIG_DFL:
            signal.signal(signum, signal.SIG_DFL)
            signal.raise_signal(signum)

    def end_status(self, status: str) -> str:
        """The workflow run's end status: a failure after a user's stop is KILLED."""
        return "KILLED" if self.asked is not None and status == "FAILED" else status

    def finish(self) -> None:
        """At the workflow's end: the stop file goes (its jobs are over), and after a stop, how to resume."""
        self.stop_file.unlink(missing_ok=True)
        if self.asked is not None:
            print(
                f"Stopped on request ({self.asked}): the interrupted trainings saved a checkpoint under "
                f"{self.stop_file.parent}. Run the same snakemake command again to resume from them.",
                file=sys.stderr,
                flush=True,
            )
