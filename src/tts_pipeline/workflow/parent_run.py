"""The workflow's parent MLflow run: it lives as long as one ``snakemake`` invocation.

Every job inherits the tracking settings through the environment; the parent run opens before the
first job and ends with the figures the outputs hold then (:mod:`.run_summary`) and each job's log.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path

from tts_pipeline import stage_table, tracking
from tts_pipeline.config import PipelineConfig
from tts_pipeline.workflow.paths import Paths
from tts_pipeline.workflow.run_summary import workflow_summary

log = logging.getLogger(__name__)


def export_tracking_env(config: PipelineConfig) -> None:
    """Put the tracking settings into the environment every job inherits (no side effects)."""
    settings = tracking.TrackingSettings.from_config(config)
    if not settings.enabled:
        os.environ.pop(tracking.ENV_PARENT_RUN_ID, None)
    os.environ.update(settings.to_env())
    os.environ[tracking.ENV_LOG_EVERY_N_STEPS] = str(config.tracking.log_every_n_steps)
    os.environ[tracking.ENV_LOG_MODELS] = "1" if config.tracking.log_models else "0"


def open_parent_run(config: PipelineConfig) -> None:
    tracking.open_parent_run(config)


def close_parent_run(config: PipelineConfig, paths: Paths, training_metrics: Mapping[str, str], status: str) -> None:
    """End the parent run with the figures the outputs hold now, and each job's log on its run.

    ``training_metrics`` maps each training rule in the DAG (``train_hifigan``, ...) to its ``metrics.json``.

    Runs in the workflow's end hooks, so it warns instead of raising: the workflow's own result (its
    outputs, its exit status) stands whatever happens to its record in the tracking store.
    """
    try:
        _close_parent_run(config, paths, training_metrics, status)
    except Exception as error:
        log.warning("could not end the workflow's MLflow run %s: %s: %s", status, type(error).__name__, error)


def _close_parent_run(config: PipelineConfig, paths: Paths, training_metrics: Mapping[str, str], status: str) -> None:
    trainings = {name.removeprefix("train_"): path for name, path in training_metrics.items()}
    summary = workflow_summary(validation=paths.validation, trainings=trainings, benchmark=paths.benchmark_json)
    logs = {row.rule: paths.log(row.rule) for row in stage_table.STAGES}
    manifests = [path for path in map(paths.manifest, ("train", "val")) if Path(path).is_file()]
    dataset = (config.corpus.name, manifests)
    tracking.close_parent_run(status, summary=summary, job_logs=logs, dataset=dataset)
