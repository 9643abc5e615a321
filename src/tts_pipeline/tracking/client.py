"""Access to the MLflow store: a client whose every call holds the store's lock, and the experiment.

Several jobs log into one SQLite file at once. SQLite allows one writer at a time and MLflow does not
wait long for it, so every call into a SQLite store holds a file lock beside the database (held per
call, never for a whole stage) and retries briefly if the database still reports itself locked.
The lock also makes the first-time creation of the database tables safe when jobs start together.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from tts_pipeline.config.folders import sqlite_path
from tts_pipeline.tracking.settings import ARTIFACTS_DIR, TrackingSettings

if TYPE_CHECKING:
    from mlflow import MlflowClient

log = logging.getLogger(__name__)

T = TypeVar("T")

# A tracking call holds the store lock for milliseconds; minutes of waiting means something is stuck.
LOCK_TIMEOUT_S = 300.0
# Retries when SQLite still says "database is locked" (another reader, such as `mlflow ui`).
LOCKED_RETRIES = 6
LOCKED_BACKOFF_S = 0.2


def import_mlflow_client() -> type[MlflowClient]:
    # MLflow's telemetry starts when mlflow is imported; there is no network to send it to, and a
    # pipeline should not phone home anyway. A user's explicit setting wins.
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
    from mlflow import MlflowClient

    return MlflowClient


def store_lock(uri: str) -> contextlib.AbstractContextManager[Any]:
    """A cross-process lock beside a SQLite database; nothing for stores that handle concurrency."""
    db_path = sqlite_path(uri)
    if db_path is None:
        return contextlib.nullcontext()
    from filelock import FileLock

    db_path.parent.mkdir(parents=True, exist_ok=True)
    return FileLock(f"{db_path}.lock", timeout=LOCK_TIMEOUT_S)


def is_locked_error(error: BaseException) -> bool:
    """True if SQLite's "database is locked" is anywhere in the exception chain."""
    seen: BaseException | None = error
    while seen is not None:
        if "database is locked" in str(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


class LockedClient:
    """An MlflowClient whose calls each hold the store's lock (for the call only)."""

    def __init__(self, uri: str) -> None:
        self.uri = uri
        self._lock = store_lock(uri)
        self._client: MlflowClient | None = None

    def call(self, operation: Callable[[MlflowClient], T]) -> T:
        """Run ``operation(client)`` under the lock, retrying while SQLite reports itself locked."""
        client_class = import_mlflow_client()
        if self._client is None and sqlite_path(self.uri) is not None:
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
                        create_sqlite_store(self.uri)
                        self._client = client_class(tracking_uri=self.uri)
                    return operation(self._client)
                except Exception as error:
                    # A failed call rolled its transaction back, so repeating it is safe.
                    attempt += 1
                    if attempt >= LOCKED_RETRIES or not is_locked_error(error):
                        raise
                    log.debug("MLflow store %s is locked; retrying (%s)", self.uri, error)
                    time.sleep(LOCKED_BACKOFF_S * 2 ** (attempt - 1))


EXPERIMENT_KIND_TAG = "mlflow.experimentKind"
MODEL_TRAINING = "custom_model_development"
"""The experiment tag MLflow 3's UI reads to open an experiment as model training (runs, charts,
compare), not as a GenAI app (traces, evaluations)."""


def ui_url(base: str, experiment_id: str | None) -> str:
    """The MLflow UI's page of an experiment's runs, in its model-training view.

    MLflow 3.17's UI opens the view a browser last chose (GenAI on a first visit) whatever the
    experiment's kind; ``workflowType`` in the address picks model training.
    """
    view = "?workflowType=machine_learning"
    return f"{base}/#/experiments/{experiment_id}/runs{view}" if experiment_id else f"{base}/#/experiments{view}"


def create_sqlite_store(uri: str) -> None:
    """Create a SQLite store that does not exist yet, its Default experiment's artifacts beside it.

    Left to MlflowClient, a new store's Default experiment points at ``<current folder>/mlruns``, and
    MLflow 3.17 writes that path into SQL in a way that fails when the folder's name holds both kinds
    of quote. Nothing is ever logged there; the location just has to be a path of the store's own.
    """
    db_path = sqlite_path(uri)
    if db_path is None or db_path.exists():
        return
    from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore

    db_path.parent.mkdir(parents=True, exist_ok=True)
    SqlAlchemyStore(uri, (db_path.parent / ARTIFACTS_DIR).as_uri())


def find_experiment_id(client: MlflowClient, settings: TrackingSettings, *, create: bool = True) -> str | None:
    """Id of the settings' experiment, created (with its artifact location, as model training) or
    restored if needed."""
    from mlflow.exceptions import MlflowException

    experiment = client.get_experiment_by_name(settings.experiment)
    if experiment is None:
        if not create:
            return None
        try:
            return client.create_experiment(
                settings.experiment,
                artifact_location=settings.artifact_location,
                tags={EXPERIMENT_KIND_TAG: MODEL_TRAINING},
            )
        except MlflowException as error:
            # Another process (on a store without our lock, e.g. a server) created it first.
            if error.error_code != "RESOURCE_ALREADY_EXISTS":
                raise
            experiment = client.get_experiment_by_name(settings.experiment)
            assert experiment is not None
    if create:
        if experiment.lifecycle_stage == "deleted":
            client.restore_experiment(experiment.experiment_id)
        if EXPERIMENT_KIND_TAG not in experiment.tags:  # made by an earlier version, or by hand
            client.set_experiment_tag(experiment.experiment_id, EXPERIMENT_KIND_TAG, MODEL_TRAINING)
    return experiment.experiment_id
