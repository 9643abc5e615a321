"""Run a benchmark step's variants in one process: ``python variants.py SPEC.json RESULTS.jsonl``.

One process for all variants of a step, because on a GPU starting Python, importing torch and creating
the CUDA context cost seconds each, which a step of many short measurements cannot spend per variant.
Each variant is a ``tts-pipeline`` command line (:class:`gpucheck.plan.Variant`); it is tried at each of
its batches in turn until one fits in memory. One JSON line per variant is appended to RESULTS as soon
as it ends, so a step stopped at its time limit keeps what it measured.
"""

from __future__ import annotations

import gc
import json
import sys
import time
import traceback
from pathlib import Path


def out_of_memory(error: BaseException) -> bool:
    return "out of memory" in str(error).lower() or type(error).__name__ == "OutOfMemoryError"


def free_memory() -> None:
    import torch

    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def run_variant(variant: dict, json_path: Path) -> dict:
    """Try ``variant`` at each batch until one runs; the entry for the results file."""
    from tts_pipeline.cli import main

    entry: dict = {"name": variant["name"], "argv": variant["argv"], "tried_batches": []}
    for batch in variant["batches"]:
        entry["tried_batches"].append(batch)
        json_path.unlink(missing_ok=True)
        argv = [*variant["argv"], variant["flag"], str(batch), "--json", str(json_path)]
        start = time.monotonic()
        try:
            main(argv)
        except SystemExit as exit_:  # a UserError: the message is on stderr
            entry.update(status="failed", error=f"exit {exit_.code} (see the log)")
        except BaseException as error:  # noqa: BLE001 - one variant's failure must not end the step
            if out_of_memory(error):
                entry.update(status="out of memory", error=str(error).splitlines()[0][:200])
                free_memory()
                continue
            traceback.print_exc()
            entry.update(status="failed", error=f"{type(error).__name__}: {str(error).splitlines()[0][:200]}")
        else:
            entry.update(status="ok", batch=batch, result=json.loads(json_path.read_text()))
        entry["seconds"] = round(time.monotonic() - start, 1)
        break
    free_memory()
    return entry


def main() -> None:
    spec_path, results_path = Path(sys.argv[1]), Path(sys.argv[2])
    spec = json.loads(spec_path.read_text())
    scratch = results_path.with_suffix(".variant.json")
    for variant in spec:
        print(f"=== {variant['name']}", flush=True)
        entry = run_variant(variant, scratch)
        with results_path.open("a") as sink:
            sink.write(json.dumps(entry) + "\n")
        print(f"=== {variant['name']}: {entry['status']}", flush=True)


if __name__ == "__main__":
    main()
