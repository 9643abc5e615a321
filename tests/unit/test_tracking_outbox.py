"""Tracking as a side channel: which errors mean "the server is away", and the outbox that keeps a
job's calls (in order) until it is back. A stand-in store, no server; seconds."""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import requests

from tts_pipeline import tracking
from tts_pipeline.tracking import TrackingSettings, outages, outbox, stage_run
from tts_pipeline.tracking.outages import is_unreachable
from tts_pipeline.tracking.outbox import Outbox


def _raised(make: Callable[[], None]) -> BaseException:
    """The error ``make`` raises, with the cause / context chain Python gives it."""
    try:
        make()
    except BaseException as error:  # noqa: BLE001 - the error itself is what the test looks at
        return error
    raise AssertionError("nothing was raised")


def _wrapped(inner: BaseException) -> BaseException:
    """What MLflow's client raises for a failed request: an MlflowException raised while handling it."""
    from mlflow.exceptions import MlflowException

    def make() -> None:
        try:
            raise inner
        except Exception as error:
            raise MlflowException(f"API request to http://tracker/api failed with exception {error}")  # noqa: B904

    return _raised(make)


def _http_error(status: int) -> requests.HTTPError:
    response = requests.Response()
    response.status_code = status
    return requests.HTTPError(f"{status}", response=response)


def _rest(code: str) -> BaseException:
    from mlflow.exceptions import RestException

    return RestException({"error_code": code, "message": f"the server says {code}"})


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# -------------------------------------------------------------------------------------------------
# what counts as an outage
# -------------------------------------------------------------------------------------------------


def test_a_refused_connection_from_the_real_client_is_an_outage(monkeypatch: pytest.MonkeyPatch) -> None:
    from mlflow import MlflowClient
    from mlflow.entities import Metric

    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    client = MlflowClient(f"http://127.0.0.1:{_closed_port()}")
    error = _raised(lambda: client.log_batch("some-run", metrics=[Metric("loss", 1.0, 0, 0)]))
    assert is_unreachable(error)
    assert "Connection refused" in outages.describe(error)


@pytest.mark.parametrize(
    ("error", "away"),
    [
        (_wrapped(requests.exceptions.ConnectionError("refused")), True),
        (_wrapped(requests.exceptions.ReadTimeout("read timed out")), True),
        (_wrapped(requests.exceptions.RetryError("too many 503 error responses")), True),
        (_wrapped(requests.exceptions.ChunkedEncodingError("connection broken")), True),
        (ConnectionResetError(104, "Connection reset by peer"), True),
        (_rest("TEMPORARILY_UNAVAILABLE"), True),  # 503 from the server or a proxy
        (_rest("REQUEST_LIMIT_EXCEEDED"), True),  # 429
        (_http_error(503), True),  # an artifact upload's answer
        (_http_error(502), True),
        # refused calls raise as always
        (_rest("INVALID_PARAMETER_VALUE"), False),
        (_rest("RESOURCE_DOES_NOT_EXIST"), False),
        (_rest("PERMISSION_DENIED"), False),
        (_http_error(400), False),
        (_http_error(404), False),
        # and so does anything else
        (_wrapped(ValueError("not JSON")), False),
        (ValueError("a bug"), False),
        (TimeoutError("the store's lock was not free in 300 s"), False),
    ],
    ids=lambda value: type(value).__name__ if isinstance(value, BaseException) else str(value),
)
def test_outages_are_told_from_refused_calls(error: BaseException, away: bool) -> None:
    assert is_unreachable(error) is away


def test_a_context_hidden_with_from_none_does_not_count() -> None:
    from mlflow.exceptions import MlflowException

    def make() -> None:
        try:
            raise requests.exceptions.ConnectionError("refused")
        except Exception:
            raise MlflowException("invalid value", error_code=1000) from None

    assert not is_unreachable(_raised(make))


def test_the_probe_asks_the_servers_health_page() -> None:
    assert not outages.server_answers(f"http://127.0.0.1:{_closed_port()}", timeout_s=2)
    assert outages.server_answers("sqlite:////nowhere/mlflow.db")  # no server: the next call finds out


