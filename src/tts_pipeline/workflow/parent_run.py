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
from tts_pipeline.config.folders import sqlite_path
from tts_pipeline.errors import UserError
from tts_pipeline.full_disk import full_disk_message
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
    """Open the parent run before the first job. A store on a full disk stops the workflow here, said
    as such (the folder and its free space), not as the store's traceback: the jobs' outputs go to the
    same disk unless ``tracking.uri`` points elsewhere, and either way it is for the user to free."""
    try:
        tracking.open_parent_run(config)
    except Exception as error:
        settings = tracking.TrackingSettings.from_config(config)
        store = sqlite_path(settings.uri)
        message = full_disk_message(error, [store if store is not None else Path(config.results_dir)])
        if message is None:
            raise
        raise UserError(f"the MLflow store ({settings.uri}): {message}") from None


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
