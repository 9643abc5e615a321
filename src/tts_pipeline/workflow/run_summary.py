"""The figures two workflow runs are compared by, read from the outputs present when a run ends.

The workflow's parent MLflow run logs them (one row per ``snakemake`` invocation in the runs table):
final losses and sizes of each trained model, the data's counts, the benchmark's headline figures.
They are read from the files on disk, not from the jobs of the invocation, so a run that redid only
the benchmark still carries the losses of the models it benchmarked.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

TRAINING_FIGURES = ("step", "epoch", "frames_per_s", "n_params")
"""Besides every ``val_*`` figure, what a training's ``metrics.json`` contributes."""

DATA_FIGURES = ("n_rows", "n_valid", "n_rejected")


def workflow_summary(
    *, validation: str | Path, trainings: dict[str, str | Path], benchmark: str | Path | None
) -> dict[str, float]:
    """``{"data/n_valid": 13100, "fastpitch/val_loss": 0.61, "benchmark/b1_fp32_x_real_time": 57.0, ...}``.

    Args:
        validation: The manifest stage's ``validation.json``.
        trainings: Section name -> that training's ``metrics.json`` (``"hifigan"``, ``"fastpitch"``, ...).
        benchmark: The benchmark's ``report.json`` (None when the config builds no benchmark).

    Missing files are skipped (a run that failed early, or a stage the config replaces with a
    published checkpoint); non-finite and non-numeric values are left out.
    """
    summary: dict[str, float] = {}
    data = _read(validation)
    summary.update({f"data/{key}": data[key] for key in DATA_FIGURES if key in data})
    for name, path in trainings.items():
        metrics = _read(path)
        picked = {key: value for key, value in metrics.items() if key.startswith("val_") or key in TRAINING_FIGURES}
        summary.update({f"{name}/{key}": value for key, value in picked.items()})
    if benchmark is not None:
        report = _read(benchmark)
        if report:
            from tts_pipeline.benchmark.document import headline_metrics

            summary.update({f"benchmark/{key}": value for key, value in headline_metrics(report).items()})
    return {key: float(value) for key, value in summary.items() if _finite_number(value)}


def _read(path: str | Path) -> dict[str, Any]:
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return {}


def _finite_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
