"""MLflow tracking: one parent run per workflow invocation, one child run per job.

This is the only module that imports mlflow, and it does so inside functions, so that importing it
(and every stage's ``--help``) stays fast and a pipeline with tracking off never loads mlflow.

How the pieces meet:

- The Snakefile's ``onstart`` hook calls :func:`open_parent_run`. It creates the experiment and a
  parent run, and exports ``TTS_*`` environment variables that every job inherits.
- Each job builds its default :class:`TrackingSettings` from its config (results dir, experiment,
  tracking section), lets the environment override them (:func:`settings_from_env`) and wraps its
  work in :func:`stage_run`, a child run of the parent.
- ``onsuccess`` / ``onerror`` call :func:`close_parent_run`.

Several jobs log into one SQLite file at once. SQLite allows one writer at a time and MLflow does not
wait long for it, so every call into a SQLite store holds a file lock beside the database (held per
call, never for a whole stage) and retries briefly if the database still reports itself locked.
The lock also makes the first-time creation of the database tables safe when jobs start together.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from tts_pipeline.config import PipelineConfig, TrackingConfig, config_hash
from tts_pipeline.errors import UserError

if TYPE_CHECKING:
    from mlflow import MlflowClient

log = logging.getLogger(__name__)

T = TypeVar("T")

# Environment variables through which the workflow's parent-run hook configures every job.
ENV_ENABLED = "TTS_TRACKING"
ENV_URI = "TTS_TRACKING_URI"
ENV_EXPERIMENT = "TTS_MLFLOW_EXPERIMENT"
ENV_PARENT_RUN_ID = "TTS_PARENT_RUN_ID"

RUN_STATUSES = ("FINISHED", "FAILED", "KILLED")

DB_NAME = "mlflow.db"
ARTIFACTS_DIR = "mlartifacts"

# A tracking call holds the store lock for milliseconds; minutes of waiting means something is stuck.
_LOCK_TIMEOUT_S = 300.0
# Retries when SQLite still says "database is locked" (another reader, such as `mlflow ui`).
_LOCKED_RETRIES = 6
_LOCKED_BACKOFF_S = 0.2

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


# --------------------------------------------------------------------------------------------------
# settings
# --------------------------------------------------------------------------------------------------


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
        uri = _absolute_sqlite_uri(tracking.uri) if tracking.uri else default_uri(results_dir)
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
        db_path = _sqlite_path(self.uri)
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
        settings = replace(settings, enabled=_parse_bool(env[ENV_ENABLED], ENV_ENABLED))
    if env.get(ENV_URI):
        settings = replace(settings, uri=_absolute_sqlite_uri(env[ENV_URI]))
    if env.get(ENV_EXPERIMENT):
        settings = replace(settings, experiment=env[ENV_EXPERIMENT])
    if env.get(ENV_PARENT_RUN_ID):
        settings = replace(settings, parent_run_id=env[ENV_PARENT_RUN_ID])
    return settings


def _parse_bool(value: str, name: str) -> bool:
    lowered = value.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise UserError(f"environment variable {name}: expected 0 or 1, got {value!r}")


def _sqlite_path(uri: str) -> Path | None:
    """The database file of a ``sqlite:///`` URI, or None for other stores and in-memory SQLite."""
    scheme, sep, rest = uri.partition(":///")
    if not sep or scheme.split("+")[0] != "sqlite":
        return None
    path = rest.split("?", 1)[0]
    if path in ("", ":memory:"):
        return None
    return Path(path)


def _absolute_sqlite_uri(uri: str) -> str:
    """Make a relative SQLite path absolute, so that every job resolves it to the same file."""
    path = _sqlite_path(uri)
    if path is None or path.is_absolute():
        return uri
    scheme, _, rest = uri.partition(":///")
    _, question_mark, query = rest.partition("?")
    return f"{scheme}:///{path.resolve()}{question_mark}{query}"


