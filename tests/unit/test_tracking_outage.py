"""A tracking server that dies in the middle of a training and comes back: the training goes on, the
terminal says so once, and the run ends up complete (a real ``mlflow server``, killed and restarted)."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest

from tts_pipeline.tracking import TrackingSettings, outbox, stage_run
from tts_pipeline.tracking.outages import is_unreachable

from ..mlflow_server import MlflowServer

pytestmark = pytest.mark.slow  # two server starts: about a minute on a busy machine

SECTION = {"hifigan": {"epochs": 20, "lr": 0.0002}}


def test_a_training_outlives_a_server_outage_and_its_run_is_complete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from mlflow import MlflowClient

    # MLflow's own retry variables are left as they are: the outbox keeps its calls short by itself.
    monkeypatch.setattr(outbox, "PROBE_INTERVAL_S", 0.5)
    caplog.set_level(logging.INFO)
    server = MlflowServer(tmp_path / "server")
    server.start()
    try:
        settings = TrackingSettings(enabled=True, uri=server.uri, experiment="outage")
        sample = tmp_path / "sample.txt"
        slowest = 0.0
        with stage_run("train_hifigan", SECTION, settings=settings) as run:
            for step in range(10):
                run.log_metrics({"train_loss": 1.0 / (step + 1)}, step=step)
            server.stop()
            for step in range(10, 30):
                start = time.monotonic()
                run.log_metrics({"train_loss": 1.0 / (step + 1)}, step=step)
                if step == 15:  # an epoch's sample, in a folder the training deletes after logging it
                    sample.write_text("epoch 15")
                    run.log_artifact(sample, "samples/epoch_00015")
                    sample.unlink()
                slowest = max(slowest, time.monotonic() - start)
            run.set_tags({"n_params": 123})
            server.start()
            time.sleep(2 * outbox.PROBE_INTERVAL_S)
            for step in range(30, 35):  # the first of these finds the server back and sends what waited
                run.log_metrics({"train_loss": 1.0 / (step + 1)}, step=step)
            assert any("answers again" in record.getMessage() for record in caplog.records)

        client = MlflowClient(server.uri)
        finished = client.get_run(run.run_id)
        assert finished.info.status == "FINISHED" and finished.data.tags["n_params"] == "123"
        assert finished.data.params["hifigan.epochs"] == "20"
        history = sorted((metric.step, metric.value) for metric in client.get_metric_history(run.run_id, "train/loss"))
        assert history == [(step, 1.0 / (step + 1)) for step in range(35)]
        [uploaded] = (server.folder / "artifacts").rglob("samples/epoch_00015/sample.txt")
        assert uploaded.read_text() == "epoch 15"
        # a call the server refuses is no outage
        with pytest.raises(Exception) as refused:
            client.get_run("no-such-run")
        assert not is_unreachable(refused.value)
    finally:
        server.stop()

    assert slowest < 6, f"a tracking call held the training for {slowest:.1f} s while the server was away"
    warnings = [record for record in caplog.records if record.levelno >= logging.WARNING]
    assert len(warnings) == 1, [record.getMessage() for record in warnings]
    assert warnings[0].name == "tts_pipeline.tracking.outbox"
    assert f"MLflow tracking server {server.uri} is unreachable" in warnings[0].getMessage()
    assert "Training goes on" in warnings[0].getMessage()
