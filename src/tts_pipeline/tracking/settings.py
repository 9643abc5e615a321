"""Where and whether a process logs: :class:`TrackingSettings`, from a config and the environment.

The workflow's parent-run hook exports the ``TTS_*`` variables below; every job inherits them and
:func:`settings_from_env` lets them override the job's own defaults.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from tts_pipeline.config import PipelineConfig, TrackingConfig
from tts_pipeline.config.folders import sqlite_path
from tts_pipeline.errors import UserError

# Environment variables through which the workflow's parent-run hook configures every job.
ENV_ENABLED = "TTS_TRACKING"
ENV_URI = "TTS_TRACKING_URI"
ENV_EXPERIMENT = "TTS_MLFLOW_EXPERIMENT"
ENV_PARENT_RUN_ID = "TTS_PARENT_RUN_ID"
# What a training stage logs (tracking.log_every_n_steps, tracking.log_models): these travel in the
# environment, not in a rule's params, because they never change a result.
ENV_LOG_EVERY_N_STEPS = "TTS_LOG_EVERY_N_STEPS"
ENV_LOG_MODELS = "TTS_LOG_MODELS"

RUN_STATUSES = ("FINISHED", "FAILED", "KILLED")

DB_NAME = "mlflow.db"
ARTIFACTS_DIR = "mlartifacts"

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


@dataclass(frozen=True)
class TrackingSettings:
    """Where and whether a process logs.

    Attributes:
        enabled: False turns every tracking call into a no-op (nothing mlflow-related on disk).
        uri: MLflow tracking URI.
        experiment: MLflow experiment name (the config's ``experiment``).
        parent_run_id: The workflow's parent run, when a workflow opened one.
    """

    enabled: bool
    uri: str
    experiment: str
    parent_run_id: str | None = None

    @classmethod
    def from_parts(
        cls, *, results_dir: str | Path, experiment: str, tracking: TrackingConfig | None = None
    ) -> TrackingSettings:
        """Settings from a config's pieces (for stages, which receive only their own sections)."""
        tracking = tracking or TrackingConfig()
        uri = absolute_sqlite_uri(tracking.uri) if tracking.uri else default_uri(results_dir)
        return cls(enabled=tracking.enabled, uri=uri, experiment=experiment)

    @classmethod
    def from_config(cls, config: PipelineConfig) -> TrackingSettings:
        """Settings of a whole pipeline config."""
        return cls.from_parts(results_dir=config.results_dir, experiment=config.experiment, tracking=config.tracking)

    @property
    def artifact_location(self) -> str | None:
        """Where a new experiment keeps its artifacts.

        For a SQLite store: ``<folder of the db>/mlartifacts/<experiment>``, so artifacts never land
        in the current directory's ``./mlruns``. For a server: None (the server decides).
        """
        db_path = sqlite_path(self.uri)
        if db_path is None:
            return None
        return (db_path.parent / ARTIFACTS_DIR / self.experiment).as_uri()

    def to_env(self) -> dict[str, str]:
        """The environment variables that hand these settings to child processes."""
        if not self.enabled:
            return {ENV_ENABLED: "0"}
        env = {ENV_ENABLED: "1", ENV_URI: self.uri, ENV_EXPERIMENT: self.experiment}
        if self.parent_run_id:
            env[ENV_PARENT_RUN_ID] = self.parent_run_id
        return env


def default_uri(results_dir: str | Path) -> str:
    """The default store: ``sqlite:///<absolute results_dir>/mlflow.db``."""
    return f"sqlite:///{Path(results_dir).resolve() / DB_NAME}"


def settings_from_env(
    defaults: TrackingSettings, environ: Mapping[str, str] | None = None
) -> TrackingSettings:
    """``defaults`` overridden by the ``TTS_*`` variables the workflow exported (when present)."""
    env = os.environ if environ is None else environ
    settings = defaults
    if ENV_ENABLED in env:
        settings = replace(settings, enabled=parse_bool(env[ENV_ENABLED], ENV_ENABLED))
    if env.get(ENV_URI):
        settings = replace(settings, uri=absolute_sqlite_uri(env[ENV_URI]))
    if env.get(ENV_EXPERIMENT):
        settings = replace(settings, experiment=env[ENV_EXPERIMENT])
    if env.get(ENV_PARENT_RUN_ID):
        settings = replace(settings, parent_run_id=env[ENV_PARENT_RUN_ID])
    return settings


def parse_bool(value: str, name: str) -> bool:
    lowered = value.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise UserError(f"environment variable {name}: expected 0 or 1, got {value!r}")


def absolute_sqlite_uri(uri: str) -> str:
    """Make a relative SQLite path absolute, so that every job resolves it to the same file."""
    path = sqlite_path(uri)
    if path is None or path.is_absolute():
        return uri
    scheme, _, rest = uri.partition(":///")
    _, question_mark, query = rest.partition("?")
    return f"{scheme}:///{path.resolve()}{question_mark}{query}"