# --------------------------------------------------------------------------------------------------
# access to the store
# --------------------------------------------------------------------------------------------------


def _import_mlflow_client() -> type[MlflowClient]:
    # MLflow's telemetry starts when mlflow is imported; there is no network to send it to, and a
    # pipeline should not phone home anyway. A user's explicit setting wins.
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
    from mlflow import MlflowClient

    return MlflowClient


def _store_lock(uri: str) -> contextlib.AbstractContextManager[Any]:
    """A cross-process lock beside a SQLite database; nothing for stores that handle concurrency."""
    db_path = _sqlite_path(uri)
    if db_path is None:
        return contextlib.nullcontext()
    from filelock import FileLock

    db_path.parent.mkdir(parents=True, exist_ok=True)
    return FileLock(f"{db_path}.lock", timeout=_LOCK_TIMEOUT_S)


def _is_locked_error(error: BaseException) -> bool:
    """True if SQLite's "database is locked" is anywhere in the exception chain."""
    seen: BaseException | None = error
    while seen is not None:
        if "database is locked" in str(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


class _LockedClient:
    """An MlflowClient whose calls each hold the store's lock (for the call only)."""

    def __init__(self, uri: str) -> None:
        self.uri = uri
        self._lock = _store_lock(uri)
        self._client: MlflowClient | None = None

    def call(self, operation: Callable[[MlflowClient], T]) -> T:
        """Run ``operation(client)`` under the lock, retrying while SQLite reports itself locked."""
        client_class = _import_mlflow_client()
        if self._client is None and _sqlite_path(self.uri) is not None:
            # Importing the SQL store takes a second; do it before queueing for the lock, so that
            # jobs starting together import in parallel and hold the lock only for database work.
            import mlflow.store.tracking.sqlalchemy_store  # noqa: F401
        with self._lock:
            attempt = 0
            while True:
                try:
                    if self._client is None:
                        # Creating the client opens the store, which creates or migrates the
                        # database tables: that must happen under the lock too.
                        self._client = client_class(tracking_uri=self.uri)
                    return operation(self._client)
                except Exception as error:
                    # A failed call rolled its transaction back, so repeating it is safe.
                    attempt += 1
                    if attempt >= _LOCKED_RETRIES or not _is_locked_error(error):
                        raise
                    log.debug("MLflow store %s is locked; retrying (%s)", self.uri, error)
                    time.sleep(_LOCKED_BACKOFF_S * 2 ** (attempt - 1))


def _experiment_id(client: MlflowClient, settings: TrackingSettings, *, create: bool = True) -> str | None:
    """Id of the settings' experiment, created (with its artifact location) or restored if needed."""
    from mlflow.exceptions import MlflowException

    experiment = client.get_experiment_by_name(settings.experiment)
    if experiment is None:
        if not create:
            return None
        try:
            return client.create_experiment(settings.experiment, artifact_location=settings.artifact_location)
        except MlflowException as error:
            # Another process (on a store without our lock, e.g. a server) created it first.
            if error.error_code != "RESOURCE_ALREADY_EXISTS":
                raise
            experiment = client.get_experiment_by_name(settings.experiment)
            assert experiment is not None
    if experiment.lifecycle_stage == "deleted" and create:
        client.restore_experiment(experiment.experiment_id)
    return experiment.experiment_id


# --------------------------------------------------------------------------------------------------
# tags, params
# --------------------------------------------------------------------------------------------------


def git_commit(directory: str | Path | None = None) -> str:
    """The commit checked out where the code runs from, or "unknown" outside a git checkout."""
    directory = Path(directory) if directory is not None else Path(__file__).resolve().parent
    try:
        result = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=directory, capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    commit = result.stdout.strip()
    return commit if result.returncode == 0 and commit else "unknown"


def flatten_params(section: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    """Nested mapping -> ``{"a.b.c": "value"}`` with MLflow-safe string values.

    Strings are kept as they are; other values are written as JSON (``true``, ``null``, ``[1, 2]``),
    the way they read in the YAML config. Values longer than MLflow's limit are truncated.
    """
    from mlflow.utils.validation import MAX_PARAM_VAL_LENGTH

    flat: dict[str, str] = {}
    for key, value in section.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            flat.update(flatten_params(value, prefix=f"{name}."))
            continue
        text = value if isinstance(value, str) else json.dumps(value, default=str)
        flat[name] = _truncate(text, MAX_PARAM_VAL_LENGTH)
    return flat


def _truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _clean_tags(tags: Mapping[str, Any]) -> dict[str, str]:
    from mlflow.utils.validation import MAX_TAG_VAL_LENGTH

    return {key: _truncate(str(value), MAX_TAG_VAL_LENGTH) for key, value in tags.items() if value is not None}


def _chunks(items: list[T], size: int) -> Iterator[list[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


# --------------------------------------------------------------------------------------------------
# parent run (one per workflow invocation)
# --------------------------------------------------------------------------------------------------


def open_parent_run(config: PipelineConfig, *, description: str = "") -> dict[str, str]:
    """Create the experiment if missing and open the workflow's parent run.

    Returns the environment variables that hand the settings (and the parent run id) to every job,
    and sets them in ``os.environ`` so that processes started from here inherit them. With tracking
    off, returns (and sets) only ``TTS_TRACKING=0`` and touches nothing else.
    """
    settings = settings_from_env(TrackingSettings.from_config(config))
    settings = replace(settings, parent_run_id=None)
    if settings.enabled:
        tags = _clean_tags(
            {
                "experiment": settings.experiment,
                "kind": "workflow",
                "git_commit": git_commit(),
                "invocation": shlex.join(sys.argv),
                "config_hash": config_hash(config.model_dump(mode="json")),
                "mlflow.note.content": description or None,
            }
        )
        run_name = "workflow " + datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S")

        def create(client: MlflowClient) -> str:
            experiment_id = _experiment_id(client, settings)
            assert experiment_id is not None
            return client.create_run(experiment_id, tags=tags, run_name=run_name).info.run_id

        run_id = _LockedClient(settings.uri).call(create)
        settings = replace(settings, parent_run_id=run_id)
        log.info("MLflow parent run %s in experiment %r (%s)", run_id, settings.experiment, settings.uri)
    env = settings.to_env()
    if not settings.enabled:
        # A parent run id inherited from an earlier shell session must not reach the jobs.
        os.environ.pop(ENV_PARENT_RUN_ID, None)
    os.environ.update(env)
    return env


def close_parent_run(status: str, environ: Mapping[str, str] | None = None) -> None:
    """End the parent run named by ``TTS_PARENT_RUN_ID`` with ``FINISHED``, ``FAILED`` or ``KILLED``.

    A no-op when tracking is off or no parent run is open.
    """
    if status not in RUN_STATUSES:
        raise UserError(f"run status: expected one of {', '.join(RUN_STATUSES)}, got {status!r}")
    env = os.environ if environ is None else environ
    run_id = env.get(ENV_PARENT_RUN_ID)
    uri = env.get(ENV_URI)
    if not run_id or not uri or not _parse_bool(env.get(ENV_ENABLED, "1"), ENV_ENABLED):
        log.debug("no MLflow parent run to close")
        return
    _LockedClient(uri).call(lambda client: client.set_terminated(run_id, status=status))


# --------------------------------------------------------------------------------------------------
# child run (one per job)
# --------------------------------------------------------------------------------------------------


class StageRun:
    """Logging handle of one job's child run. Every method is a no-op when the run is inactive
    (tracking off, or a process other than rank 0)."""

    def __init__(self, client: _LockedClient | None = None, run_id: str | None = None) -> None:
        self._client = client
        self.run_id = run_id

    @property
    def active(self) -> bool:
        return self._client is not None and self.run_id is not None

    def log_params(self, params: Mapping[str, Any]) -> None:
        """Log parameters; nested mappings are flattened to dotted keys."""
        if not self.active:
            return
        from mlflow.entities import Param
        from mlflow.utils.validation import MAX_PARAMS_TAGS_PER_BATCH

        entries = [Param(key, value) for key, value in flatten_params(params).items()]
        for chunk in _chunks(entries, MAX_PARAMS_TAGS_PER_BATCH):
            self._call(lambda client, chunk=chunk: client.log_batch(self.run_id, params=chunk))

    def log_metrics(self, metrics: Mapping[str, float], step: int | None = None) -> None:
        """Log scalar metrics at ``step`` (0 when not given)."""
        if not self.active or not metrics:
            return
        from mlflow.entities import Metric
        from mlflow.utils.validation import MAX_METRICS_PER_BATCH

        timestamp = int(time.time() * 1000)
        entries = [Metric(key, float(value), timestamp, step or 0) for key, value in metrics.items()]
        for chunk in _chunks(entries, MAX_METRICS_PER_BATCH):
            self._call(lambda client, chunk=chunk: client.log_batch(self.run_id, metrics=chunk))

    def set_tags(self, tags: Mapping[str, Any]) -> None:
        """Set (or overwrite) run tags."""
        if not self.active or not tags:
            return
        from mlflow.entities import RunTag

        entries = [RunTag(key, value) for key, value in _clean_tags(tags).items()]
        self._call(lambda client: client.log_batch(self.run_id, tags=entries))

    def log_artifact(self, path: str | Path, artifact_path: str | None = None) -> None:
        """Copy a file or folder into the run's artifacts (under ``artifact_path`` if given)."""
        if not self.active:
            return
        if not Path(path).exists():
            raise FileNotFoundError(f"artifact to log does not exist: {path}")
        self._call(lambda client: client.log_artifact(self.run_id, str(path), artifact_path))

    def log_dict(self, obj: Any, name: str) -> None:
        """Save ``obj`` as the artifact ``name`` (JSON, or YAML if the name ends in .yaml/.yml)."""
        if not self.active:
            return
        self._call(lambda client: client.log_dict(self.run_id, obj, name))

    def _call(self, operation: Callable[[MlflowClient], T]) -> T:
        assert self._client is not None
        return self._client.call(operation)


def _rank_from_env(environ: Mapping[str, str] | None = None) -> int:
    env = os.environ if environ is None else environ
    raw = env.get("RANK", "0")
    try:
        return int(raw)
    except ValueError:
        raise UserError(f"environment variable RANK: expected an integer, got {raw!r}") from None


def _start_child(
    client: MlflowClient, settings: TrackingSettings, stage: str, tags: dict[str, str], run_id: str | None
) -> str:
    """Create the child run, or reopen ``run_id`` when it exists and was made by the same config."""
    from mlflow.exceptions import MlflowException

    if run_id is not None:
        try:
            previous = client.get_run(run_id)
        except MlflowException as error:
            if error.error_code != "RESOURCE_DOES_NOT_EXIST":
                raise
            log.warning("MLflow run %s not found in %s; starting a new run", run_id, settings.uri)
        else:
            if previous.data.tags.get("config_hash") == tags["config_hash"]:
                client.update_run(run_id, status="RUNNING")
                client.log_batch(run_id, tags=_run_tags(tags))
                return run_id
            log.warning("MLflow run %s was made by another config; starting a new run", run_id)
    experiment_id = _experiment_id(client, settings)
    assert experiment_id is not None
    return client.create_run(experiment_id, tags=tags, run_name=stage).info.run_id


def _run_tags(tags: Mapping[str, str]) -> list[Any]:
    from mlflow.entities import RunTag

    return [RunTag(key, value) for key, value in tags.items()]


@contextlib.contextmanager
def stage_run(
    stage: str,
    section: Mapping[str, Any],
    *,
    settings: TrackingSettings,
    tags: Mapping[str, Any] | None = None,
    run_id: str | None = None,
    rank: int | None = None,
) -> Iterator[StageRun]:
    """A child run around one job: tagged, parented, params logged; FINISHED or FAILED at the end.

    Args:
        stage: The stage (rule) name.
        section: The config slice the stage received; logged flattened as params and hashed into the
            ``config_hash`` tag.
        settings: Usually ``settings_from_env(TrackingSettings.from_parts(...))``.
        tags: Extra tags, e.g. ``{"dataset": "ljspeech"}``.
        run_id: Continue this run (a resumed training) if it exists and has the same config hash.
        rank: Distributed rank; default ``$RANK`` or 0. Only rank 0 logs.

    Yields:
        A :class:`StageRun`; inactive (every call a no-op) with tracking off or on other ranks.
        An exception in the block ends the run FAILED (KILLED for Ctrl-C) and propagates.
    """
    if rank is None:
        rank = _rank_from_env()
    if not settings.enabled or rank != 0:
        yield StageRun()
        return

    client = _LockedClient(settings.uri)
    run_tags = _clean_tags(
        {
            "experiment": settings.experiment,
            "kind": "stage",
            "stage": stage,
            "rule": stage,
            "config_hash": config_hash(dict(section)),
            "git_commit": git_commit(),
            "mlflow.parentRunId": settings.parent_run_id,
            **(tags or {}),
        }
    )
    child_id = client.call(lambda c: _start_child(c, settings, stage, run_tags, run_id))
    run = StageRun(client, child_id)
    try:
        run.log_params(section)
        yield run
    except BaseException as error:
        status = "KILLED" if isinstance(error, KeyboardInterrupt) else "FAILED"
        _end_quietly(client, child_id, status)
        raise
    client.call(lambda c: c.set_terminated(child_id, status="FINISHED"))


def _end_quietly(client: _LockedClient, run_id: str, status: str) -> None:
    """Mark a run ended without masking the exception that ended it."""
    try:
        client.call(lambda c: c.set_terminated(run_id, status=status))
    except Exception as error:  # the stage's own error matters more than this one
        log.warning("could not mark MLflow run %s %s: %s", run_id, status, error)


# --------------------------------------------------------------------------------------------------
# queries
# --------------------------------------------------------------------------------------------------


def _run_summary(run: Any) -> dict[str, Any]:
    return {
        "run_id": run.info.run_id,
        "name": run.info.run_name,
        "status": run.info.status,
        "artifact_uri": run.info.artifact_uri,
        "tags": dict(run.data.tags),
        "params": dict(run.data.params),
        "metrics": dict(run.data.metrics),
    }


def get_run(settings: TrackingSettings, run_id: str) -> dict[str, Any]:
    """One run as a plain dict: run_id, name, status, artifact_uri, tags, params, metrics (latest)."""
    return _LockedClient(settings.uri).call(lambda client: _run_summary(client.get_run(run_id)))


def find_child_runs(settings: TrackingSettings, parent_run_id: str) -> list[dict[str, Any]]:
    """The child runs of a parent run (oldest first), each as :func:`get_run` describes it."""
    if not settings.enabled:
        return []

    def search(client: MlflowClient) -> list[dict[str, Any]]:
        experiment_id = _experiment_id(client, settings, create=False)
        if experiment_id is None:
            return []
        runs = client.search_runs(
            [experiment_id],
            filter_string=f"tags.`mlflow.parentRunId` = '{parent_run_id}'",
            order_by=["attributes.start_time ASC"],
        )
        return [_run_summary(run) for run in runs]

    return _LockedClient(settings.uri).call(search)


def metric_history(settings: TrackingSettings, run_id: str, key: str) -> list[tuple[int, float]]:
    """Every ``(step, value)`` logged for one metric of a run, in step order."""
    history = _LockedClient(settings.uri).call(lambda client: client.get_metric_history(run_id, key))
    return sorted((metric.step, metric.value) for metric in history)
