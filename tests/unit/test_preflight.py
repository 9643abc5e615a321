"""Settings against the data, memory and time they imply: refused (or warned about) before any job,
naming the key and what was expected."""

from __future__ import annotations

import json

import pytest
import yaml

from tts_pipeline import cli, preflight
from tts_pipeline.config import ConfigError, parse_config
from tts_pipeline.preflight import training_time
from tts_pipeline.workflow import Pipeline

from ..conftest import REPO

DEMO_TRAININGS = ("train_aligner", "train_hifigan", "train_fastpitch", "finetune_hifigan")


@pytest.fixture
def demo() -> dict:
    raw = yaml.safe_load((REPO / "config/demo.yaml").read_text())
    raw["benchmark"]["phrases"] = str(REPO / raw["benchmark"]["phrases"])
    return raw


def _write_manifest(path, samples: list[int]) -> None:
    lines = [json.dumps({"id": f"C{index:03d}", "n_samples": count}) for index, count in enumerate(samples)]
    path.write_text("\n".join(lines) + "\n")


def _findings(raw: dict, tmp_path, *, manifest=None, metrics: dict | None = None):
    config = parse_config(raw)
    trainings = {rule: str(tmp_path / f"{rule}.json") for rule in DEMO_TRAININGS}
    for rule, rate in (metrics or {}).items():
        (tmp_path / f"{rule}.json").write_text(json.dumps({"steps_per_s": rate}))
    manifest = manifest or tmp_path / "absent.jsonl"
    return preflight.check_settings(config, manifest=manifest, trainings=trainings, benchmark_phrases=None)


def _keys(findings, severity="error") -> set[str]:
    return {finding.key for finding in findings if finding.severity == severity}


def _message(findings, key: str) -> str:
    return " ".join(finding.message for finding in findings if finding.key == key)


@pytest.mark.parametrize("name", ["demo.yaml", "config.yaml"])
def test_the_shipped_configs_have_no_findings(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)  # no manifest: the bounds the config implies
    raw = yaml.safe_load((REPO / "config" / name).read_text())
    assert Pipeline(raw).check_settings() == []


def test_an_absurd_segment_size_is_refused_before_any_manifest(demo, tmp_path):
    demo["hifigan"]["segment_size"] = 2147483648
    findings = _findings(demo, tmp_path)
    assert _keys(findings) == {"hifigan.segment_size"}  # the batch's memory rests on it: not listed twice
    message = _message(findings, "hifigan.segment_size")
    assert "2,147,483,648" in message and "data.max_duration_s (20 s = 441,000 samples)" in message
    assert "at most 440,832" in message  # the largest multiple of the hop within 20 s


def test_the_segment_size_is_checked_against_the_longest_training_clip(demo, tmp_path):
    manifest = tmp_path / "manifest.train.jsonl"
    _write_manifest(manifest, [30_000, 70_000, 50_000] * 10)
    demo["hifigan"]["segment_size"] = 70_144  # 274 frames: 144 samples past the longest clip
    message = _message(_findings(demo, tmp_path, manifest=manifest), "hifigan.segment_size")
    assert "70,000 samples" in message and str(manifest) in message and "at most 69,888" in message
    demo["hifigan"]["segment_size"] = 69_888
    assert _findings(demo, tmp_path, manifest=manifest) == []


def test_waveglow_segment_size_is_checked_only_when_waveglow_trains(demo, tmp_path):
    demo["waveglow"]["segment_size"] = 256 * 100_000
    assert _findings(demo, tmp_path) == []  # not in the demo's DAG
    config = parse_config(demo)
    findings = preflight.check_settings(
        config, manifest=tmp_path / "absent", trainings={"train_waveglow": str(tmp_path / "m.json")}
    )
    assert _keys(findings) == {"waveglow.segment_size"}


def test_a_batch_larger_than_the_training_clips_is_refused(demo, tmp_path):
    manifest = tmp_path / "manifest.train.jsonl"
    _write_manifest(manifest, [40_000] * 20)
    demo["hifigan"].update(batch_size=32, global_batch_size=32)
    demo["aligner"]["batch_size"] = 21
    findings = _findings(demo, tmp_path, manifest=manifest)
    assert _keys(findings) == {"hifigan.batch_size", "aligner.batch_size"}
    assert "more than the training clips (20, in " in _message(findings, "hifigan.batch_size")
    assert "expected at most 20" in _message(findings, "aligner.batch_size")


def test_the_global_batch_is_checked_against_the_clips_the_corpus_can_give(demo, tmp_path):
    # before the first run: 324 demo clips less 12 + 96 held out = at most 216 for training
    demo["fastpitch"]["global_batch_size"] = 224
    findings = _findings(demo, tmp_path)
    assert _keys(findings) == {"fastpitch.global_batch_size"}
    message = _message(findings, "fastpitch.global_batch_size")
    assert "216, at most, from corpus.demo.n_utterances" in message


def test_a_split_that_leaves_no_training_clip_is_refused(demo, tmp_path):
    demo["data"]["split"].update(val_size=200, test_size=124)
    assert "data.split" in _keys(_findings(demo, tmp_path))


