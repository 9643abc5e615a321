"""Reading runs back: one run, the child runs of a parent, a metric's history."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tts_pipeline.tracking.client import LockedClient, find_experiment_id
from tts_pipeline.tracking.runs import WORKFLOW_RUN_TAG
from tts_pipeline.tracking.settings import TrackingSettings

if TYPE_CHECKING:
    from mlflow import MlflowClient


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


def experiment_id(settings: TrackingSettings) -> str | None:
    """The settings' experiment id, or None when the store or the experiment does not exist yet."""
    from tts_pipeline.config.folders import sqlite_path

    db_path = sqlite_path(settings.uri)
    if db_path is not None and not db_path.is_file():
        return None  # asking would create an empty store
    return LockedClient(settings.uri).call(lambda client: find_experiment_id(client, settings, create=False))


def get_run(settings: TrackingSettings, run_id: str) -> dict[str, Any]:
    """One run as a plain dict: run_id, name, status, artifact_uri, tags, params, metrics (latest)."""
    return LockedClient(settings.uri).call(lambda client: _run_summary(client.get_run(run_id)))


def find_child_runs(settings: TrackingSettings, parent_run_id: str) -> list[dict[str, Any]]:
    """The job runs of a workflow invocation (oldest first), each as :func:`get_run` describes it:
    those it started and those it resumed (which stay under the parent that started them)."""
    if not settings.enabled:
        return []

    def search(client: MlflowClient) -> list[dict[str, Any]]:
        experiment_id = find_experiment_id(client, settings, create=False)
        if experiment_id is None:
            return []
        runs = client.search_runs(
            [experiment_id],
            filter_string=f"tags.{WORKFLOW_RUN_TAG} = '{parent_run_id}'",
            order_by=["attributes.start_time ASC"],
        )
        return [_run_summary(run) for run in runs]

    return LockedClient(settings.uri).call(search)


def metric_history(settings: TrackingSettings, run_id: str, key: str) -> list[tuple[int, float]]:
    """Every ``(step, value)`` logged for one metric of a run, in step order."""
    history = LockedClient(settings.uri).call(lambda client: client.get_metric_history(run_id, key))
    return sorted((metric.step, metric.value) for metric in history)
