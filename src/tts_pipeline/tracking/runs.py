"""Runs: the workflow's parent run (one per invocation) and each job's child run (:func:`stage_run`)."""

from __future__ import annotations

import contextlib
import logging
import os
import shlex
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from tts_pipeline.config import PipelineConfig, config_hash
from tts_pipeline.errors import UserError
from tts_pipeline.tracking.client import LockedClient, find_experiment_id
from tts_pipeline.tracking.settings import (
    ENV_ENABLED,
    ENV_PARENT_RUN_ID,
    ENV_URI,
    RUN_STATUSES,
    TrackingSettings,
    parse_bool,
    settings_from_env,
)
from tts_pipeline.tracking.tags import chunks, clean_tags, flatten_params, git_commit

if TYPE_CHECKING:
    from mlflow import MlflowClient

log = logging.getLogger(__name__)

T = TypeVar("T")


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
        tags = clean_tags(
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
            experiment_id = find_experiment_id(client, settings)
            assert experiment_id is not None
            return client.create_run(experiment_id, tags=tags, run_name=run_name).info.run_id

        run_id = LockedClient(settings.uri).call(create)
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
    if not run_id or not uri or not parse_bool(env.get(ENV_ENABLED, "1"), ENV_ENABLED):
        log.debug("no MLflow parent run to close")
        return
    LockedClient(uri).call(lambda client: client.set_terminated(run_id, status=status))


# --------------------------------------------------------------------------------------------------
# child run (one per job)
# --------------------------------------------------------------------------------------------------


class StageRun:
    """Logging handle of one job's child run. Every method is a no-op when the run is inactive
    (tracking off, or a process other than rank 0)."""

    def __init__(self, client: LockedClient | None = None, run_id: str | None = None) -> None:
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
        for chunk in chunks(entries, MAX_PARAMS_TAGS_PER_BATCH):
            self._call(lambda client, chunk=chunk: client.log_batch(self.run_id, params=chunk))

    def log_metrics(self, metrics: Mapping[str, float], step: int | None = None) -> None:
        """Log scalar metrics at ``step`` (0 when not given)."""
        if not self.active or not metrics:
            return
        from mlflow.entities import Metric
        from mlflow.utils.validation import MAX_METRICS_PER_BATCH

        timestamp = int(time.time() * 1000)
        entries = [Metric(key, float(value), timestamp, step or 0) for key, value in metrics.items()]
        for chunk in chunks(entries, MAX_METRICS_PER_BATCH):
            self._call(lambda client, chunk=chunk: client.log_batch(self.run_id, metrics=chunk))

    def set_tags(self, tags: Mapping[str, Any]) -> None:
        """Set (or overwrite) run tags."""
        if not self.active or not tags:
            return
        from mlflow.entities import RunTag

        entries = [RunTag(key, value) for key, value in clean_tags(tags).items()]
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
    experiment_id = find_experiment_id(client, settings)
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

    client = LockedClient(settings.uri)
    run_tags = clean_tags(
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


def _end_quietly(client: LockedClient, run_id: str, status: str) -> None:
    """Mark a run ended without masking the exception that ended it."""
    try:
        client.call(lambda c: c.set_terminated(run_id, status=status))
    except Exception as error:  # the stage's own error matters more than this one
        log.warning("could not mark MLflow run %s %s: %s", run_id, status, error)