def test_a_batch_past_any_memory_is_refused_with_the_estimate(demo, tmp_path):
    demo["corpus"]["demo"]["n_utterances"] = 100_000  # enough clips: only memory can refuse it
    demo["hifigan"].update(batch_size=90_000, global_batch_size=90_000)
    findings = _findings(demo, tmp_path)
    assert _keys(findings) == {"hifigan.batch_size"}
    message = _message(findings, "hifigan.batch_size")
    assert "needs at least 499.9 GiB" in message and "an estimate" in message and "at most 46,091" in message


def test_sections_out_of_the_dag_are_not_checked(demo, tmp_path):
    demo["tacotron2"].update(batch_size=100_000, global_batch_size=100_000, epochs=10**9)
    assert _findings(demo, tmp_path) == []


def test_absurd_benchmark_batch_sizes_are_refused(demo, tmp_path):
    demo["benchmark"]["batch_sizes"] = [1, 1_000_000]
    config = parse_config(demo)
    findings = preflight.check_settings(
        config, manifest=tmp_path / "absent", trainings={}, benchmark_phrases=demo["benchmark"]["phrases"]
    )
    assert _keys(findings) == {"benchmark.batch_sizes"}
    message = _message(findings, "benchmark.batch_sizes")
    assert "1,000,000 copies of the 128-character benchmark phrase" in message
    assert "expected sizes of at most" in message


def test_an_absurd_inference_batch_is_refused(demo, tmp_path):
    demo["inference"]["batch_size"] = 10**8
    assert _keys(_findings(demo, tmp_path)) == {"inference.batch_size"}


def test_epochs_implying_years_are_a_warning_with_the_assumed_estimate(demo, tmp_path):
    demo["hifigan"]["epochs"] = 10**9
    findings = _findings(demo, tmp_path)
    assert _keys(findings) == set() and _keys(findings, "warning") == {"hifigan.epochs"}
    message = _message(findings, "hifigan.epochs")
    assert "1,000,000,000 epochs x 27 steps per epoch (216 training clips / global batch 8)" in message
    assert "27,000,000,000 optimiser steps" in message
    assert "at 0.05 s per step (assumed" in message and "years" in message and "estimate" in message


def test_the_estimate_uses_the_speed_the_last_run_measured(demo, tmp_path):
    demo["fastpitch"]["epochs"] = 1_000_000  # 13 M steps: 7.5 days at 0.05 s, 150 days at 1 s
    assert _findings(demo, tmp_path) == []
    findings = _findings(demo, tmp_path, metrics={"train_fastpitch": 1.0})
    assert _keys(findings, "warning") == {"fastpitch.epochs"}
    message = _message(findings, "fastpitch.epochs")
    assert "at 1 s per step (measured by its last run" in message and "train_fastpitch.json" in message


def test_max_steps_bounds_the_estimate_and_is_named_when_it_binds(demo, tmp_path):
    demo["fastpitch"].update(epochs=10**9, max_steps=1000)
    assert _findings(demo, tmp_path) == []
    demo["fastpitch"]["max_steps"] = 10**9
    assert _keys(_findings(demo, tmp_path), "warning") == {"fastpitch.max_steps"}


def test_fine_tuning_epochs_are_estimated_under_their_own_key(demo, tmp_path):
    demo["hifigan"]["fine_tune_epochs"] = 10**9
    assert _keys(_findings(demo, tmp_path), "warning") == {"hifigan.fine_tune_epochs"}


def test_describe_seconds_reads_at_every_scale():
    assert training_time.describe_seconds(30) == "30 seconds"
    assert training_time.describe_seconds(36 * 3600) == "1.5 days"
    assert training_time.describe_seconds(400 * 86400) == "1.1 years"


def test_check_config_refuses_naming_each_key_and_warns_with_the_estimate(demo, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    demo["hifigan"]["segment_size"] = 2147483648
    demo["benchmark"]["batch_sizes"] = [1_000_000]
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(demo))
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["check-config", "--quiet", str(path)])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "hifigan.segment_size: 2,147,483,648 samples" in err and "benchmark.batch_sizes: 1,000,000" in err
    assert "Traceback" not in err

    demo["hifigan"]["segment_size"] = 8192
    demo["benchmark"]["batch_sizes"] = [1]
    demo["fastpitch"]["epochs"] = 10**9
    path.write_text(yaml.safe_dump(demo))
    cli.main(["check-config", "--quiet", str(path)])  # a warning only: the config is usable
    err = capsys.readouterr().err
    assert "config warning" in err and "fastpitch.epochs" in err and "This is an estimate" in err


def test_the_workflow_start_refuses_through_the_pipeline(demo, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    demo["hifigan"]["segment_size"] = 2147483648
    with pytest.raises(ConfigError) as info:
        Pipeline(demo, source="snakemake config")
    assert "invalid config (snakemake config)" in str(info.value) and "hifigan.segment_size" in str(info.value)
