"""A job's logging handle (:class:`StageRun`): what stages and training loops log into its run.

Every call goes through the run's :class:`~tts_pipeline.tracking.outbox.Outbox`, so that a tracking
server that is away never stops nor stalls the job: its calls wait and are sent when it is back.
"""

from __future__ import annotations

import copy
import hashlib
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tts_pipeline.tracking.client import LockedClient
from tts_pipeline.tracking.names import dashboard_name
from tts_pipeline.tracking.outbox import Operation, Outbox
from tts_pipeline.tracking.tags import chunks, clean_tags, flatten_params


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
        self._outbox = Outbox(client) if client is not None else None
        self.run_id = run_id
        self.earlier_params = dict(earlier_params or {})

    @property
    def active(self) -> bool:
        return self._outbox is not None and self.run_id is not None

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
            self._send(lambda client, chunk=chunk: client.log_batch(self.run_id, params=chunk), f"{len(chunk)} params")
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

        # The timestamp is taken now, not when the batch reaches the server: a batch that waited
        # through an outage keeps its place in the history.
        timestamp = int(time.time() * 1000)
        entries = [Metric(dashboard_name(key), float(value), timestamp, step or 0) for key, value in metrics.items()]
        assert self._outbox is not None and self.run_id is not None
        for chunk in chunks(entries, MAX_METRICS_PER_BATCH):
            self._outbox.log_metrics(self.run_id, chunk)

    def set_tags(self, tags: Mapping[str, Any]) -> None:
        """Set (or overwrite) run tags."""
        if not self.active or not tags:
            return
        from mlflow.entities import RunTag

        entries = [RunTag(key, value) for key, value in clean_tags(tags).items()]
        self._send(lambda client: client.log_batch(self.run_id, tags=entries), f"{len(entries)} tags")

    def log_artifact(self, path: str | Path, artifact_path: str | None = None) -> None:
        """Copy a file or folder into the run's artifacts (under ``artifact_path`` if given)."""
        if not self.active:
            return
        if not Path(path).exists():
            raise FileNotFoundError(f"artifact to log does not exist: {path}")
        assert self._outbox is not None and self.run_id is not None
        self._outbox.log_artifact(self.run_id, Path(path), artifact_path)

    def log_dict(self, obj: Any, name: str) -> None:
        """Save ``obj`` as the artifact ``name`` (JSON, or YAML if the name ends in .yaml/.yml)."""
        if not self.active:
            return
        snapshot = copy.deepcopy(obj)  # what it is now, even if it is sent after an outage
        self._send(lambda client: client.log_dict(self.run_id, snapshot, name), f"the file {name}")

    def log_dataset(self, name: str, files: Sequence[str | Path], context: str = "training") -> None:
        """Record the data the run read (MLflow's Dataset column): ``name``, a digest of ``files``'
        bytes (the manifests: the same utterances give the same digest) and where they are."""
        if not self.active or not files:
            return
        entry = dataset_input(name, files, context)
        self._send(lambda client: client.log_inputs(self.run_id, datasets=[entry]), f"the dataset {name}")

    def end(self, status: str) -> None:
        """End the run with ``status`` (``FINISHED``, ``FAILED``, ``KILLED``), after whatever still
        waits for the server; with the server still away, warn and go on."""
        if not self.active:
            return
        # the end time is now, also when the call reaches the server after an outage
        end_time = int(time.time() * 1000)
        try:
            self._send(lambda client: client.set_terminated(self.run_id, status, end_time), f"the run's end ({status})")
        finally:
            assert self._outbox is not None
            self._outbox.close()

    def _send(self, operation: Operation, what: str) -> None:
        assert self._outbox is not None
        self._outbox.send(operation, what)


def dataset_input(name: str, files: Sequence[str | Path], context: str = "training") -> Any:
    """An MLflow dataset input: ``name``, a digest of ``files``' bytes, the folder they are in."""
    from mlflow.entities import Dataset, DatasetInput, InputTag

    digest = hashlib.sha256()
    for path in files:
        digest.update(Path(path).read_bytes())
    source = str(Path(files[0]).resolve().parent)
    dataset = Dataset(name=name, digest=digest.hexdigest()[:16], source_type="local", source=source)
    return DatasetInput(dataset, tags=[InputTag(key="mlflow.data.context", value=context)])
