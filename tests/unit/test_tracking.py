"""MLflow tracking: parent and child runs, params, failures, rank, concurrency, tracking off."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from tts_pipeline import cli, tracking
from tts_pipeline.config import PipelineConfig, config_hash, parse_config
from tts_pipeline.errors import UserError
from tts_pipeline.tracking import (
    TrackingSettings,
    close_parent_run,
    find_child_runs,
    flatten_params,
    get_run,
    metric_history,
    open_parent_run,
    settings_from_env,
    stage_run,
)

TTS_VARS = (tracking.ENV_ENABLED, tracking.ENV_URI, tracking.ENV_EXPERIMENT, tracking.ENV_PARENT_RUN_ID, "RANK")

SECTION = {"hifigan": {"upsample_rates": [8, 8, 2, 2], "lr": 0.0002, "checkpoint": None, "amp": True}}


@pytest.fixture(autouse=True)
def clean_environ(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test starts without the workflow's variables and gets back the environment it found
    (open_parent_run writes into os.environ); it runs in an empty folder to catch stray ./mlruns."""
    saved = dict(os.environ)
    for name in TTS_VARS:
        os.environ.pop(name, None)
    monkeypatch.chdir(tmp_path)
    yield
    os.environ.clear()
    os.environ.update(saved)
    assert not (tmp_path / "mlruns").exists()


@pytest.fixture(scope="module")
def results_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One store for the module: MLflow's table migrations take seconds the first time."""
    return tmp_path_factory.mktemp("results")


def _config(results_dir: Path, enabled: bool = True) -> PipelineConfig:
    return parse_config({"experiment": "exp-1", "results_dir": str(results_dir), "tracking": {"enabled": enabled}})


def _stage_settings(results_dir: Path) -> TrackingSettings:
    """What a stage does: its config-derived defaults, overridden by the workflow's variables."""
    return settings_from_env(TrackingSettings.from_parts(results_dir=results_dir, experiment="exp-1"))


# -------------------------------------------------------------------------------------------------
# settings and params (no store)
# -------------------------------------------------------------------------------------------------


def test_default_settings_point_at_a_sqlite_store_in_results(tmp_path: Path) -> None:
    settings = TrackingSettings.from_config(_config(Path("results")))
    db = (tmp_path / "results" / "mlflow.db").resolve()
    assert settings.enabled and settings.uri == f"sqlite:///{db}"
    assert settings.artifact_location == (db.parent / "mlartifacts" / "exp-1").as_uri()
    remote = TrackingSettings(enabled=True, uri="http://tracker:5000", experiment="exp-1")
    assert remote.artifact_location is None


def test_relative_sqlite_uri_becomes_absolute(tmp_path: Path) -> None:
    config = parse_config({"experiment": "e", "tracking": {"uri": "sqlite:///store/m.db?timeout=5"}})
    expected = f"sqlite:///{(tmp_path / 'store' / 'm.db').resolve()}?timeout=5"
    assert TrackingSettings.from_config(config).uri == expected


def test_environment_overrides_defaults() -> None:
    defaults = TrackingSettings(enabled=False, uri="sqlite:////a/mlflow.db", experiment="a")
    env = {"TTS_TRACKING": "1", "TTS_TRACKING_URI": "sqlite:////b/mlflow.db", "TTS_PARENT_RUN_ID": "abc"}
    settings = settings_from_env(defaults, env)
    assert settings == TrackingSettings(enabled=True, uri="sqlite:////b/mlflow.db", experiment="a", parent_run_id="abc")
    assert settings_from_env(defaults, {}) == defaults
    assert settings_from_env(settings, {"TTS_TRACKING": "0"}).enabled is False
    with pytest.raises(UserError, match="TTS_TRACKING"):
        settings_from_env(defaults, {"TTS_TRACKING": "maybe"})


def test_params_are_flattened_with_dotted_keys() -> None:
    flat = flatten_params({**SECTION, "text": {"cleaners": "english_cleaners_v2", "long": "x" * 10_000}})
    assert flat["hifigan.upsample_rates"] == "[8, 8, 2, 2]"
    assert flat["hifigan.lr"] == "0.0002"
    assert flat["hifigan.checkpoint"] == "null"
    assert flat["hifigan.amp"] == "true"
    assert flat["text.cleaners"] == "english_cleaners_v2"
    assert len(flat["text.long"]) == 6000 and flat["text.long"].endswith("...")


