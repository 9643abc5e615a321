"""The tiny demo DAG through ``--profile workflow/profiles/slurm`` against a real (single-node) Slurm.

``make test-slurm`` runs these: ``tools/slurm-local start`` brings up Debian's Slurm (slurmctld,
slurmd, slurmdbd, munge) on this machine; where it cannot (no root, no apt-get, daemons that do not
start), every test is skipped with the script's message. Jobs track into an MLflow server started for
the module (a SQLite file is what the profile refuses), as on a real cluster.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

from ..conftest import REPO
from ..workflow import test_data_workflow as local
from ..workflow.test_data_workflow import HOSTILE, STAGES, demo_dirs, tiny_demo

# Folders with a space: Snakemake quotes those correctly for cluster jobs (quotes, $ and backticks it
# does not: the workflow refuses them under a cluster executor, see the first test).
FOLDERS = {"results_dir": "slurm out/results", "resources_dir": "slurm out/resources"}
OUT = "slurm out"

pytestmark = [pytest.mark.slurm, pytest.mark.slow]

BIN = Path(sys.executable).parent
RULES = (*STAGES, "report_pages")  # every rule but `all`, which Snakemake runs itself


@pytest.fixture(scope="module")
def slurm() -> None:
    """A running single-node Slurm, or the module skipped with the reason."""
    try:
        import snakemake_executor_plugin_slurm  # noqa: F401
    except ImportError:
        pytest.skip("snakemake-executor-plugin-slurm is not installed (pip install -e '.[slurm]')")
    result = subprocess.run([str(REPO / "tools/slurm-local"), "start"], capture_output=True, text=True)
    if result.returncode != 0:
        pytest.skip(f"Slurm cannot start here: {(result.stdout + result.stderr).strip()}")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def mlflow_server(tmp_path_factory):
    """``mlflow server`` with a SQLite backend that only it writes; yields its URI."""
    folder = tmp_path_factory.mktemp("mlflow_server")
    port = _free_port()
    log = (folder / "server.log").open("w")
    server = subprocess.Popen(
        [str(BIN / "mlflow"), "server", "--host", "127.0.0.1", "--port", str(port), "--workers", "1",
         "--backend-store-uri", f"sqlite:///{folder / 'mlflow.db'}", "--artifacts-destination", str(folder / "art")],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    uri = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        try:
            with urllib.request.urlopen(f"{uri}/health", timeout=2) as response:
                if response.status == 200:
                    break
        except OSError:
            pass
        if server.poll() is not None or time.monotonic() > deadline:
            server.kill()
            raise AssertionError(f"mlflow server did not start:\n{(folder / 'server.log').read_text()}")
        time.sleep(0.5)
    yield uri
    server.terminate()
    server.wait(timeout=30)
    log.close()


def slurm_snakemake(workdir: Path, *args: str, config: Path, check: bool = True) -> subprocess.CompletedProcess:
    """Snakemake with the Slurm profile (and the repository's default workflow profile, as from a clone)."""
    command = [
        str(BIN / "snakemake"),
        "--snakefile", str(REPO / "workflow/Snakefile"),
        "--profile", str(REPO / "workflow/profiles/slurm"),
        "--workflow-profile", str(REPO / "workflow/profiles/default"),
        "--directory", str(workdir),
        # a test cluster answers at once: poll sooner than the profile does
        "--slurm-init-seconds-before-status-checks", "2",
        "--latency-wait", "5",
        *args,
        "--configfile", str(config),
    ]
    env = {key: value for key, value in os.environ.items() if not key.startswith("TTS_")}
    env["PATH"] = f"{BIN}{os.pathsep}{env['PATH']}"
    result = subprocess.run(command, capture_output=True, text=True, env=env, cwd=workdir)
    if check and result.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result


def submitted(result: subprocess.CompletedProcess) -> dict[str, str]:
    """Slurm job id of each rule Snakemake submitted, from its 'Job N has been submitted' lines."""
    out = result.stdout + result.stderr
    jobs = dict(re.findall(r"^Job \d+ has been submitted with SLURM jobid (\d+) \(log: .*/rule_(\w+)/", out, re.M))
    return {rule: job_id for job_id, rule in jobs.items()}


def sacct(job_ids) -> dict[str, dict[str, str]]:
    """``sacct`` rows (allocations only) of the given jobs, by job id."""
    fields = ["JobID", "JobName", "State", "ExitCode", "ReqMem", "Timelimit", "AllocCPUS", "Comment"]
    result = subprocess.run(
        ["sacct", "-X", "-P", "-n", "-j", ",".join(job_ids), "-o", ",".join(fields)],
        capture_output=True, text=True, check=True,
    )
    rows = [dict(zip(fields, line.split("|"), strict=True)) for line in result.stdout.splitlines()]
    return {row["JobID"]: row for row in rows}


@pytest.fixture(scope="module")
def slurm_run(slurm, mlflow_server, tmp_path_factory):
    """One run of the whole tiny DAG through Slurm, its outputs in a folder whose name holds a space."""
    workdir = tmp_path_factory.mktemp("slurm_run")
    config = tiny_demo(workdir, **FOLDERS, tracking__uri=mlflow_server)
    result = slurm_snakemake(workdir, config=config)
    (workdir / "terminal.txt").write_text(result.stdout + result.stderr)
    return workdir, config, result


def test_the_sqlite_store_and_shell_quoted_folders_are_refused_before_any_job(slurm, tmp_path):
    config = tiny_demo(tmp_path)  # tracking.uri null: <results_dir>/mlflow.db
    result = slurm_snakemake(tmp_path, config=config, check=False)
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert "SQLite" in out and "cluster.allow_sqlite" in out and "tracking.uri" in out, out
    assert not submitted(result) and not (tmp_path / "resources").exists()

    config = tiny_demo(tmp_path, **demo_dirs(), cluster__allow_sqlite=True)
    result = slurm_snakemake(tmp_path, config=config, check=False)
    out = result.stdout + result.stderr
    assert result.returncode != 0 and "results_dir" in out and "quotes, $, backticks" in out, out
    assert not submitted(result) and not (tmp_path / HOSTILE).exists()
    assert not {"INJECTED", "INJECTED2"} & {path.name for path in tmp_path.iterdir()}


def test_every_job_is_a_slurm_job_with_the_configured_requests(slurm_run):
    workdir, config, result = slurm_run
    jobs = submitted(result)
    assert set(jobs) == set(RULES), jobs
    rows = sacct(jobs.values())
    (workdir / "sacct.txt").write_text("\n".join("|".join(row.values()) for row in rows.values()))
    resources = yaml.safe_load(config.read_text())["cluster"]["resources"]
    for rule, job_id in jobs.items():
        row = rows[job_id]
        assert row["State"] == "COMPLETED" and row["ExitCode"] == "0:0", row
        assert row["Comment"] == f"rule_{rule}", row
        assert row["ReqMem"] == f"{resources[rule]['mem_mb']}M", row
        hours, minutes = divmod(resources[rule]["runtime"], 60)
        assert row["Timelimit"] == f"{hours:02d}:{minutes:02d}:00", row
        assert row["AllocCPUS"] == str(resources[rule]["cpus_per_task"]), row


def test_outputs_hold_the_local_runs_contracts(slurm_run):
    workdir, config, _ = slurm_run
    # the local run's checks read <workdir>/HOSTILE/...: let that name lead to this run's folder
    (workdir / HOSTILE).symlink_to(workdir / OUT)
    try:
        local.test_contract_files((workdir, config))
        local.test_feature_contracts((workdir, config))
        local.test_vocoder_contracts((workdir, config))
        local.test_benchmark_and_report_contracts((workdir, config))
        local.test_fastpitch_mels_have_the_ground_truth_frame_count((workdir, config))
    finally:
        (workdir / HOSTILE).unlink()


def test_mlflow_runs_are_complete_in_the_server(slurm_run, mlflow_server):
    import mlflow

    from tts_pipeline import tracking

    workdir, _, _ = slurm_run
    client = mlflow.MlflowClient(mlflow_server)
    experiment = client.get_experiment_by_name("demo")
    parents = client.search_runs([experiment.experiment_id], "tags.kind = 'workflow'")
    assert len(parents) == 1 and parents[0].info.status == "FINISHED"
    settings = tracking.TrackingSettings(enabled=True, uri=mlflow_server, experiment="demo")
    children = tracking.find_child_runs(settings, parents[0].info.run_id)
    by_stage = {child["tags"]["stage"]: child for child in children}
    assert set(by_stage) == set(STAGES)
    assert {child["status"] for child in children} == {"FINISHED"}
    assert by_stage["manifest"]["metrics"]["n_valid"] == 24
    assert {"train/loss", "val/loss"} <= set(by_stage["train_fastpitch"]["metrics"])
    # artifacts went up through the server (no shared artifact folder)
    fastpitch = by_stage["train_fastpitch"]
    assert fastpitch["artifact_uri"].startswith("mlflow-artifacts:")
    assert [item.path for item in client.list_artifacts(fastpitch["run_id"], "model")] == ["model/model.pt"]
    # the jobs wrote through the server only: no SQLite store appeared beside the outputs
    assert not list(workdir.rglob("*.db"))


def test_a_single_stage_reruns_as_one_slurm_job(slurm_run):
    workdir, config, _ = slurm_run
    page = workdir / OUT / "results/demo/report/audio"
    before = page.stat().st_mtime_ns
    result = slurm_snakemake(workdir, "-R", "report_pages", config=config)
    jobs = submitted(result)
    assert set(jobs) == {"report_pages"}, jobs
    assert sacct(jobs.values())[jobs["report_pages"]]["State"] == "COMPLETED"
    assert page.stat().st_mtime_ns > before


def test_a_failing_jobs_log_is_named_in_snakemakes_message(slurm_run):
    workdir, config, _ = slurm_run
    bad = workdir / "bad_phrases.txt"
    bad.write_text("a line without the separator\n")
    uri = yaml.safe_load(config.read_text())["tracking"]["uri"]
    changed = tiny_demo(workdir, **FOLDERS, tracking__uri=uri, inference__phrases=str(bad))
    result = slurm_snakemake(workdir, "--until", "synthesize", config=changed, check=False)
    assert result.returncode != 0
    out = result.stdout + result.stderr
    jobs = submitted(result)
    assert set(jobs) == {"synthesize"}, jobs
    assert sacct(jobs.values())[jobs["synthesize"]]["State"] == "FAILED"
    # Snakemake's error block names the stage's log; that log holds the stage's own message
    error = out[out.index("Error in rule synthesize:"):]
    logs = re.search(r"^\s+log: (.+?) \(check log file\(s\) for error details\)$", error, re.M)
    assert logs, error
    stage_log, slurm_log = logs.group(1).split(", ")
    assert stage_log == f"{OUT}/results/demo/logs/synthesize.log"
    text = (workdir / stage_log).read_text()
    assert str(bad) in text and "|" in text, text
    # and the Slurm job's own log (Snakemake inside the job), kept because the job failed
    assert re.fullmatch(r".+/\.snakemake/slurm_logs/rule_synthesize/\d+\.log", slurm_log), slurm_log
    assert "Error in rule synthesize" in Path(slurm_log).read_text()
