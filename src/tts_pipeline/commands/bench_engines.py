"""Time an exported voice's engines side by side (ONNX Runtime and PyTorch) and say which is faster.

Loads every engine the export folder holds (:mod:`tts_pipeline.serving.engines`), speaks ``--text``
(default: NVIDIA's 128-character benchmark sentence) once each untimed, then ``--rounds`` interleaved
rounds (:mod:`tts_pipeline.benchmark.side_by_side`), and prints each engine's median seconds and x real
time, and the faster one: what ``tts-pipeline serve --engine auto`` chooses on this machine with the
same threads. ``--json`` writes the figures with the CPU model and library versions. For example::

    tts-pipeline bench-engines results/demo/export --threads 2 --rounds 9
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

# NVIDIA's inference benchmark sentence (LJ018-0239, 128 characters): config/phrases/benchmark_128.txt
BENCHMARK_TEXT = (
    "His disappearance gave color and substance to evil reports already in circulation that the will and "
    "conveyance above referred to"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("voice", type=Path, help="an export folder (R/export)")
    parser.add_argument("--text", default=BENCHMARK_TEXT, help="the sentence timed (default: the 128-character one)")
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds (default 7)")
    parser.add_argument("--threads", type=int, default=None, help="intra-op threads per engine (default: library's)")
    parser.add_argument("--amp", default="off", help="the torch engine's precision: off, auto, bf16 (default off)")
    parser.add_argument("--json", type=Path, help="write the figures here")


def run(args: argparse.Namespace) -> None:
    from dataclasses import asdict
    from importlib import metadata

    from tts_pipeline.benchmark.environment import cpu_name
    from tts_pipeline.files import write_json
    from tts_pipeline.serving.engine_choice import compare_engines

    comparison = compare_engines(args.voice, text=args.text, rounds=args.rounds, threads=args.threads, amp=args.amp)
    print(f"{args.voice}: {comparison.audio_seconds:.2f} s of audio, {args.rounds} interleaved rounds, "
          f"threads {args.threads or 'default'}, {cpu_name()}")  # fmt: skip
    print(f"{'engine':<8} {'median ms':>10} {'x real time':>12}")
    for name, seconds in comparison.seconds.items():
        print(f"{name:<8} {1000 * seconds:>10.1f} {comparison.real_time(name):>12.1f}")
    print(f"faster: {comparison.chosen}")
    if args.json:
        versions = {}
        for package in ("onnxruntime", "torch"):
            try:
                versions[package] = metadata.version(package)
            except metadata.PackageNotFoundError:
                versions[package] = None
        record = {**asdict(comparison), "cpu": cpu_name(), "versions": versions, "text": args.text, "amp": args.amp}
        write_json(args.json, record)
        print(json.dumps({"json": str(args.json)}))
