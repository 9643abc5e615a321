"""FastPitch 1.0's path through Snakemake (dry runs): with durations.source tacotron2 the DAG trains
Tacotron 2 before the durations, and a tacotron2.checkpoint stands in for that training."""

from __future__ import annotations

import re
import shlex

from .test_data_workflow import HOSTILE, jobs, snakemake, tiny_demo


def _edges(dot: str) -> set[tuple[str, str]]:
    """``(upstream rule, downstream rule)`` pairs of ``snakemake --dag`` output."""
    labels = dict(re.findall(r'^\s*(\d+)\[label = "(\w+)"', dot, re.M))
    return {(labels[a], labels[b]) for a, b in re.findall(r"^\s*(\d+) -> (\d+)", dot, re.M)}


def _option(plan, start: str, option: str) -> str:
    """The value of ``option`` in the shell command of a dry run (``-p``) that runs ``start`` (after any
    environment settings and the GPU lease)."""
    lines = (plan.stdout + plan.stderr).splitlines()
    command = next(line for line in lines if line.startswith("Shell command: ") and start in line)
    words = shlex.split(command.removeprefix("Shell command: "))
    return words[words.index(option) + 1]


def test_tacotron2_trains_before_the_durations_and_a_checkpoint_replaces_it(tmp_path):
    folders = {"results_dir": f"{HOSTILE}/results", "resources_dir": f"{HOSTILE}/resources"}
    config = tiny_demo(tmp_path, durations__source="tacotron2", **folders)
    plan = snakemake(tmp_path, "-n", "-p", config=config)
    planned = jobs(plan)
    assert {"train_tacotron2", "durations", "train_fastpitch"} <= planned and "train_aligner" not in planned
    model = _option(plan, "tts-pipeline durations ", "--tacotron2")
    assert model == f"{HOSTILE}/results/demo/tacotron2/model.pt"
    dag = snakemake(tmp_path, "--dag", config=config).stdout
    edges = _edges(dag)
    assert ("train_tacotron2", "durations") in edges and ("features", "train_tacotron2") in edges
    assert ("durations", "train_fastpitch") in edges

    pretrained = tmp_path / "nvidia_tacotron2pyt_fp16.pt"
    pretrained.write_bytes(b"")  # a dry run only checks that the file exists
    config = tiny_demo(tmp_path, durations__source="tacotron2", tacotron2__checkpoint=str(pretrained), **folders)
    plan = snakemake(tmp_path, "-n", "-p", config=config)
    assert "train_tacotron2" not in jobs(plan) and "durations" in jobs(plan)
    assert _option(plan, "tts-pipeline durations ", "--tacotron2") == str(pretrained)
    assert not (tmp_path / HOSTILE).exists(), "a dry run writes nothing"


def test_synthesis_with_tacotron2_trains_it_and_the_benchmark_measures_it_beside_fastpitch(tmp_path):
    """inference.acoustic_model tacotron2 with the aligner's durations: Tacotron 2 is trained for synthesis
    alone, synthesize reads it, and the benchmark gets it as another acoustic model."""
    folders = {"results_dir": f"{HOSTILE}/results", "resources_dir": f"{HOSTILE}/resources"}
    config = tiny_demo(tmp_path, inference__acoustic_model="tacotron2", **folders)
    plan = snakemake(tmp_path, "-n", "-p", config=config)
    planned = jobs(plan)
    assert {"train_tacotron2", "train_aligner", "train_fastpitch", "synthesize", "benchmark"} <= planned
    model = f"{HOSTILE}/results/demo/tacotron2/model.pt"
    assert _option(plan, "tts-pipeline synthesize ", "--acoustic-model") == model
    assert _option(plan, "tts-pipeline benchmark ", "--acoustic-models") == f"tacotron2={model}"
    edges = _edges(snakemake(tmp_path, "--dag", config=config).stdout)
    assert ("train_tacotron2", "synthesize") in edges and ("train_tacotron2", "benchmark") in edges
