"""The MLflow UI over the tiny demo's store, opened for real in headless Chromium (``make test-browser``).

What a user comparing runs sees: the experiment's runs table in the model-training view (one row per
workflow invocation, its jobs nested), a training run's charts in their train / val / speed sections,
and the compare view of two workflow runs with their settings and summary figures side by side.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tts_pipeline import tracking

from ..workflow.test_data_workflow import snakemake

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PAGE_TIMEOUT_MS = 60_000


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def store(tiny_run):
    """The tiny run's store after a second invocation (the benchmark redone): two workflow runs."""
    workdir, config = tiny_run
    snakemake(workdir, "-R", "benchmark", config=config)
    import mlflow

    uri = f"sqlite:///{workdir / 'results' / 'mlflow.db'}"
    client = mlflow.MlflowClient(uri)
    experiment = client.get_experiment_by_name("demo")
    parents = client.search_runs(
        [experiment.experiment_id], "tags.kind = 'workflow'", order_by=["attributes.start_time ASC"]
    )
    jobs = client.search_runs([experiment.experiment_id], "tags.kind = 'stage'", order_by=["attributes.start_time ASC"])
    return uri, experiment.experiment_id, parents, {run.info.run_name: run for run in jobs}, len(parents) + len(jobs)


@pytest.fixture(scope="module")
def server(store, tmp_path_factory):
    """``mlflow server`` on the store, on a free local port."""
    uri = store[0]
    port = free_port()
    log = (tmp_path_factory.mktemp("mlflow_server") / "server.log").open("w")
    command = [sys.executable, "-m", "mlflow", "server", "--backend-store-uri", uri,
               "--host", "127.0.0.1", "--port", str(port), "--workers", "1"]  # fmt: skip
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while True:
        try:
            with urllib.request.urlopen(f"{base}/health", timeout=2) as answer:
                if answer.status == 200:
                    break
        except OSError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"mlflow server did not start; see {log.name}")
        time.sleep(0.5)
    yield base
    process.terminate()
    process.wait(timeout=30)
    log.close()


@pytest.fixture
def page(browser):
    page = browser.new_page(viewport={"width": 1600, "height": 1000})
    page.set_default_timeout(PAGE_TIMEOUT_MS)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page, errors
    page.close()


def close_assistant(page) -> None:
    """MLflow 3.17 opens an assistant panel over a third of the page; a reader closes it."""
    close = page.locator("button[data-component-id='mlflow.assistant.chat_panel.close']").first
    try:
        close.wait_for(timeout=10_000)
    except Exception:  # another MLflow version, without the panel
        return
    close.click()


def test_the_runs_table_opens_in_the_model_training_view(server, store, page, screenshot_dir):
    _, experiment_id, parents, _, n_runs = store
    page, errors = page
    page.goto(tracking.ui_url(server, experiment_id))
    table = page.get_by_role("grid")
    names = [run.info.run_name for run in parents]
    for name in names:
        table.get_by_text(name, exact=True).wait_for()
    body = page.inner_text("body")
    assert "Runs" in body and "Evaluation runs" not in body, "not the model-training view"
    assert f"{n_runs} matching runs" in body
    # the jobs of the first workflow run, nested under it
    table.get_by_role("row").filter(has_text=names[0]).get_by_role("button").first.click()
    table.get_by_text("train_fastpitch", exact=True).first.wait_for()
    close_assistant(page)
    page.screenshot(path=screenshot_dir / "mlflow-runs.png")
    assert not errors, errors


def test_a_training_run_shows_its_curves_in_sections(server, store, page, screenshot_dir):
    _, experiment_id, _, jobs, _ = store
    page, errors = page
    run_id = jobs["train_fastpitch"].info.run_id
    page.goto(f"{server}/#/experiments/{experiment_id}/runs/{run_id}/model-metrics?workflowType=machine_learning")
    close_assistant(page)
    for section, chart in (("train", "train/loss"), ("train", "train/frames_per_s"), ("val", "val/loss_mel")):
        header = page.get_by_text(section, exact=True).first
        header.wait_for()
        header.scroll_into_view_if_needed()  # charts are drawn when scrolled to
        page.get_by_text(f"train_fastpitch ({chart})", exact=True).first.wait_for()
    page.get_by_text("train", exact=True).first.scroll_into_view_if_needed()
    plots = page.evaluate("() => document.querySelectorAll('.js-plotly-plot, canvas, svg.main-svg').length")
    assert plots >= 3, plots
    page.screenshot(path=screenshot_dir / "mlflow-run-charts.png")
    page.goto(f"{server}/#/experiments/{experiment_id}/runs/{run_id}/artifacts?workflowType=machine_learning")
    for name in ("model", "logs", "config.yaml", "metrics.json"):
        page.get_by_text(name, exact=True).first.wait_for()
    assert not errors, errors


def test_two_workflow_runs_compare_side_by_side(server, store, page, screenshot_dir):
    _, experiment_id, parents, _, _ = store
    page, errors = page
    runs = json.dumps([run.info.run_id for run in parents[:2]])
    experiments = json.dumps([experiment_id])
    page.goto(f"{server}/#/compare-runs?runs={runs}&experiments={experiments}&workflowType=machine_learning")
    page.get_by_text("Comparing 2 Runs", exact=False).first.wait_for()
    # params and summary figures, one column per workflow run (the tables draw their first rows)
    for text in ("aligner.epochs", "aligner/val_loss", "benchmark/asr_closed_cer_tts", "config_hash"):
        page.get_by_text(text, exact=True).first.wait_for()
    close_assistant(page)
    page.get_by_text("Metrics", exact=True).first.scroll_into_view_if_needed()
    page.screenshot(path=screenshot_dir / "mlflow-compare.png", full_page=False)
    assert not errors, errors


def test_the_store_path_is_what_the_where_command_names(store, tiny_run):
    workdir, config = tiny_run
    answer = subprocess.run([sys.executable, "-m", "tts_pipeline", "where", "--config", str(config)],
                            cwd=workdir, capture_output=True, text=True, check=True)  # fmt: skip
    assert tracking.ui_url("http://127.0.0.1:5000", store[1]) in answer.stdout
    assert Path(workdir / "results" / "mlflow.db").is_file()
