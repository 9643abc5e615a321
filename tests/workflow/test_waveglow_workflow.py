"""WaveGlow in the DAG, by dry runs: planned only when the config uses it, its model reaching synthesis and
the benchmark, a pretrained file replacing its training, and `train_waveglow` asked for by name."""

from __future__ import annotations

import pytest

from .test_data_workflow import HOSTILE, demo_dirs, jobs, snakemake, tiny_demo

pytestmark = pytest.mark.slow


def command_of(out: str, command: str) -> str:
    """The full shell command of a job (the dry run may also print it shortened)."""
    return max((line for line in out.splitlines() if line.startswith("Shell command:") and command in line), key=len)


def test_inference_vocoder_waveglow_plans_train_waveglow_for_synthesis_and_benchmark(tmp_path):
    config = tiny_demo(tmp_path, inference__vocoder="waveglow", **demo_dirs())
    plan = snakemake(tmp_path, "-n", "-p", config=config)
    out = plan.stdout + plan.stderr
    planned = jobs(plan)
    assert {"train_waveglow", "synthesize", "benchmark", "finetune_hifigan"} <= planned
    # synthesis reads WaveGlow instead of the fine-tuned HiFi-GAN; the benchmark reads both (the paths
    # are quoted for the shell: the folder's quotes are escaped)
    model = "/results/demo/waveglow/model.pt'"
    synthesize = command_of(out, "tts-pipeline synthesize")
    assert "--vocoder 'out dir" in synthesize and "--hifigan" not in synthesize and model in synthesize
    benchmark = command_of(out, "tts-pipeline benchmark")
    assert "--vocoders 'waveglow=out dir" in benchmark and "--hifigan 'out dir" in benchmark and model in benchmark
    assert "train-waveglow --section" in out
    assert "export_voice" not in planned, "WaveGlow has no export yet: the DAG ends without it"
    assert not (tmp_path / HOSTILE).exists(), "a dry run writes nothing"


def test_the_default_dag_has_no_waveglow_but_it_can_be_asked_for(tmp_path):
    config = tiny_demo(tmp_path)
    plan = snakemake(tmp_path, "-n", "-p", config=config)
    assert "train_waveglow" not in jobs(plan) and "--vocoders" not in plan.stdout + plan.stderr
    asked = jobs(snakemake(tmp_path, "-n", "train_waveglow", config=config))
    assert "train_waveglow" in asked and "synthesize" not in asked and "train_hifigan" not in asked


def test_a_pretrained_waveglow_replaces_its_training_and_joins_the_benchmark(tmp_path):
    pretrained = tmp_path / "nvidia_waveglow256pyt_fp16.pt"
    pretrained.write_bytes(b"")  # a dry run only checks that the file exists
    config = tiny_demo(tmp_path, waveglow__checkpoint=str(pretrained))
    plan = snakemake(tmp_path, "-n", "-p", config=config)
    out = plan.stdout + plan.stderr
    assert "train_waveglow" not in jobs(plan) and "benchmark" in jobs(plan)
    assert f"--vocoders waveglow={pretrained}" in out
