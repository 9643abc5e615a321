"""Runs: the workflow's parent run (one per invocation) and each job's child run (:func:`stage_run`).

A tracking server that is away never ends a job nor the workflow's end hooks: a job's calls wait in
its outbox (:mod:`.outbox`), and the parent run's end warns (:func:`close_parent_run`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import shlex
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tts_pipeline.config import PipelineConfig, config_hash
from tts_pipeline.errors import UserError
from tts_pipeline.tracking.client import LockedClient, find_experiment_id
from tts_pipeline.tracking.outages import describe, is_unreachable
from tts_pipeline.tracking.process import owner_is_gone, this_process_tags
from tts_pipeline.tracking.settings import (
    ENV_ENABLED,
    ENV_PARENT_RUN_ID,
    ENV_URI,
    RUN_STATUSES,
    TrackingSettings,
    parse_bool,
    settings_from_env,
)
from tts_pipeline.tracking.sink import StageRun, dataset_input
from tts_pipeline.tracking.tags import chunks, clean_tags, flatten_params, git_commit, standard_tags

if TYPE_CHECKING:
    from mlflow import MlflowClient

log = logging.getLogger(__name__)


# --------------------------------------------------------------------------------------------------
# parent run (one per workflow invocation that runs jobs)
# --------------------------------------------------------------------------------------------------

WORKFLOW_RUN_TAG = "workflow_run"
"""Tag of every job's run: the parent run of the invocation that last ran it. A resumed training run
keeps the parent that started it (``mlflow.parentRunId``) and is found by this tag too."""


def open_parent_run(config: PipelineConfig, *, description: str = "") -> dict[str, str]:
    """Create the experiment if missing and open the workflow's parent run.

    Runs left RUNNING by a workflow whose ``snakemake`` process is gone (a hard kill) are ended KILLED
    first. The parent run holds the whole resolved config: flattened as params (so the compare view
    shows which settings differ between two workflow runs) and as the artifact ``config.yaml``.

    Returns the environment variables that hand the settings (and the parent run id) to every job,
    and sets them in ``os.environ`` so that processes started from here inherit them. With tracking
    off, returns (and sets) only ``TTS_TRACKING=0`` and touches nothing else.
    """
    settings = settings_from_env(TrackingSettings.from_config(config))
    settings = replace(settings, parent_run_id=None)
    if settings.enabled:
        resolved = config.model_dump(mode="json")
        commit = git_commit()
        tags = clean_tags(
            {
                "experiment": settings.experiment,
                "kind": "workflow",
                "dataset": config.corpus.name,
                "git_commit": commit,
                "invocation": shlex.join(sys.argv),
                "config_hash": config_hash(resolved),
                "mlflow.note.content": description or None,
                **standard_tags("snakemake (workflow/Snakefile)", commit),
                **this_process_tags(),
            }
        )
        run_name = "workflow " + datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S")

        def create(client: MlflowClient) -> str:
            experiment_id = find_experiment_id(client, settings)
            assert experiment_id is not None
            end_orphaned_runs(client, experiment_id)
            run_id = client.create_run(experiment_id, tags=tags, run_name=run_name).info.run_id
            _log_params(client, run_id, resolved)
            client.log_dict(run_id, resolved, "config.yaml")
            return run_id

        run_id = LockedClient(settings.uri).call(create)
        settings = replace(settings, parent_run_id=run_id)
        log.info("MLflow parent run %s in experiment %r (%s)", run_id, settings.experiment, settings.uri)
    env = settings.to_env()
    if not settings.enabled:
        # A parent run id inherited from an earlier shell session must not reach the jobs.
        os.environ.pop(ENV_PARENT_RUN_ID, None)
    os.environ.update(env)
    return env


def close_parent_run(
    status: str,
    environ: Mapping[str, str] | None = None,
    *,
    summary: Mapping[str, float] | None = None,
    job_logs: Mapping[str, str | Path] | None = None,
    dataset: tuple[str, Sequence[str | Path]] | None = None,
) -> None:
    """End the parent run named by ``TTS_PARENT_RUN_ID`` with ``FINISHED``, ``FAILED`` or ``KILLED``.

    Args:
        status: The workflow's end.
        environ: Where the ``TTS_*`` variables are (``os.environ`` by default).
        summary: Figures of the finished workflow (final losses, benchmark headline), logged on the
            parent run so that two workflow runs compare side by side, one row each.
        job_logs: rule -> its log file; each job run of this invocation gets its log as an artifact
            (``logs/<rule>.log``).
        dataset: ``(name, manifest files)``: the data the workflow's models were trained on.

    A parent run whose invocation ran no tracked job is deleted instead: an invocation with nothing
    to do leaves no trace in the runs table. Job runs still RUNNING (a job killed from outside, which
    could not end its own run) end with the workflow's status (KILLED when the workflow finished).
    A no-op when tracking is off or no parent run is open. A server that does not answer is warned
    about, not raised: the workflow's result stands without it.
    """
    if status not in RUN_STATUSES:
        raise UserError(f"run status: expected one of {', '.join(RUN_STATUSES)}, got {status!r}")
    env = os.environ if environ is None else environ
    run_id = env.get(ENV_PARENT_RUN_ID)
    uri = env.get(ENV_URI)
    if not run_id or not uri or not parse_bool(env.get(ENV_ENABLED, "1"), ENV_ENABLED):
        log.debug("no MLflow parent run to close")
        return
    from mlflow.entities import Metric

    def close(client: MlflowClient) -> None:
        experiment_id = client.get_run(run_id).info.experiment_id
        jobs = _invocation_runs(client, experiment_id, run_id)
        if not jobs:
            client.delete_run(run_id)
            return
        for job in jobs:
            if job.info.status == "RUNNING":
                client.set_terminated(job.info.run_id, status="KILLED" if status == "FINISHED" else status)
            rule = job.data.tags.get("rule", "")
            path = Path((job_logs or {}).get(rule, ""))
            if rule and path.is_file():
                # a resumed run collects one log per invocation
                resumed = job.data.tags.get("mlflow.parentRunId") != run_id
                client.log_artifact(job.info.run_id, str(path), f"logs/{run_id}" if resumed else "logs")
        if dataset is not None and dataset[1]:
            client.log_inputs(run_id, datasets=[dataset_input(*dataset)])
        if summary:
            timestamp = int(time.time() * 1000)
            metrics = [Metric(key, float(value), timestamp, 0) for key, value in summary.items()]
            for chunk in chunks(metrics, _max_metrics_per_batch()):
                client.log_batch(run_id, metrics=chunk)
        client.set_terminated(run_id, status=status)

    try:
        LockedClient(uri).call(close)
    except Exception as error:
        if not is_unreachable(error):
            raise
        log.warning(
            "MLflow tracking server %s is unreachable (%s): the workflow's run %s is not ended %s there; the "
            "next workflow run that reaches the server ends it KILLED, and its job runs with it",
            uri,
            describe(error),
            run_id,
            status,
        )


def end_orphaned_runs(client: MlflowClient, experiment_id: str) -> list[str]:
    """End KILLED the RUNNING parent runs (and their RUNNING job runs) whose ``snakemake`` process is
    gone; delete those that ran no job. Returns their run ids."""
    candidates = client.search_runs(
        [experiment_id], filter_string="tags.kind = 'workflow' and attributes.status = 'RUNNING'"
    )
    ended = []
    for parent in candidates:
        if not owner_is_gone(parent.data.tags):
            continue
        parent_id = parent.info.run_id
        jobs = _invocation_runs(client, experiment_id, parent_id)
        for job in jobs:
            if job.info.status == "RUNNING":
                client.set_terminated(job.info.run_id, status="KILLED")
        if jobs:
            client.set_terminated(parent_id, status="KILLED")
        else:
            client.delete_run(parent_id)
        log.warning(
            "MLflow run %r (%s) was left RUNNING by a workflow that no longer runs: ended KILLED",
            parent.info.run_name,
            parent_id,
        )
        ended.append(parent_id)
    return ended


def _invocation_runs(client: MlflowClient, experiment_id: str, parent_id: str) -> list[Any]:
    """The job runs an invocation ran (new ones, and resumed ones started by earlier invocations)."""
    return client.search_runs(
        [experiment_id],
        filter_string=f"tags.{WORKFLOW_RUN_TAG} = '{parent_id}'",
        order_by=["attributes.start_time ASC"],
    )


def _max_metrics_per_batch() -> int:
    from mlflow.utils.validation import MAX_METRICS_PER_BATCH

    return MAX_METRICS_PER_BATCH


def _log_params(client: MlflowClient, run_id: str, params: Mapping[str, Any]) -> None:
    from mlflow.entities import Param
    from mlflow.utils.validation import MAX_PARAMS_TAGS_PER_BATCH

    entries = [Param(key, value) for key, value in flatten_params(params).items()]
    for chunk in chunks(entries, MAX_PARAMS_TAGS_PER_BATCH):
        client.log_batch(run_id, params=chunk)


# --------------------------------------------------------------------------------------------------
# child run (one per job)
# --------------------------------------------------------------------------------------------------


def _rank_from_env(environ: Mapping[str, str] | None = None) -> int:
    env = os.environ if environ is None else environ
    raw = env.get("RANK", "0")
    try:
        return int(raw)
    except ValueError:
        raise UserError(f"environment variable RANK: expected an integer, got {raw!r}") from None


def _start_child(
    client: MlflowClient, settings: TrackingSettings, stage: str, tags: dict[str, str], run_id: str | None
) -> tuple[str, dict[str, str]]:
    """Create the job's run, or reopen ``run_id`` when it exists; returns the run and its params.

    A reopened run keeps its parent (the invocation that started it); its :data:`WORKFLOW_RUN_TAG`
    names the invocation that runs it now.
    """
    from mlflow.exceptions import MlflowException

    if run_id is not None:
        try:
            previous = client.get_run(run_id)
        except MlflowException as error:
            if error.error_code != "RESOURCE_DOES_NOT_EXIST":
                raise
            log.warning("MLflow run %s not found in %s; starting a new run", run_id, settings.uri)
        else:
            client.update_run(run_id, status="RUNNING")
            client.log_batch(run_id, tags=_run_tags(tags))
            return run_id, dict(previous.data.params)
    experiment_id = find_experiment_id(client, settings)
    assert experiment_id is not None
    parent = {"mlflow.parentRunId": settings.parent_run_id} if settings.parent_run_id else {}
    return client.create_run(experiment_id, tags={**tags, **parent}, run_name=stage).info.run_id, {}


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
    """A job's run: tagged, parented, params and the section (``config.yaml``) logged; FINISHED or
    FAILED at the end.

    Args:
        stage: The stage (rule) name.
        section: The config slice the stage received; logged flattened as params and as the artifact
            ``config.yaml``, and hashed into the ``config_hash`` tag.
        settings: Usually ``settings_from_env(TrackingSettings.from_parts(...))``.
        tags: Extra tags, e.g. ``{"dataset": "ljspeech"}``.
        run_id: Continue this run: a training resumed from its checkpoint (the checkpoint's own check
            decided that the weights still hold, e.g. after ``epochs`` was raised), so its curves go on
            in the same run.
        rank: Distributed rank; default ``$RANK`` or 0. Only rank 0 logs.

    Yields:
        A :class:`StageRun`; inactive (every call a no-op) with tracking off, on other ranks, or when
        the tracking server cannot be reached to open the run (a warning says so). Once the run is
        open, a server that goes away only delays its calls (:mod:`.outbox`).
        An exception in the block ends the run FAILED (KILLED for Ctrl-C) and propagates.
    """
    if rank is None:
        rank = _rank_from_env()
    if not settings.enabled or rank != 0:
        yield StageRun()
        return

    client = LockedClient(settings.uri)
    commit = git_commit()
    run_tags = clean_tags(
        {
            "experiment": settings.experiment,
            "kind": "stage",
            "stage": stage,
            "rule": stage,
            "config_hash": config_hash(dict(section)),
            "git_commit": commit,
            WORKFLOW_RUN_TAG: settings.parent_run_id,
            **standard_tags(f"tts-pipeline {stage}", commit),
            **(tags or {}),
        }
    )
    try:
        # MLflow's full retry budget here: the job has not started, and a run made later could not
        # be found by the checkpoints that name it
        started = client.call(lambda c: _start_child(c, settings, stage, run_tags, run_id))
    except Exception as error:
        if not is_unreachable(error):
            raise
        log.warning(
            "MLflow tracking server %s is unreachable (%s): %s runs untracked", settings.uri, describe(error), stage
        )
        started = None
    if started is None:
        yield StageRun()
        return
    child_id, earlier_params = started
    run = StageRun(client, child_id, earlier_params)
    try:
        run.log_params(section)
        run.log_dict(dict(section), "config.yaml")
        yield run
    except BaseException as error:
        status = "KILLED" if isinstance(error, KeyboardInterrupt) else "FAILED"
        try:
            run.end(status)
        except Exception as end_error:  # the stage's own error matters more than this one
            log.warning("could not mark MLflow run %s %s: %s", child_id, status, end_error)
        raise
    run.end("FINISHED")
