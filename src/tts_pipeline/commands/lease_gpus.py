"""Run a command on GPUs of its own: lease N free devices, set CUDA_VISIBLE_DEVICES, run, release.

  tts-pipeline lease-gpus --count 4 -- torchrun --nproc_per_node 4 -m tts_pipeline train-fastpitch ...

The lease lasts as long as the command (the command inherits the lock descriptors, so the devices
stay held even if this wrapper is killed first). SIGTERM, SIGINT and SIGHUP are passed on to the
command, and the wrapper exits with the command's exit status (128 + N when killed by signal N).
Pool: $TTS_GPU_POOL, else $CUDA_VISIBLE_DEVICES, else the GPUs nvidia-smi lists. Locks:
$TTS_GPU_LOCK_DIR, else a per-user folder in the temp dir.
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from types import FrameType

from tts_pipeline.errors import UserError

FORWARDED_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from tts_pipeline.devices import DEFAULT_TIMEOUT_S

    parser.add_argument("--count", type=int, required=True, help="number of GPUs (0 = CPU only)")
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT_S,
        help=f"seconds to wait for enough free GPUs before failing (default {DEFAULT_TIMEOUT_S:g})",
    )
    parser.add_argument(
        "--stage",
        action="store_true",
        help="the command is a tts-pipeline stage (its name and arguments): run it under torchrun with one "
        "process per leased GPU, or as one CPU process when --count is 0",
    )
    # dest is not "command": the CLI keeps the subcommand's name there.
    parser.add_argument("argv", nargs=argparse.REMAINDER, metavar="-- COMMAND ...", help="the command to run")


def run(args: argparse.Namespace) -> None:
    import os

    from tts_pipeline.devices import acquire_gpus

    command = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    if not command:
        raise UserError("no command given; usage: tts-pipeline lease-gpus --count N -- COMMAND ...")
    if args.stage:
        command = stage_command(command, args.count)
    with acquire_gpus(args.count, timeout_s=args.timeout) as lease:
        code = run_forwarding_signals(command, {**os.environ, **lease.env()}, pass_fds=lease.fds)
    sys.exit(code)


def stage_command(stage_argv: Sequence[str], n_gpus: int) -> list[str]:
    """How to launch a stage on ``n_gpus`` leased GPUs: torchrun with one process per GPU (the count
    Snakemake granted, never the configured one), or a single CPU process when there are none."""
    if n_gpus <= 0:
        return [sys.executable, "-m", "tts_pipeline", *stage_argv]
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={n_gpus}"]
    return [*torchrun, "-m", "tts_pipeline", *stage_argv]


def run_forwarding_signals(command: Sequence[str], env: Mapping[str, str], pass_fds: Sequence[int] = ()) -> int:
    """Run ``command``, passing SIGTERM/SIGINT/SIGHUP on to it; return a shell-style exit status."""
    child: subprocess.Popen[bytes] | None = None
    pending: list[int] = []

    def forward(signum: int, frame: FrameType | None) -> None:
        if child is None:
            pending.append(signum)  # arrived before the child existed: deliver once it does
        else:
            child.send_signal(signum)

    previous = {signum: signal.signal(signum, forward) for signum in FORWARDED_SIGNALS}
    try:
        try:
            child = subprocess.Popen(list(command), env=dict(env), pass_fds=tuple(pass_fds))
        except OSError as error:
            raise UserError(f"cannot run {command[0]!r}: {error.strerror}") from None
        for signum in pending:
            child.send_signal(signum)
        returncode = child.wait()
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    return 128 - returncode if returncode < 0 else returncode