# -------------------------------------------------------------------------------------------------
# tracking off, other ranks
# -------------------------------------------------------------------------------------------------


def test_tracking_off_is_a_no_op_that_creates_nothing(tmp_path: Path) -> None:
    results = tmp_path / "results"
    env = open_parent_run(_config(results, enabled=False))
    assert env == {"TTS_TRACKING": "0"} and os.environ["TTS_TRACKING"] == "0"
    # A stage whose own config says "on" obeys the workflow's "off".
    with stage_run("train_hifigan", SECTION, settings=_stage_settings(results)) as run:
        assert not run.active and run.run_id is None
        run.log_params({"a": 1})
        run.log_metrics({"loss": 1.0}, step=1)
        run.log_dict({"a": 1}, "a.json")
        run.log_artifact(tmp_path / "does-not-matter")
    close_parent_run("FINISHED")
    assert list(tmp_path.iterdir()) == []


def test_tracking_off_never_loads_mlflow(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import sys
        from tts_pipeline.config import parse_config
        from tts_pipeline.tracking import TrackingSettings, open_parent_run, stage_run
        config = parse_config({{"experiment": "e", "results_dir": {str(tmp_path)!r}, "tracking": {{"enabled": False}}}})
        open_parent_run(config)
        with stage_run("s", {{"a": 1}}, settings=TrackingSettings.from_config(config)) as run:
            run.log_metrics({{"loss": 1.0}})
        assert "mlflow" not in sys.modules, "mlflow was imported"
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)


def test_only_rank_zero_logs(results_dir: Path) -> None:
    open_parent_run(_config(results_dir))
    settings = _stage_settings(results_dir)
    with stage_run("train_fastpitch", SECTION, settings=settings, rank=1) as run:
        assert not run.active
        run.log_metrics({"loss": 1.0})
    os.environ["RANK"] = "3"
    with stage_run("train_fastpitch", SECTION, settings=settings) as run:
        assert not run.active
    assert find_child_runs(settings, settings.parent_run_id or "") == []


# -------------------------------------------------------------------------------------------------
# parent and child runs in a shared store
# -------------------------------------------------------------------------------------------------


def test_child_run_is_tagged_parented_and_logged(results_dir: Path, tmp_path: Path) -> None:
    config = _config(results_dir)
    env = open_parent_run(config, description="a test run")
    assert set(env) == {"TTS_TRACKING", "TTS_TRACKING_URI", "TTS_MLFLOW_EXPERIMENT", "TTS_PARENT_RUN_ID"}
    assert all(os.environ[key] == value for key, value in env.items())
    parent_id = env["TTS_PARENT_RUN_ID"]

    sample = tmp_path / "sample.txt"
    sample.write_text("hello")
    settings = _stage_settings(results_dir)
    with stage_run("train_hifigan", SECTION, settings=settings, tags={"dataset": "demo"}) as run:
        assert run.active
        for step in range(3):
            run.log_metrics({"loss": 1.0 / (step + 1)}, step=step)
        run.log_params({"extra": {"n_gpus": 0}})
        run.log_artifact(sample, artifact_path="samples")
        run.log_dict({"hop": 256}, "config.json")
    close_parent_run("FINISHED")

    [child] = find_child_runs(settings, parent_id)
    assert child["run_id"] == run.run_id and child["status"] == "FINISHED" and child["name"] == "train_hifigan"
    tags = child["tags"]
    assert tags["mlflow.parentRunId"] == parent_id
    assert tags["stage"] == tags["rule"] == "train_hifigan"
    assert tags["experiment"] == "exp-1" and tags["dataset"] == "demo"
    assert tags["config_hash"] == config_hash(SECTION)
    assert tags["git_commit"]  # a hash, or "unknown" outside a checkout
    assert child["params"]["hifigan.upsample_rates"] == "[8, 8, 2, 2]"
    assert child["params"]["extra.n_gpus"] == "0"
    assert metric_history(settings, run.run_id, "loss") == [(0, 1.0), (1, 0.5), (2, 1 / 3)]

    artifacts = results_dir / "mlartifacts" / "exp-1"
    assert (next(artifacts.rglob("samples/sample.txt"))).read_text() == "hello"
    assert json.loads(next(artifacts.rglob("config.json")).read_text()) == {"hop": 256}

    parent = get_run(settings, parent_id)
    assert parent["status"] == "FINISHED"
    assert parent["tags"]["kind"] == "workflow" and parent["tags"]["config_hash"] == config_hash(
        config.model_dump(mode="json")
    )
    assert parent["tags"]["mlflow.note.content"] == "a test run"


