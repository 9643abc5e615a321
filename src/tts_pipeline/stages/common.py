"""What every stage command shares: the config slice a rule passes, and the stage's MLflow child run."""

from __future__ import annotations

import argparse
import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tts_pipeline.errors import UserError


def add_section_argument(parser: argparse.ArgumentParser) -> None:
    """``--section JSON`` (what the workflow passes) or ``--config YAML`` (by hand), one of them required."""
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--section",
        metavar="JSON",
        help="the config this stage reads, as JSON (the workflow passes it; see tts_pipeline.workflow)",
    )
    source.add_argument(
        "--config",
        type=Path,
        metavar="YAML",
        help="a pipeline config file (e.g. config/demo.yaml): the stage reads from it what the workflow would pass",
    )


# The path arguments several stages take, spelled once: flag -> help. Each is a required ``Path``.
PATH_ARGUMENTS: dict[str, str] = {
    "--manifest-dir": "folder of manifest.{train,val,test}.jsonl (R/data)",
    "--features-dir": "features folder (R/features: mels/, pitch/, durations/, ... and their indexes)",
    "--work-dir": "resumable checkpoints of this stage (R/work/<rule>)",
    "--model": "model.pt to write",
    "--metrics": "metrics.json to write",
}


def add_stage_arguments(parser: argparse.ArgumentParser, *flags: str) -> None:
    """Add ``--section`` / ``--config`` and the named shared path arguments (keys of :data:`PATH_ARGUMENTS`),
    all required."""
    add_section_argument(parser)
    for flag in flags:
        parser.add_argument(flag, type=Path, required=True, help=PATH_ARGUMENTS[flag])


def load_stage_section(args: argparse.Namespace, rule: str) -> dict[str, Any]:
    """The config ``rule`` reads: ``--section`` checked for every key the stage table lists, or the same
    slice cut from the ``--config`` file exactly as the workflow cuts it (:func:`stage_table.stage_params`)."""
    from tts_pipeline.stage_table import stage, stage_params

    if getattr(args, "config", None) is not None:
        from tts_pipeline.config import load_config

        return json.loads(stage_params(load_config(args.config), rule))
    return load_section(args, *stage(rule).reads)


def load_section(args: argparse.Namespace, *required: str) -> dict[str, Any]:
    """Parse ``--section`` and check that it carries the keys this stage needs."""
    try:
        payload = json.loads(args.section)
    except json.JSONDecodeError as error:
        raise UserError(f"--section: expected a JSON object, got invalid JSON ({error.msg})") from None
    if not isinstance(payload, dict):
        raise UserError(f"--section: expected a JSON object, got {type(payload).__name__}")
    missing = [key for key in required if key not in payload]
    if missing:
        raise UserError(f"--section: missing keys {missing}; expected {list(required)}")
    return payload


@contextlib.contextmanager
def tracked(
    stage: str,
    payload: dict[str, Any],
    *,
    dataset: str,
    tags: dict[str, str] | None = None,
    run_id: str | None = None,
    manifest_dir: Path | None = None,
) -> Iterator[Any]:
    """The stage's MLflow child run, as the workflow's environment describes it.

    Under Snakemake the ``TTS_*`` variables (exported by the Snakefile) switch tracking on and name the
    store, the experiment and the parent run; a stage run by hand without them logs nothing.
    ``run_id`` continues an earlier run (a training resumed from its checkpoint). With
    ``manifest_dir``, the train / val manifests are logged as the run's dataset.
    """
    from tts_pipeline import tracking
    from tts_pipeline.data.manifest import manifest_path

    off = tracking.TrackingSettings(enabled=False, uri="", experiment="")
    settings = tracking.settings_from_env(off)
    all_tags = {"dataset": dataset, **(tags or {})}
    with tracking.stage_run(stage, payload, settings=settings, tags=all_tags, run_id=run_id) as run:
        if manifest_dir is not None:
            files = [manifest_path(manifest_dir, split) for split in ("train", "val")]
            run.log_dataset(dataset, [path for path in files if path.is_file()])
        yield run


def log_outputs(run: Any, *, model: Path, metrics: Path) -> None:
    """A training stage's outputs as artifacts of its run: ``metrics.json``, and ``model/model.pt``
    unless ``tracking.log_models`` is off (exported by the Snakefile; the store then holds a copy of
    every model, which a user may not want for large ones)."""
    import os

    from tts_pipeline.tracking.settings import ENV_LOG_MODELS

    run.log_artifact(metrics)
    if os.environ.get(ENV_LOG_MODELS, "1") != "0":
        run.log_artifact(model, "model")


def training_summary(
    stage: str, step: int, epoch: int, metrics: dict[str, Any], *, loss: str = "val_loss", rate: str = "frames_per_s"
) -> str:
    """The line a training stage logs at its end: step, epoch, validation ``loss`` from its first to its
    last value, throughput ``rate`` and, when the metrics have it, the parameter count; a figure that
    was never measured (no validation set) reads ``n/a``."""

    def figure(key: str) -> str:
        value = metrics.get(key)
        return "n/a" if value is None else f"{value:.4g}"

    unit = rate.removesuffix("_per_s")
    line = (
        f"{stage}: step {step}, epoch {epoch}, {loss.replace('_', ' ')} {figure(loss + '_start')} -> "
        f"{figure(loss)}, {figure(rate)} {unit}/s"
    )
    if metrics.get("n_params") is not None:
        line += f", {metrics['n_params']:,} parameters"
    return line


def log_every_n_steps(default: int = 50) -> int:
    """Training-metric cadence from ``tracking.log_every_n_steps`` (exported by the Snakefile).

    It travels in the environment, not in a rule's params, because it never changes a result.
    """
    import os

    from tts_pipeline.tracking.settings import ENV_LOG_EVERY_N_STEPS

    value = os.environ.get(ENV_LOG_EVERY_N_STEPS, "")
    return int(value) if value.isdigit() and int(value) > 0 else default