def test_brief_tries_set_mlflows_retry_budget_for_a_while_unless_the_user_did(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (outages.ENV_MAX_RETRIES, outages.ENV_BACKOFF_FACTOR, outages.ENV_TIMEOUT):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(outages.ENV_BACKOFF_FACTOR, "5")
    with outages.brief_tries(small_request=True):
        assert os.environ[outages.ENV_MAX_RETRIES] == str(outages.RETRIES)
        assert os.environ[outages.ENV_TIMEOUT] == str(outages.SMALL_REQUEST_TIMEOUT_S)
        assert os.environ[outages.ENV_BACKOFF_FACTOR] == "5"
    with outages.brief_tries(small_request=False):  # an upload keeps MLflow's timeout
        assert outages.ENV_TIMEOUT not in os.environ
    assert outages.ENV_MAX_RETRIES not in os.environ and os.environ[outages.ENV_BACKOFF_FACTOR] == "5"


# -------------------------------------------------------------------------------------------------
# the outbox, on a stand-in store
# -------------------------------------------------------------------------------------------------


class Recorder:
    """Stands in for MlflowClient: records what reaches the "server" (a file's content when sent)."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def log_batch(self, run_id: str, metrics: Any = (), params: Any = (), tags: Any = ()) -> None:
        self.calls.append(("metrics", run_id, [(m.key, m.step, m.value) for m in metrics]) if metrics else ("other",))

    def log_artifact(self, run_id: str, path: str, artifact_path: str | None) -> None:
        self.calls.append(("file", Path(path).name, Path(path).read_text(), artifact_path))

    def set_terminated(self, run_id: str, status: str, end_time: int | None = None) -> None:
        self.calls.append(("end", status))


class Store:
    """Stands in for LockedClient: a server that can be away, or refuse a call."""

    uri = "http://tracker:5000"

    def __init__(self) -> None:
        self.client = Recorder()
        self.away = False
        self.refuse: Callable[[tuple[Any, ...]], bool] = lambda call: False
        self.tries = 0

    def call(self, operation: Callable[[Recorder], Any]) -> Any:
        self.tries += 1
        if self.away:
            raise _wrapped(requests.exceptions.ConnectionError("[Errno 111] Connection refused"))
        seen = Recorder()
        operation(seen)
        if any(self.refuse(call) for call in seen.calls):
            raise _rest("INVALID_PARAMETER_VALUE")
        return operation(self.client)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def setup() -> tuple[Store, Outbox, Clock, list[int]]:
    store, clock, probes = Store(), Clock(), []

    def probe() -> bool:
        probes.append(1)
        return not store.away

    return store, Outbox(store, probe=probe, clock=clock), clock, probes  # type: ignore[arg-type]


def _metric(step: int) -> Any:
    from mlflow.entities import Metric

    return Metric("loss", float(step), 1000 + step, step)


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.levelno >= logging.WARNING]


def test_with_the_server_there_calls_go_straight_through(setup, caplog) -> None:
    store, box, _, probes = setup
    box.log_metrics("run", [_metric(0)])
    box.send(lambda client: client.set_terminated("run", "FINISHED"), "the end")
    assert store.client.calls == [("metrics", "run", [("loss", 0, 0.0)]), ("end", "FINISHED")]
    assert box.waiting == 0 and probes == [] and _warnings(caplog) == []


def test_calls_wait_out_an_outage_and_are_replayed_in_order(setup, caplog, tmp_path: Path, monkeypatch) -> None:
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the copies of waiting files go
    store, box, clock, probes = setup
    box.log_metrics("run", [_metric(0)])
    store.away = True
    box.log_metrics("run", [_metric(1)])  # finds the server away: waits, one warning
    sample = tmp_path / "sample.txt"
    sample.write_text("epoch 1")
    box.log_artifact("run", sample, "samples/epoch_00001")
    sample.write_text("epoch 2")  # the training overwrites it: the copy that waits is epoch 1's
    for step in range(2, 5):
        clock.now += 1
        box.log_metrics("run", [_metric(step)])
    box.send(lambda client: client.log_batch("run", tags=["t"]), "a tag")
    assert store.tries == 2  # one try found the server away; after that nothing is sent ...
    assert probes == []  # ... and it is not asked yet (every PROBE_INTERVAL_S)
    assert box.waiting == 6 and store.client.calls == [("metrics", "run", [("loss", 0, 0.0)])]

    clock.now += outbox.PROBE_INTERVAL_S
    box.log_metrics("run", [_metric(5)])  # asks: still away
    assert probes == [1] and box.waiting == 7
    store.away = False
    box.log_metrics("run", [_metric(6)])  # not asked again so soon
    assert probes == [1] and box.waiting == 8
    clock.now += outbox.PROBE_INTERVAL_S
    box.log_metrics("run", [_metric(7)])  # back: everything goes, oldest first, metric runs merged
    assert box.waiting == 0
    assert store.client.calls == [
        ("metrics", "run", [("loss", 0, 0.0)]),
        ("metrics", "run", [("loss", 1, 1.0)]),
        ("file", "sample.txt", "epoch 1", "samples/epoch_00001"),
        ("metrics", "run", [("loss", step, float(step)) for step in range(2, 5)]),
        ("other",),
        ("metrics", "run", [("loss", step, float(step)) for step in range(5, 8)]),
    ]
    assert len(_warnings(caplog)) == 1
    assert (
        "MLflow tracking server http://tracker:5000 is unreachable ([Errno 111] Connection refused)"
        in (_warnings(caplog)[0])
    )
    assert any("answers again" in record.getMessage() for record in caplog.records)
    [spool] = tmp_path.glob("tts-tracking-outbox-*")
    assert not list(spool.iterdir())  # a copy goes once it is sent
    box.close()
    assert not spool.exists()


def test_a_refused_call_raises_and_one_refused_after_an_outage_is_dropped(setup, caplog) -> None:
    from mlflow.exceptions import MlflowException

    store, box, clock, _ = setup
    store.refuse = lambda call: call == ("end", "BAD")
    with pytest.raises(MlflowException, match="INVALID_PARAMETER_VALUE"):
        box.send(lambda client: client.set_terminated("run", "BAD"), "a bad end")
    assert box.waiting == 0 and _warnings(caplog) == []

    store.away = True
    box.send(lambda client: client.set_terminated("run", "BAD"), "a bad end")
    box.log_metrics("run", [_metric(1)])
    store.away = False
    clock.now += outbox.PROBE_INTERVAL_S
    box.log_metrics("run", [_metric(2)])  # nobody to raise to: the refused call is dropped with a warning
    assert store.client.calls == [("metrics", "run", [("loss", 1, 1.0), ("loss", 2, 2.0)])]
    assert len(_warnings(caplog)) == 2 and "refused a bad end" in _warnings(caplog)[1]


def test_a_run_that_ends_during_the_outage_warns_what_was_lost_and_does_not_raise(setup, caplog, tmp_path) -> None:
    store, box, _, probes = setup
    store.away = True
    sample = tmp_path / "model.pt"
    sample.write_text("weights")
    box.log_metrics("run", [_metric(1)])
    box.log_artifact("run", sample, "model")
    box.send(lambda client: client.set_terminated("run", "FINISHED"), "the run's end (FINISHED)")
    box.close()  # one last try: the server is asked at once
    assert probes == [1] and store.client.calls == [] and box.waiting == 0
    [first, last] = _warnings(caplog)
    assert "is unreachable" in first
    assert "still unreachable at the job's end: 3 tracking calls were not recorded" in last
    assert "(metrics from step 1 on, 1 file, the run's end (FINISHED))" in last


def test_a_server_back_by_the_end_gets_everything_in_the_last_try(setup) -> None:
    store, box, _, _ = setup
    store.away = True
    box.log_metrics("run", [_metric(1)])
    box.send(lambda client: client.set_terminated("run", "FINISHED"), "the run's end (FINISHED)")
    store.away = False
    box.close()
    assert store.client.calls == [("metrics", "run", [("loss", 1, 1.0)]), ("end", "FINISHED")]


def test_merged_metrics_respect_the_batch_limit_and_never_pass_another_call(setup, monkeypatch) -> None:
    import mlflow.utils.validation

    monkeypatch.setattr(mlflow.utils.validation, "MAX_METRICS_PER_BATCH", 2)
    store, box, clock, _ = setup
    store.away = True
    for step in range(3):
        box.log_metrics("run", [_metric(step)])
    box.send(lambda client: client.set_terminated("run", "FINISHED"), "the end")
    box.log_metrics("run", [_metric(3)])
    store.away = False
    box.close()
    assert store.client.calls == [
        ("metrics", "run", [("loss", 0, 0.0), ("loss", 1, 1.0)]),
        ("metrics", "run", [("loss", 2, 2.0)]),
        ("end", "FINISHED"),
        ("metrics", "run", [("loss", 3, 3.0)]),
    ]


def test_a_long_backlog_goes_a_slice_at_a_time(setup, monkeypatch) -> None:
    store, box, clock, _ = setup
    store.away = True
    for step in range(5):
        box.send(lambda client, step=step: client.set_terminated("run", str(step)), "an end")
    store.away = False
    clock.now += outbox.PROBE_INTERVAL_S
    # every call to the store takes two seconds: a slice of REPLAY_SLICE_S holds three of them
    real_call = store.call

    def slow_call(operation: Callable[[Recorder], Any]) -> Any:
        clock.now += 2
        return real_call(operation)

    monkeypatch.setattr(store, "call", slow_call)
    box.send(lambda client: client.set_terminated("run", "5"), "an end")
    assert [call[1] for call in store.client.calls] == ["0", "1", "2"] and box.waiting == 3
    box.close()
    assert [call[1] for call in store.client.calls] == ["0", "1", "2", "3", "4", "5"]


# -------------------------------------------------------------------------------------------------
# a job's run and the workflow's end, with the server away
# -------------------------------------------------------------------------------------------------


def test_a_job_whose_server_is_away_at_its_start_runs_untracked(monkeypatch, caplog) -> None:
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    settings = TrackingSettings(enabled=True, uri=f"http://127.0.0.1:{_closed_port()}", experiment="e")
    with stage_run("train_hifigan", {"hifigan": {"epochs": 1}}, settings=settings) as run:
        assert not run.active
        run.log_metrics({"loss": 1.0}, step=1)
    [warning] = _warnings(caplog)
    assert "is unreachable" in warning and "train_hifigan runs untracked" in warning


def test_closing_the_parent_run_with_the_server_away_warns(monkeypatch, caplog) -> None:
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    uri = f"http://127.0.0.1:{_closed_port()}"
    environ = {tracking.ENV_ENABLED: "1", tracking.ENV_URI: uri, tracking.ENV_PARENT_RUN_ID: "abc"}
    tracking.close_parent_run("FINISHED", environ)
    [warning] = _warnings(caplog)
    assert f"MLflow tracking server {uri} is unreachable" in warning and "run abc is not ended FINISHED" in warning


def test_the_workflows_end_hook_warns_instead_of_raising(monkeypatch, caplog, tmp_path: Path) -> None:
    from tts_pipeline.config import parse_config
    from tts_pipeline.workflow import parent_run
    from tts_pipeline.workflow.paths import Paths

    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("the store is read-only")

    monkeypatch.setattr(tracking, "close_parent_run", broken)
    config = parse_config({"experiment": "e", "results_dir": str(tmp_path)})
    parent_run.close_parent_run(config, Paths(config), {}, "FAILED")
    [warning] = _warnings(caplog)
    assert "could not end the workflow's MLflow run FAILED: RuntimeError: the store is read-only" in warning


def test_a_job_under_the_workflow_shows_the_outage_on_the_terminal_once(setup, capsys, monkeypatch) -> None:
    from tts_pipeline import failure

    monkeypatch.setattr(failure, "_stderr_file", lambda: "results/demo/logs/train_hifigan.log")  # as under Snakemake
    store, box, clock, _ = setup
    store.away = True
    for step in range(3):
        clock.now += 1
        box.log_metrics("run", [_metric(step)])
    printed = capsys.readouterr().out.splitlines()
    assert len(printed) == 1 and printed[0].startswith("WARNING: MLflow tracking server http://tracker:5000")
