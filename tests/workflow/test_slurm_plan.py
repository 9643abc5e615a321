"""The Slurm profile's plan of the LJSpeech recipe, read from a real dry run (no Slurm needed).

``snakemake --profile workflow/profiles/slurm -n --configfile config/config.yaml`` prints each job's
message, not its resources; the plan is read from the same dry run by recording every job Snakemake
reports (``Job.log_info``) with the resources it would submit.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ..conftest import REPO

pytestmark = pytest.mark.slow

BIN = Path(sys.executable).parent

# Runs Snakemake's own command line in a child process, recording each reported job's resources.
RECORDER = """
import json, sys
from snakemake import jobs
from snakemake.cli import main

plan = {}
log_info = jobs.Job.log_info

def record(self, *args, **kwargs):
    plan[self.rule.name] = {key: value for key, value in self.resources.items() if not key.startswith("_")}
    return log_info(self, *args, **kwargs)

jobs.Job.log_info = record
try:
    main(sys.argv[2:])
finally:
    with open(sys.argv[1], "w") as out:
        json.dump(plan, out)
"""


def dry_run_plan(tmp_path: Path, *args: str) -> dict[str, dict]:
    pytest.importorskip("snakemake_executor_plugin_slurm", reason="the Slurm profile needs the slurm extra")
    out = tmp_path / "plan.json"
    command = [
        sys.executable, "-c", RECORDER, str(out),
        "--snakefile", str(REPO / "workflow/Snakefile"),
        "--profile", str(REPO / "workflow/profiles/slurm"),
        "--directory", str(tmp_path),
        "-n", *args,
        "--configfile", str(REPO / "config/config.yaml"),
    ]
    result = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(out.read_text())


def test_the_slurm_plan_of_the_ljspeech_recipe_asks_for_gpus_memory_and_time(tmp_path):
    from tts_pipeline.config.cluster_sections import DEFAULT_RESOURCES

    plan = dry_run_plan(tmp_path)
    optional = {"train_tacotron2", "train_waveglow"}  # FastPitch 1.0's path: not in the recipe's DAG
    assert set(plan) == set(DEFAULT_RESOURCES) - optional | {"all"}
    for rule, (mem_mb, runtime, cpus) in DEFAULT_RESOURCES.items():
        if rule in optional:
            continue
        assert plan[rule]["mem_mb"] == mem_mb and plan[rule]["runtime"] == runtime, (rule, plan[rule])
        assert plan[rule]["cpus_per_task"] == cpus, (rule, plan[rule])
        # no --ntasks-per-gpu: Slurm starts the command once, torchrun spawns one process per GPU
        assert plan[rule]["tasks"] == 0 and "tasks_per_gpu" not in plan[rule], (rule, plan[rule])
    config = yaml.safe_load((REPO / "config/config.yaml").read_text())
    assert plan["train_hifigan"]["gpu"] == plan["train_fastpitch"]["gpu"] == 4
    assert plan["train_aligner"]["gpu"] == config["aligner"]["gpus"]
    # 4 + 4 fit --resources gpu=8 at once, and accumulation keeps each global batch
    for section in ("hifigan", "fastpitch"):
        values = config[section]
        per_step = values["gpus"] * values["batch_size"]
        assert values["global_batch_size"] % per_step == 0 and values["global_batch_size"] // per_step == 2


def test_set_resources_overrides_the_config_for_one_run(tmp_path):
    plan = dry_run_plan(tmp_path, "--set-resources", "train_hifigan:runtime=2880", "train_hifigan:mem_mb=64000")
    assert plan["train_hifigan"]["runtime"] == 2880 and plan["train_hifigan"]["mem_mb"] == 64000
    assert plan["train_fastpitch"]["runtime"] == 720


def test_a_local_plan_with_8_gpus_trains_both_models_side_by_side(tmp_path):
    """With ``--resources gpu=8`` on one box, HiFi-GAN (4) and FastPitch (4) fit at once: Snakemake's
    scheduler caps nothing, so both keep their 4."""
    plan = dry_run_plan(tmp_path, "--executor", "local", "--cores", "all", "--resources", "gpu=8")
    assert plan["train_hifigan"]["gpu"] + plan["train_fastpitch"]["gpu"] <= 8
    assert plan["train_hifigan"]["gpu"] == plan["train_fastpitch"]["gpu"] == 4