def test_an_exception_marks_the_child_failed(results_dir: Path) -> None:
    parent_id = open_parent_run(_config(results_dir))["TTS_PARENT_RUN_ID"]
    settings = _stage_settings(results_dir)
    with pytest.raises(RuntimeError, match="diverged"):
        with stage_run("train_fastpitch", SECTION, settings=settings):
            raise RuntimeError("loss diverged")
    close_parent_run("FAILED")
    [child] = find_child_runs(settings, parent_id)
    assert child["status"] == "FAILED"
    assert get_run(settings, parent_id)["status"] == "FAILED"


def test_a_resumed_stage_continues_its_run_under_its_first_parent(results_dir: Path) -> None:
    first_parent = open_parent_run(_config(results_dir))["TTS_PARENT_RUN_ID"]
    with stage_run("train_hifigan", SECTION, settings=_stage_settings(results_dir)) as first:
        first.log_metrics({"train_loss": 2.0}, step=10)
    close_parent_run("KILLED")
    # The next invocation resumes the checkpoint with more epochs: the run goes on (one curve), its
    # first params stay, the change is named; it stays under the parent that started it and is
    # counted as a job of the new invocation.
    second_parent = open_parent_run(_config(results_dir))["TTS_PARENT_RUN_ID"]
    longer = {"hifigan": {**SECTION["hifigan"], "epochs": 20}}
    settings = _stage_settings(results_dir)
    with stage_run("train_hifigan", {"hifigan": {**SECTION["hifigan"], "epochs": 10}}, settings=settings) as other:
        pass
    with stage_run("train_hifigan", longer, settings=settings, run_id=first.run_id) as resumed:
        resumed.log_metrics({"train_loss": 1.0}, step=20)
    close_parent_run("FINISHED")
    assert resumed.run_id == first.run_id != other.run_id
    assert metric_history(settings, first.run_id, "train/loss") == [(10, 2.0), (20, 1.0)]
    run = get_run(settings, first.run_id)
    assert run["tags"]["mlflow.parentRunId"] == first_parent
    assert run["tags"]["workflow_run"] == second_parent
    assert run["params"]["hifigan.lr"] == "0.0002" and "hifigan.epochs" in run["params"]
    assert {child["run_id"] for child in find_child_runs(settings, second_parent)} == {first.run_id, other.run_id}


def test_metric_names_fall_into_dashboard_sections(results_dir: Path) -> None:
    assert tracking.names.dashboard_name("train_loss_mel") == "train/loss_mel"
    assert tracking.names.dashboard_name("val_loss") == "val/loss"
    assert tracking.names.dashboard_name("frames_per_s") == "train/frames_per_s"
    assert tracking.names.dashboard_name("lr_gen") == "train/lr_gen"
    assert tracking.names.dashboard_name("epoch") == "epoch"
    assert tracking.names.dashboard_name("n_valid") == "n_valid"
    settings = _stage_settings(results_dir)
    with stage_run("train_fastpitch", SECTION, settings=settings) as run:
        run.log_metrics({"train_loss": 3.0, "val_loss_mel": 2.0}, step=5)
    assert set(get_run(settings, run.run_id)["metrics"]) == {"train/loss", "val/loss_mel"}


