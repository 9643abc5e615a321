"""`tts-pipeline where` and `make demo`'s report command with a ``results_dir`` full of shell characters."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys

import pytest
import yaml

from tts_pipeline import cli

from ..conftest import REPO

HOSTILE = "a b 'c' \"d\" $(touch INJECTED) `touch INJECTED2`"


@pytest.fixture
def config(tmp_path):
    """The demo config with its folders under a folder named like a shell injection."""
    raw = yaml.safe_load((REPO / "config/demo.yaml").read_text())
    raw["results_dir"] = str(tmp_path / HOSTILE / "results")
    raw["resources_dir"] = str(tmp_path / HOSTILE / "resources")
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def test_the_printed_commands_survive_a_paste_into_a_shell(tmp_path, config, capsys):
    cli.main(["where", "--config", str(config)])
    printed = capsys.readouterr().out.splitlines()
    lines = {line.split(":", 1)[0]: line.split(":", 1)[1].strip() for line in printed if not line.startswith(" ")}
    report = str(tmp_path / HOSTILE / "results" / "demo" / "report.html")
    command = lines["report"].split("   (", 1)[1].removesuffix(")")
    assert shlex.split(command) == ["snakemake", "--report", report, "--configfile", str(config)]
    ui = lines["MLflow UI"].split("   (or make mlflow-ui)")[0]
    database = str(tmp_path / HOSTILE / "results" / "mlflow.db")
    assert shlex.split(ui) == ["mlflow", "ui", "--backend-store-uri", f"sqlite:///{database}"]
    serve = lines["serve"].split("   then open")[0]
    assert shlex.split(serve) == ["tts-pipeline", "serve", str(tmp_path / HOSTILE / "results" / "demo" / "export")]
    assert lines["registered"].startswith("models:/demo@champion")
    mlflow_serve = printed[printed.index(next(line for line in printed if line.startswith("registered:"))) + 1]
    assert shlex.split(mlflow_serve) == [
        f"MLFLOW_TRACKING_URI=sqlite:///{database}", "mlflow", "models", "serve", "-m", "models:/demo@champion",
        "--env-manager", "local", "--port", "5001",
    ]  # fmt: skip

    cli.main(["where", "--config", str(config), "--report-path"])
    assert capsys.readouterr().out == report + "\n"


@pytest.mark.skipif(shutil.which("make") is None, reason="needs GNU make")
def test_make_demo_hands_snakemake_the_report_path_in_one_piece(tmp_path, config):
    """The Makefile's own ``demo`` recipe, with a stand-in ``snakemake`` that records its arguments
    (``BIN`` points at a folder holding it and a ``python`` that runs this interpreter)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "calls.jsonl"
    stand_in = f"import json, sys\nwith open({str(calls)!r}, 'a') as f: f.write(json.dumps(sys.argv[1:]) + '\\n')\n"
    (bin_dir / "snakemake").write_text(f"#!{sys.executable}\n{stand_in}")
    (bin_dir / "python").write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} "$@"\n')
    for script in bin_dir.iterdir():
        script.chmod(0o755)
    stamp = tmp_path / "installed"
    stamp.touch()  # newer than pyproject.toml: make skips the setup recipe
    result = subprocess.run(
        ["make", "--no-print-directory", "-C", str(REPO), "demo", f"BIN={bin_dir}", f"STAMP={stamp}",
         f"CONFIG={config}"],
        capture_output=True, text=True, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    run, report = [json.loads(line) for line in calls.read_text().splitlines()]
    assert run[:2] == ["--configfile", str(config)]
    assert report == ["--configfile", str(config), "--report", str(tmp_path / HOSTILE / "results/demo/report.html")]
    assert not list(tmp_path.rglob("INJECTED*")) and not list(REPO.glob("INJECTED*"))
