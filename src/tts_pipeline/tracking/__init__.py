"""MLflow tracking: one parent run per workflow invocation, one child run per job.

This is the only package that imports mlflow, and it does so inside functions, so that importing it
(and every stage's ``--help``) stays fast and a pipeline with tracking off never loads mlflow.

How the pieces meet:

- The Snakefile's ``onstart`` hook calls :func:`open_parent_run`. It creates the experiment and a
  parent run, and exports ``TTS_*`` environment variables that every job inherits.
- Each job builds its default :class:`TrackingSettings` from its config (results dir, experiment,
  tracking section), lets the environment override them (:func:`settings_from_env`) and wraps its
  work in :func:`stage_run`, a child run of the parent.
- ``onsuccess`` / ``onerror`` call :func:`close_parent_run`.

Tracking is a side channel: a tracking server that goes away during a job warns once and delays the
job's calls until it is back; it never stops the job nor the workflow's end hooks.

Modules: :mod:`.settings` (where and whether to log), :mod:`.client` (the locked store client),
:mod:`.tags` (tags and params), :mod:`.runs` (parent and child runs), :mod:`.sink` (a job's logging
handle), :mod:`.outbox` (calls that wait out an outage), :mod:`.outages` (what counts as one),
:mod:`.queries` (reading runs).
"""

from tts_pipeline.tracking.client import LockedClient, ui_url
from tts_pipeline.tracking.queries import experiment_id, find_child_runs, get_run, metric_history
from tts_pipeline.tracking.runs import close_parent_run, open_parent_run, stage_run
from tts_pipeline.tracking.settings import (
    ARTIFACTS_DIR,
    DB_NAME,
    ENV_ENABLED,
    ENV_EXPERIMENT,
    ENV_LOG_EVERY_N_STEPS,
    ENV_LOG_MODELS,
    ENV_PARENT_RUN_ID,
    ENV_URI,
    RUN_STATUSES,
    TrackingSettings,
    default_uri,
    settings_from_env,
)
from tts_pipeline.tracking.sink import StageRun
from tts_pipeline.tracking.tags import flatten_params, git_commit

__all__ = [
    "ARTIFACTS_DIR",
    "DB_NAME",
    "ENV_ENABLED",
    "ENV_EXPERIMENT",
    "ENV_LOG_EVERY_N_STEPS",
    "ENV_LOG_MODELS",
    "ENV_PARENT_RUN_ID",
    "ENV_URI",
    "RUN_STATUSES",
    "LockedClient",
    "StageRun",
    "TrackingSettings",
    "close_parent_run",
    "default_uri",
    "experiment_id",
    "find_child_runs",
    "flatten_params",
    "get_run",
    "git_commit",
    "metric_history",
    "open_parent_run",
    "settings_from_env",
    "stage_run",
    "ui_url",
]