def test_the_experiment_opens_as_model_training_and_runs_carry_standard_tags(results_dir: Path, tmp_path: Path) -> None:
    open_parent_run(_config(results_dir))
    settings = _stage_settings(results_dir)
    manifest = tmp_path / "manifest.train.jsonl"
    manifest.write_text('{"id": "a"}\n')
    with stage_run("train_fastpitch", SECTION, settings=settings) as run:
        run.log_dataset("demo", [manifest])
    close_parent_run("FINISHED")
    import mlflow

    client = mlflow.MlflowClient(settings.uri)
    experiment = client.get_experiment_by_name("exp-1")
    assert experiment.tags["mlflow.experimentKind"] == "custom_model_development"
    job = client.get_run(run.run_id)
    assert job.data.tags["mlflow.user"] and job.data.tags["mlflow.source.name"] == "tts-pipeline train_fastpitch"
    assert job.data.tags["mlflow.source.type"] == "JOB"
    [dataset] = job.inputs.dataset_inputs
    assert dataset.dataset.name == "demo" and len(dataset.dataset.digest) == 16
    artifacts = Path(job.info.artifact_uri.removeprefix("file://"))
    assert (artifacts / "config.yaml").is_file()  # the section the job ran with


def test_the_parent_holds_the_config_summary_and_job_logs(results_dir: Path, tmp_path: Path) -> None:
    config = _config(results_dir)
    parent_id = open_parent_run(config)["TTS_PARENT_RUN_ID"]
    settings = _stage_settings(results_dir)
    with stage_run("manifest", {"data": {"on_invalid": "skip"}}, settings=settings) as done:
        pass
    # a job killed from outside (OOM killer): its run could not end itself
    stuck = tracking.LockedClient(settings.uri).call(
        lambda client: client.create_run(
            client.get_run(parent_id).info.experiment_id, tags={"workflow_run": parent_id, "rule": "features"}
        ).info.run_id
    )
    log_file = tmp_path / "manifest.log"
    log_file.write_text("manifest: 24 valid\n")
    close_parent_run("FINISHED", summary={"fastpitch/val_loss": 0.5}, job_logs={"manifest": log_file},
                     dataset=("demo", [log_file]))
    parent = get_run(settings, parent_id)
    assert parent["metrics"] == {"fastpitch/val_loss": 0.5}
    assert parent["params"]["experiment"] == "exp-1" and parent["params"]["tracking.enabled"] == "true"
    assert parent["tags"]["dataset"] == config.corpus.name and parent["tags"]["mlflow.user"]
    assert (Path(parent["artifact_uri"].removeprefix("file://")) / "config.yaml").is_file()
    import mlflow

    [dataset] = mlflow.MlflowClient(settings.uri).get_run(parent_id).inputs.dataset_inputs
    assert dataset.dataset.name == "demo"
    job = get_run(settings, done.run_id)
    job_artifacts = Path(job["artifact_uri"].removeprefix("file://"))
    assert (job_artifacts / "logs" / "manifest.log").read_text() == "manifest: 24 valid\n"
    assert get_run(settings, stuck)["status"] == "KILLED"


def test_an_invocation_that_ran_no_job_leaves_no_parent_run(results_dir: Path) -> None:
    settings = _stage_settings(results_dir)
    parent_id = open_parent_run(_config(results_dir))["TTS_PARENT_RUN_ID"]
    close_parent_run("FINISHED")
    import mlflow

    client = mlflow.MlflowClient(settings.uri)
    assert client.get_run(parent_id).info.lifecycle_stage == "deleted"
    experiment = client.get_experiment_by_name("exp-1")
    assert parent_id not in {run.info.run_id for run in client.search_runs([experiment.experiment_id])}


