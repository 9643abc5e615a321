"""Which process owns a workflow run, and whether it still lives.

A parent run records the ``snakemake`` process that opened it: host name, PID and the PID's start time
(a PID alone is reused by the system). After a hard kill (power cut, ``kill -9``) the run stays RUNNING
in the store; the next invocation on the same host sees that its process is gone and ends it KILLED.
Runs opened on other hosts are left alone: their process cannot be checked from here.
"""

from __future__ import annotations

import getpass
import os
import socket
from collections.abc import Mapping
from pathlib import Path

HOST_TAG = "workflow.host"
PID_TAG = "workflow.pid"
STARTED_TAG = "workflow.pid_started"


def process_start_ticks(pid: int) -> str:
    """The process's start time in clock ticks since boot (``/proc/<pid>/stat`` field 22), or "" where
    there is no ``/proc`` (the PID alone is then the identity)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    # the command name (field 2) is in parentheses and may hold spaces: split after its last ")"
    fields = stat[stat.rindex(")") + 2 :].split()
    return fields[19]  # field 22 counted from 1, fields 3.. here


def this_process_tags() -> dict[str, str]:
    """Tags naming the current process: host, PID, start time."""
    pid = os.getpid()
    return {HOST_TAG: socket.gethostname(), PID_TAG: str(pid), STARTED_TAG: process_start_ticks(pid)}


def owner_is_gone(tags: Mapping[str, str]) -> bool:
    """True when the tags name a process on this host that no longer runs (or a reused PID).

    False when it still runs, and when the run was opened on another host or carries no owner tags.
    """
    if tags.get(HOST_TAG) != socket.gethostname() or not tags.get(PID_TAG, "").isdigit():
        return False
    pid = int(tags[PID_TAG])
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass  # it exists, under another user
    started = tags.get(STARTED_TAG, "")
    return bool(started) and process_start_ticks(pid) not in ("", started)


def user_name() -> str:
    """The login name for MLflow's ``mlflow.user`` tag ("unknown" where the system has none)."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"
