"""The outbox: a job's tracking calls go on while the tracking server is away, and reach it later.

Tracking is a side channel of training: a server that does not answer must neither stop nor stall a
days-long run. Every call of a job's run passes through an :class:`Outbox`:

- With the server there, a call goes straight through (trying for a few seconds, see
  :func:`~tts_pipeline.tracking.outages.brief_tries`); a call the server refuses raises as always.
- A call that finds the server away (:func:`~tts_pipeline.tracking.outages.is_unreachable`) waits in
  the outbox, and one warning says so. So does every later call: the order of calls is kept, and each
  metric keeps its step and timestamp, so the history replayed later is the history logged.
  A file to upload is copied aside first: training may overwrite or delete it meanwhile.
- Later calls ask whether the server is back (one short request, every :data:`PROBE_INTERVAL_S`) and,
  once it answers, send what waited, oldest first, a few seconds' worth per call so that training
  does not stand still for a long backlog (metrics are merged into large batches).
- At the end of the run, :meth:`Outbox.close` makes one last try and, if the server is still away,
  warns how many calls were not recorded. Nothing here raises for an outage.

One outbox serves one run from one thread (a job's rank-0 process), so it needs no lock.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tts_pipeline import failure
from tts_pipeline.tracking import outages
from tts_pipeline.tracking.client import LockedClient

if TYPE_CHECKING:
    from mlflow import MlflowClient

log = logging.getLogger(__name__)

# How often a waiting outbox asks whether the server is back. A probe costs one request that is
# refused at once when the server is down (at most PROBE_TIMEOUT_S when its host is gone).
PROBE_INTERVAL_S = 30.0
# How long one call may spend sending what waited; the rest goes with the next calls.
REPLAY_SLICE_S = 5.0

Operation = Callable[["MlflowClient"], Any]


@dataclass
class Pending:
    """One tracking call: what it sends, and how messages name it.

    ``metrics`` (with ``run_id``) marks a batch of metrics, which may be merged with its neighbours;
    ``upload`` (with ``run_id`` and ``artifact_path``) marks a file or folder to upload.
    """

    what: str
    operation: Operation | None = None
    run_id: str = ""
    metrics: list[Any] = field(default_factory=list)
    upload: Path | None = None
    artifact_path: str | None = None

    def send(self, client: MlflowClient) -> None:
        if self.upload is not None:
            client.log_artifact(self.run_id, str(self.upload), self.artifact_path)
        elif self.metrics:
            client.log_batch(self.run_id, metrics=self.metrics)
        else:
            assert self.operation is not None
            self.operation(client)


class Outbox:
    """Tracking calls of one run that survive the server's absence (see the module's docstring).

    Args:
        client: The store.
        probe: Whether the server answers now; :func:`~tts_pipeline.tracking.outages.server_answers`
            by default.
        clock: Seconds, for the probe interval and replay slices.
    """

    def __init__(
        self,
        client: LockedClient,
        *,
        probe: Callable[[], bool] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._client = client
        self._probe = probe or (lambda: outages.server_answers(client.uri))
        self._clock = clock
        self._queue: deque[Pending] = deque()
        self._away = False  # the last call found the server away; only a probe says it is back
        self._warned = False  # said so already, for this outage
        self._last_probe = 0.0
        self._spool: Path | None = None  # copies of the files waiting to be uploaded

    @property
    def waiting(self) -> int:
        """How many calls wait for the server."""
        return len(self._queue)

    def send(self, operation: Operation, what: str) -> None:
        """Run ``operation`` on the client now, or later if the server is away.

        What the operation captures must not change before it is sent (pass copies)."""
        self._submit(Pending(what, operation=operation))

    def log_metrics(self, run_id: str, metrics: list[Any]) -> None:
        """Log a batch of ``mlflow.entities.Metric`` (each with its step and timestamp)."""
        self._submit(Pending(f"{len(metrics)} metrics", run_id=run_id, metrics=list(metrics)))

    def log_artifact(self, run_id: str, path: Path, artifact_path: str | None) -> None:
        """Upload a file or folder; if it has to wait, a copy of it waits."""
        self._submit(Pending(f"the file {path.name}", run_id=run_id, upload=path, artifact_path=artifact_path))

    def close(self) -> None:
        """End of the run: one last try for what waits (asking the server at once); warn about what
        still could not be sent. Never raises."""
        try:
            if self._queue:
                self._last_probe = float("-inf")
                self._replay(deadline=None)
        except Exception as error:  # nothing in tracking may end a job that did its work
            log.warning("MLflow tracking: could not send the calls that waited: %s", error)
        if self._queue:
            log.warning(
                "MLflow tracking server %s is still unreachable at the job's end: %d tracking calls were not "
                "recorded (%s), so its run there is incomplete. The job's own outputs are complete.",
                self._client.uri,
                len(self._queue),
                self._lost(),
            )
            self._queue.clear()
        if self._spool is not None:
            shutil.rmtree(self._spool, ignore_errors=True)
            self._spool = None

    # ----------------------------------------------------------------------------------------------

    def _submit(self, pending: Pending) -> None:
        if not self._queue:
            try:
                self._call(pending)
                return
            except Exception as error:
                if not outages.is_unreachable(error):
                    raise
                self._went_away(error)
        # Behind whatever waits: calls reach the server in the order they were made.
        kept = self._kept(pending)
        if kept is not None:
            self._queue.append(kept)
        self._replay(deadline=self._clock() + REPLAY_SLICE_S)

    def _call(self, pending: Pending) -> None:
        with outages.brief_tries(small_request=pending.upload is None):
            self._client.call(pending.send)

    def _went_away(self, error: BaseException) -> None:
        self._away = True
        self._last_probe = self._clock()
        if not self._warned:
            self._warned = True
            message = (
                f"MLflow tracking server {self._client.uri} is unreachable ({outages.describe(error)}). "
                "Training goes on: this job's metrics, params, tags, files and run status are kept and sent "
                f"when the server answers again (asked every {PROBE_INTERVAL_S:g} s)."
            )
            log.warning(message)
            failure.warn_on_terminal(message)  # once per outage: a job's log is not where a person looks

    def _replay(self, deadline: float | None) -> None:
        """Send what waits, oldest first, until ``deadline`` (None: all of it). While the server is
        away, first ask (at most every :data:`PROBE_INTERVAL_S`) whether it is back."""
        if self._away:
            if self._clock() - self._last_probe < PROBE_INTERVAL_S:
                return
            self._last_probe = self._clock()
            if not self._probe():
                return
            self._away = False
        while self._queue and (deadline is None or self._clock() < deadline):
            count, batch = self._next_batch()
            try:
                self._call(batch)
            except Exception as error:
                if outages.is_unreachable(error):
                    self._went_away(error)
                    return
                # Its caller is long gone: nobody to raise to. A refused call stays refused.
                log.warning("MLflow tracking: the server refused %s, sent after an outage: %s", batch.what, error)
            for _ in range(count):
                self._forget(self._queue.popleft())
        if not self._queue and self._warned:
            log.info("MLflow tracking server %s answers again; the calls that waited are recorded", self._client.uri)
            self._warned = False

    def _next_batch(self) -> tuple[int, Pending]:
        """The oldest waiting call, or the oldest run of metric batches merged into one: (how many
        calls it holds, the call)."""
        from mlflow.utils.validation import MAX_METRICS_PER_BATCH

        head = self._queue[0]
        if not head.metrics:
            return 1, head
        merged = Pending("metrics", run_id=head.run_id, metrics=list(head.metrics))
        count = 1
        for later in list(self._queue)[1:]:
            fits = len(merged.metrics) + len(later.metrics) <= MAX_METRICS_PER_BATCH
            if not later.metrics or later.run_id != head.run_id or not fits:
                break
            merged.metrics.extend(later.metrics)
            count += 1
        merged.what = f"{len(merged.metrics)} metrics"
        return count, merged

    def _kept(self, pending: Pending) -> Pending | None:
        """A call that can wait: a file it uploads is copied aside (the original may change or go).
        None if the copy cannot be made (a full disk): that file is not recorded, training goes on."""
        if pending.upload is None:
            return pending
        try:
            if self._spool is None:
                self._spool = Path(tempfile.mkdtemp(prefix="tts-tracking-outbox-"))
            # a folder of its own keeps the file's name, which MLflow uses as the artifact's name
            copy = Path(tempfile.mkdtemp(dir=self._spool)) / pending.upload.name
            if pending.upload.is_dir():
                shutil.copytree(pending.upload, copy)
            else:
                shutil.copy2(pending.upload, copy)
        except OSError as error:
            log.warning("MLflow tracking: %s is not recorded: no copy of it could wait: %s", pending.what, error)
            return None
        return Pending(pending.what, run_id=pending.run_id, upload=copy, artifact_path=pending.artifact_path)

    def _lost(self) -> str:
        """What waits, in a few words: ``metrics from step 9 on, 2 files, the run's end (FINISHED)``."""
        steps = [metric.step for pending in self._queue for metric in pending.metrics]
        files = sum(pending.upload is not None for pending in self._queue)
        others = [pending.what for pending in self._queue if not pending.metrics and pending.upload is None]
        parts = [f"metrics from step {min(steps)} on"] if steps else []
        parts += [f"{files} file{'s' if files > 1 else ''}"] if files else []
        parts += others if len(others) <= 3 else [*others[:2], f"{len(others) - 2} more"]
        return ", ".join(parts)

    def _forget(self, pending: Pending) -> None:
        if pending.upload is not None and self._spool is not None and self._spool in pending.upload.parents:
            shutil.rmtree(pending.upload.parent, ignore_errors=True)