def _dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_runs_left_running_by_a_killed_workflow_end_killed(results_dir: Path) -> None:
    import socket

    settings = _stage_settings(results_dir)
    store = tracking.LockedClient(settings.uri)
    experiment_id = store.call(lambda client: client.get_experiment_by_name("exp-1").experiment_id)
    host = socket.gethostname()

    def parent(pid: int, on_host: str) -> str:
        tags = {"kind": "workflow", "workflow.host": on_host, "workflow.pid": str(pid)}
        return store.call(lambda client: client.create_run(experiment_id, tags=tags).info.run_id)

    killed = parent(_dead_pid(), host)  # `kill -9` of snakemake: its run and its job's run stay RUNNING
    job = store.call(
        lambda client: client.create_run(experiment_id, tags={"workflow_run": killed, "rule": "x"}).info.run_id
    )
    empty = parent(_dead_pid(), host)  # killed before any job started
    alive = parent(os.getpid(), host)  # a workflow that still runs
    elsewhere = parent(_dead_pid(), "another-host")  # cannot be checked from here

    open_parent_run(_config(results_dir))
    assert get_run(settings, killed)["status"] == "KILLED" and get_run(settings, job)["status"] == "KILLED"
    assert store.call(lambda client: client.get_run(empty).info.lifecycle_stage) == "deleted"
    assert get_run(settings, alive)["status"] == "RUNNING"
    assert get_run(settings, elsewhere)["status"] == "RUNNING"
    for run_id in (alive, elsewhere):
        store.call(lambda client, run_id=run_id: client.set_terminated(run_id, status="FINISHED"))
    close_parent_run("FINISHED")


def test_cli_opens_and_closes_the_parent_run(
    results_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config_file = tmp_path / "config.yaml"
    config_file.write_text(f"experiment: exp-1\nresults_dir: {results_dir}\n")
    cli.main(["tracking", "open", "--config", str(config_file)])
    lines = dict(line.split("=", 1) for line in capsys.readouterr().out.splitlines())
    assert lines["TTS_TRACKING"] == "1" and lines["TTS_MLFLOW_EXPERIMENT"] == "exp-1"
    with stage_run("corpus", {"corpus": {}}, settings=_stage_settings(results_dir)):
        pass
    cli.main(["tracking", "close", "--status", "KILLED"])
    settings = _stage_settings(results_dir)
    assert get_run(settings, lines["TTS_PARENT_RUN_ID"])["status"] == "KILLED"


# -------------------------------------------------------------------------------------------------
# concurrency
# -------------------------------------------------------------------------------------------------


def test_a_locked_database_is_retried(results_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sqlite3

    monkeypatch.setattr(tracking.client, "LOCKED_BACKOFF_S", 0.001)
    attempts = []

    def busy_twice(client: object) -> str:
        attempts.append(client)
        if len(attempts) < 3:
            raise RuntimeError("could not log") from sqlite3.OperationalError("database is locked")
        return "done"

    def broken(client: object) -> None:
        attempts.append(client)
        raise ValueError("another error")

    store = tracking.LockedClient(_stage_settings(results_dir).uri)
    assert store.call(busy_twice) == "done" and len(attempts) == 3
    with pytest.raises(ValueError, match="another error"):
        store.call(broken)
    assert len(attempts) == 4  # other errors are not retried


def _log_from_a_job(uri: str, index: int) -> str:
    settings = TrackingSettings(enabled=True, uri=uri, experiment="concurrent")
    with stage_run(f"job{index}", {"job": {"index": index}}, settings=settings) as run:
        for step in range(20):
            run.log_metrics({"loss": float(step), "index": float(index)}, step=step)
            run.log_params({f"p{step}": step * index})
    assert run.run_id is not None
    return run.run_id


def test_concurrent_jobs_share_a_fresh_sqlite_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A store that does not exist yet: the jobs also race to create its tables and the experiment.
    uri = f"sqlite:///{tmp_path / 'fresh' / 'mlflow.db'}"
    # Separate processes, each with its own client, store and connections. They are forked from a
    # server that imported mlflow once (not spawned): four imports would take most of the test's time.
    monkeypatch.setenv("MLFLOW_DISABLE_TELEMETRY", "true")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["mlflow.tracking.client", "mlflow.store.tracking.sqlalchemy_store", __name__])
    with context.Pool(4) as jobs:
        run_ids = jobs.starmap(_log_from_a_job, [(uri, index) for index in range(4)])
    settings = TrackingSettings(enabled=True, uri=uri, experiment="concurrent")
    assert len(set(run_ids)) == 4
    for index, run_id in enumerate(run_ids):
        run = get_run(settings, run_id)
        assert run["status"] == "FINISHED"
        assert run["params"] == {"job.index": str(index), **{f"p{step}": str(step * index) for step in range(20)}}
        assert metric_history(settings, run_id, "loss") == [(step, float(step)) for step in range(20)]
