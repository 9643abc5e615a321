"""Runs: the workflow's parent run (one per invocation) and each job's child run (:func:`stage_run`)."""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import shlex
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from tts_pipeline.config import PipelineConfig, config_hash
from tts_pipeline.errors import UserError
from tts_pipeline.tracking.client import LockedClient, find_experiment_id
from tts_pipeline.tracking.names import dashboard_name
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
from tts_pipeline.tracking.tags import chunks, clean_tags, flatten_params, git_commit, standard_tags

if TYPE_CHECKING:
    from mlflow import MlflowClient

log = logging.getLogger(__name__)

T = TypeVar("T")


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

    LockedClient(uri).call(close)


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


class StageRun:
    """Logging handle of one job's run. Every method is a no-op when the run is inactive (tracking
    off, or a process other than rank 0).

    Attributes:
        run_id: The MLflow run, or None when inactive.
        earlier_params: Params the run already had (a resumed run); :meth:`log_params` keeps them.
    """

    def __init__(
        self,
        client: LockedClient | None = None,
        run_id: str | None = None,
        earlier_params: Mapping[str, str] | None = None,
    ) -> None:
        self._client = client
        self.run_id = run_id
        self.earlier_params = dict(earlier_params or {})

    @property
    def active(self) -> bool:
        return self._client is not None and self.run_id is not None

    def log_params(self, params: Mapping[str, Any]) -> None:
        """Log parameters; nested mappings are flattened to dotted keys.

        MLflow never changes a logged param. A resumed run whose settings changed in a way that keeps
        its weights (more epochs) keeps the first values as params and gets the new ones as the tag
        ``changed_on_resume`` (``hifigan.epochs: 2 -> 4``).
        """
        if not self.active:
            return
        from mlflow.entities import Param
        from mlflow.utils.validation import MAX_PARAMS_TAGS_PER_BATCH

        flat = flatten_params(params)
        changed = {k: v for k, v in flat.items() if k in self.earlier_params and self.earlier_params[k] != v}
        entries = [Param(key, value) for key, value in flat.items() if key not in self.earlier_params]
        for chunk in chunks(entries, MAX_PARAMS_TAGS_PER_BATCH):
            self._call(lambda client, chunk=chunk: client.log_batch(self.run_id, params=chunk))
        self.earlier_params.update({entry.key: entry.value for entry in entries})
        if changed:
            text = "; ".join(f"{key}: {self.earlier_params[key]} -> {value}" for key, value in changed.items())
            self.set_tags({"changed_on_resume": text})

    def log_metrics(self, metrics: Mapping[str, float], step: int | None = None) -> None:
        """Log scalar metrics at ``step`` (0 when not given), under their dashboard names
        (:func:`~tts_pipeline.tracking.names.dashboard_name`: ``train_loss`` -> ``train/loss``)."""
        if not self.active or not metrics:
            return
        from mlflow.entities import Metric
        from mlflow.utils.validation import MAX_METRICS_PER_BATCH

        timestamp = int(time.time() * 1000)
        entries = [Metric(dashboard_name(key), float(value), timestamp, step or 0) for key, value in metrics.items()]
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

    def log_dataset(self, name: str, files: Sequence[str | Path], context: str = "training") -> None:
        """Record the data the run read (MLflow's Dataset column): ``name``, a digest of ``files``'
        bytes (the manifests: the same utterances give the same digest) and where they are."""
        if not self.active or not files:
            return
        entry = dataset_input(name, files, context)
        self._call(lambda client: client.log_inputs(self.run_id, datasets=[entry]))

    def _call(self, operation: Callable[[MlflowClient], T]) -> T:
        assert self._client is not None
        return self._client.call(operation)


def dataset_input(name: str, files: Sequence[str | Path], context: str = "training") -> Any:
    """An MLflow dataset input: ``name``, a digest of ``files``' bytes, the folder they are in."""
    from mlflow.entities import Dataset, DatasetInput, InputTag

    digest = hashlib.sha256()
    for path in files:
        digest.update(Path(path).read_bytes())
    source = str(Path(files[0]).resolve().parent)
    dataset = Dataset(name=name, digest=digest.hexdigest()[:16], source_type="local", source=source)
    return DatasetInput(dataset, tags=[InputTag(key="mlflow.data.context", value=context)])


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
        A :class:`StageRun`; inactive (every call a no-op) with tracking off or on other ranks.
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
    child_id, earlier_params = client.call(lambda c: _start_child(c, settings, stage, run_tags, run_id))
    run = StageRun(client, child_id, earlier_params)
    try:
        run.log_params(section)
        run.log_dict(dict(section), "config.yaml")
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
