"""Command line of the check: ``tools/gpu-check [--rehearsal] [--out DIR] [--kit DIR] [--only STEP ...]``."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from pathlib import Path

from . import plan
from .record import Record
from .steps import REPO, STEP_FUNCTIONS, Context


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="tools/gpu-check", description=__doc__)
    parser.add_argument("--rehearsal", action="store_true",
                        help="the same steps at tiny sizes on the CPU (make gpu-rehearsal)")
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT") or ".gpu-check/out"),
                        help="folder of the record and the demo's archives (default: $OUT, else .gpu-check/out)")
    parser.add_argument("--kit", type=Path, default=Path(".gpu-kit/cp312"), help="folder of the kit's wheels")
    parser.add_argument("--work", type=Path, help="scratch folder (default .gpu-check, .gpu-rehearsal/check)")
    parser.add_argument("--only", nargs="+", choices=[step.name for step in plan.STEPS],
                        help="run these steps only (the kit step always runs when a later step needs it)")
    return parser.parse_args(argv)


def stop_reason(step: str, status: str) -> str:
    """Why the steps after ``step`` would only fail, or "" to go on: without a working environment (in
    GPU mode, a CUDA device) or the kit, every later step measures nothing. The rehearsal runs on a CPU
    on purpose: there use ``make gpu-rehearsal``."""
    if status == "ok":
        return ""
    if step == "environment":
        return ("the environment step failed (on a machine without a CUDA device, run the rehearsal instead: "
                "make gpu-rehearsal)")
    if step == "kit":
        return "the kit did not install (its wheels are for the GPU image's Python 3.12; see the kit step)"
    return ""


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    plan.check_plan()
    sizes = plan.sizes(args.rehearsal)
    work = args.work or Path(".gpu-rehearsal/check" if args.rehearsal else ".gpu-check")
    out, work = (REPO / args.out).resolve(), (REPO / work).resolve()
    out.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    mode = ("rehearsal on the CPU: tiny sizes, time limits x3" if args.rehearsal else "GPU")
    command = "tools/gpu-check " + shlex.join(argv if argv is not None else sys.argv[1:])
    record = Record(out=out, mode=mode, command=command.strip(), limit_scale=sizes.limit_scale)
    ctx = Context(record=record, sizes=sizes, python=sys.executable, kit=(REPO / args.kit).resolve(), work=work,
                  out=out)
    (out / "gpu-check.log").write_text(f"{command}\n")
    selected = set(args.only or [step.name for step in plan.STEPS])
    if selected - {"environment"}:
        selected.add("kit")
    deadline = record.started + plan.TOTAL_LIMIT_S * sizes.limit_scale
    stopped = ""
    for step in plan.STEPS:
        entry = record.steps[step.name]
        if step.name not in selected:
            entry.notes.append("not selected (--only)")
        elif stopped:
            entry.notes.append(f"not run: {stopped}")
        elif time.time() >= deadline:
            entry.notes.append("not run: the check's total time was spent")
        else:
            print(f"[gpu-check] {step.name} (limit {step.limit_s * sizes.limit_scale:.0f} s)", flush=True)
            start = time.monotonic()
            STEP_FUNCTIONS[step.name](ctx, entry)
            entry.seconds = time.monotonic() - start
            print(f"[gpu-check] {step.name}: {entry.status} in {entry.seconds:.0f} s", flush=True)
            stopped = stop_reason(step.name, entry.status)
            if stopped:
                print(f"[gpu-check] stopping: {stopped}", flush=True)
        record.save()
    failed = [entry.step.name for entry in record.steps.values() if entry.status not in ("ok", "skipped")]
    print(f"[gpu-check] record: {out / 'gpu-check.md'}; steps not ok: {', '.join(failed) or 'none'}")
    return 1 if failed else 0
