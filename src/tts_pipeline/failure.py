"""How a failing command's last words reach the person at the terminal, even when its log cannot.

Under the workflow a stage's standard error is its log file (the rules' ``2> {log}``) and its standard
output is the terminal of ``snakemake``. A stage that failed used to say why only in its log, so the
terminal showed Snakemake's "Error in rule ...", and nothing at all when the log was on the disk that
had just filled up (``Logfile ...: empty file``). :func:`report` writes the error to standard error as
before and, when standard error is a file, to standard output too; when the log cannot take it, standard
output still gets it. Run by hand in a terminal, both streams are the terminal and it is said once.
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
from pathlib import Path


def _stderr_file() -> str | None:
    """The file standard error is redirected to (a workflow job's log), or None (a terminal, a pipe)."""
    try:
        descriptor = sys.stderr.fileno()
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return None
        return os.readlink(f"/proc/self/fd/{descriptor}") if os.path.exists("/proc/self/fd") else "the log"
    except (AttributeError, OSError, ValueError):
        return None


def report(message: str, *, terminal_only: bool = False) -> None:
    """Tell ``message`` to the log (standard error) and to the terminal (standard output) when they differ.

    ``terminal_only``: the log gets it another way (the traceback that follows), so only the terminal
    is told, in one line naming the log.
    """
    log = _stderr_file()
    written = False
    if not terminal_only:
        try:
            print(message, file=sys.stderr, flush=True)
            written = True
        except OSError:
            pass  # the log is on a full disk: the terminal below is the only place left
    if log is None and (written or terminal_only):
        return
    if terminal_only:
        message = f"{message.splitlines()[0] if message else message} (traceback in {log})"
    try:
        print(message, file=sys.stdout, flush=True)
    except OSError:
        pass


def warn_on_terminal(message: str) -> None:
    """Show a warning the logger already wrote to the log on the terminal too (standard output), when the
    log is a file; run by hand, the logger's line on the terminal is enough. For the few warnings a person
    must see while a job runs (the tracking server gone away), not for every log line."""
    if _stderr_file() is None:
        return
    try:
        print(f"WARNING: {message}", file=sys.stdout, flush=True)
    except OSError:
        pass


# The stages' output arguments (``--out-dir``, ``--work-dir``, ``--model``, ...): where a command writes.
OUTPUT_ARGUMENTS = ("work_dir", "out_dir", "model", "state", "metrics", "index", "pitch_stats", "manifest")


def written_paths(args: argparse.Namespace) -> list[Path]:
    """The paths among a command's arguments, its outputs first: where it may have been writing when it
    failed (on one full disk, the first of them is the folder named)."""
    named = vars(args)
    outputs = [name for name in OUTPUT_ARGUMENTS if name in named]
    order = outputs + [name for name in named if name not in outputs]
    paths: list[Path] = []
    for name in order:
        value = named[name]
        values = value if isinstance(value, list | tuple) else [value]
        paths += [item for item in values if isinstance(item, Path)]
    return paths
