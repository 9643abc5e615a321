"""`make gpu-check`'s plan, checked without a GPU so that it cannot rot between the rare GPU runs: its
steps and limits, every benchmark command line against the CLI, the demo overlays against the config
model, the record's fields and rendering."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

from tts_pipeline.cli import build_parser
from tts_pipeline.config.pipeline import parse_config

from ..conftest import REPO

sys.path.insert(0, str(REPO / "tools"))

from gpucheck import plan  # noqa: E402
from gpucheck.main import parse_args  # noqa: E402
from gpucheck.record import Record, render_markdown  # noqa: E402
from gpucheck.steps import STEP_FUNCTIONS, benchmark_row, junit_summary  # noqa: E402

BENCHMARK_STEPS = ("train-hifigan", "train-fastpitch", "inference")


def test_steps_run_in_the_issued_order_within_eight_minutes():
    assert [step.name for step in plan.STEPS] == [
        "environment", "kit", "gpu-tests", "train-hifigan", "train-fastpitch", "inference", "demo",
    ]
    assert all(step.limit_s > 0 for step in plan.STEPS)
    assert sum(step.limit_s for step in plan.STEPS) <= plan.TOTAL_LIMIT_S == 480
    assert set(STEP_FUNCTIONS) == {step.name for step in plan.STEPS}
    plan.check_plan()


def test_check_plan_refuses_limits_over_the_total(monkeypatch):
    monkeypatch.setattr(plan, "STEPS", (*plan.STEPS, plan.Step("extra", 100, "Extra", "too long")))
    with pytest.raises(ValueError, match="over the 480 s"):
        plan.check_plan()


def test_nvidia_figures_are_the_published_ones():
    assert {key: figure.value for key, figure in plan.NVIDIA.items()} == {
        "hifigan_tf32": 12_055, "hifigan_amp": 15_579, "fastpitch_tf32": 113_725, "fastpitch_amp": 164_955,
        "inference_fp16_b1": 0.019,
    }


@pytest.mark.parametrize("rehearsal", [False, True], ids=["gpu", "rehearsal"])
@pytest.mark.parametrize("step", BENCHMARK_STEPS)
def test_every_benchmark_command_line_parses(step, rehearsal):
    """Each variant, at each batch, is a command line the CLI accepts (a renamed option fails here)."""
    variants = plan.benchmark_variants(step, plan.sizes(rehearsal))
    assert variants and len({variant.name for variant in variants}) == len(variants)
    for variant in variants:
        command = variant.argv[0]
        for batch in variant.batches:
            argv = [*variant.argv, variant.flag, str(batch), "--json", "out.json"]
            args = build_parser(command).parse_args(argv)
            assert args.device == plan.sizes(rehearsal).device and str(args.json) == "out.json"


def test_gpu_rows_cover_precisions_and_speed_variants():
    names = {step: [variant.name for variant in plan.benchmark_variants(step, plan.GPU)] for step in BENCHMARK_STEPS}
    for step in ("train-hifigan", "train-fastpitch"):
        assert {"fp16", "bf16", "tf32", "fp16 + torch.compile"} <= set(names[step])
        assert names[step][-1] == "fp16 + torch.compile", "the slowest to start runs last"
    assert "fp16 + fused AdamW" in names["train-hifigan"]
    assert {f"{p} batch {b}" for p in ("fp16", "bf16", "tf32") for b in (1, 2, 4, 8)} <= set(names["inference"])
    assert {"fp16 batch 1 + CUDA graph", "fp16 batch 1 + torch.compile"} <= set(names["inference"])
    first = plan.benchmark_variants("train-hifigan", plan.GPU)[0]
    assert first.batches[0] == 128 and "v1" in first.argv


def deep_merge(base: dict, overlay: dict) -> dict:
    """Snakemake's merge of several --configfile files: nested sections update key by key."""
    merged = dict(base)
    for key, value in overlay.items():
        merged[key] = deep_merge(merged[key], value) if isinstance(value, dict) and key in merged else value
    return merged


@pytest.mark.parametrize("rehearsal", [False, True], ids=["gpu", "rehearsal"])
def test_demo_overlays_make_a_valid_config(rehearsal):
    raw: dict = {}
    for path in plan.sizes(rehearsal).demo_overlays:
        raw = deep_merge(raw, yaml.safe_load((REPO / path).read_text()))
    config = parse_config(raw, "overlays")
    gpus = 0 if rehearsal else 1
    assert {config.hifigan.gpus, config.fastpitch.gpus, config.aligner.gpus, config.inference.gpus} == {gpus}
    assert not config.benchmark.recognise, "the recogniser does not travel to the GPU machine"
    assert config.benchmark.intelligibility_clips > 0, "the held-out rows are still measured for pauses"
    assert config.experiment == ("gpu-rehearsal" if rehearsal else "demo-gpu")
    if rehearsal:
        assert config.results_dir.startswith(".gpu-rehearsal"), "the rehearsal keeps out of the user's results"


def test_record_json_and_markdown(tmp_path):
    record = Record(out=tmp_path, mode="rehearsal", command="tools/gpu-check --rehearsal")
    entry = record.steps["train-hifigan"]
    entry.status, entry.seconds = "ok", 12.5
    entry.rows = [{"variant": "fp16", "frames_per_s": 1234.5, "note": "a | b"}]
    entry.notes = ["measured"]
    record.save()
    document = json.loads((tmp_path / "gpu-check.json").read_text())
    assert set(plan.RECORD_FIELDS) <= set(document)
    assert [step["name"] for step in document["steps"]] == [step.name for step in plan.STEPS]
    assert all(set(step) == set(plan.STEP_FIELDS) for step in document["steps"])
    assert all(step["status"] in plan.STATUSES for step in document["steps"])
    page = (tmp_path / "gpu-check.md").read_text()
    assert page == render_markdown(document)
    assert "## HiFi-GAN v1 training throughput" in page and "**ok** in 12.5 s of 60 s." in page
    assert "| fp16 | 1,234 | a \\| b |" in page and "- measured" in page
    assert not list(tmp_path.glob("*.partial"))


def test_benchmark_rows_compare_with_nvidia():
    hifigan = plan.benchmark_variants("train-hifigan", plan.GPU)[0]  # fp16: NVIDIA's AMP figure
    ours = {"frames_per_s": 5000.0, "frames_per_s_nvidia_units": 31_158.0, "median_step_seconds": 0.33}
    row = benchmark_row("train-hifigan", hifigan, {"status": "ok", "batch": 128, "result": {"ours": ours}})
    assert row["nvidia_a100"] == 15_579 and row["vs_nvidia"] == 2.0 and row["step_s"] == 0.33
    inference = next(v for v in plan.benchmark_variants("inference", plan.GPU) if v.name == "fp16 batch 1")
    result = {"medians": {"total_p50_ms": 9.5}}
    row = benchmark_row("inference", inference, {"status": "ok", "batch": 1, "result": result})
    assert row["nvidia_a100"] == pytest.approx(19.0) and row["vs_nvidia"] == 2.0


def test_junit_summary(tmp_path):
    report = tmp_path / "junit.xml"
    report.write_text(
        '<testsuites><testsuite name="pytest">'
        '<testcase classname="tests.gpu.a" name="test_ok"/>'
        '<testcase classname="tests.gpu.a" name="test_skip"><skipped message="needs a CUDA device"/></testcase>'
        '<testcase classname="tests.gpu.a" name="test_bad"><failure message="assert 1 == 2&#10;more"/></testcase>'
        '</testsuite></testsuites>'
    )
    counts, failures = junit_summary(report)
    assert counts == {"passed": 1, "failed": 1, "errors": 0, "skipped": 1}
    assert failures == [("tests.gpu.a::test_bad", "assert 1 == 2")]


def test_command_line_defaults(monkeypatch):
    monkeypatch.setenv("OUT", "/somewhere/out")
    args = parse_args([])
    assert args.out == Path("/somewhere/out") and args.kit == Path(".gpu-kit/cp312") and not args.rehearsal
    monkeypatch.delenv("OUT")
    assert parse_args(["--rehearsal"]).out == Path(".gpu-check/out")


def test_makefile_targets_call_the_script():
    makefile = (REPO / "Makefile").read_text()
    assert "gpu-check:" in makefile and "tools/gpu-check" in makefile
    assert "gpu-rehearsal:" in makefile and "--rehearsal" in makefile


def test_a_failed_environment_or_kit_stops_the_check(tmp_path, monkeypatch):
    """A GPU run on a machine without CUDA (or with a kit that does not install) stops with the reason
    in the record instead of running every step into the same failure."""
    from gpucheck import main as check

    ran = []

    def fake(status):
        def step(ctx, entry):
            ran.append(entry.step.name)
            entry.status = status
        return step

    steps = {name: fake("ok") for name in STEP_FUNCTIONS}
    steps["environment"] = fake("failed")
    monkeypatch.setattr(check, "STEP_FUNCTIONS", steps)
    assert check.main(["--out", str(tmp_path), "--work", str(tmp_path / "work")]) == 1
    assert ran == ["environment"]
    document = json.loads((tmp_path / "gpu-check.json").read_text())
    kit = next(step for step in document["steps"] if step["name"] == "kit")
    assert kit["status"] == "skipped" and "make gpu-rehearsal" in kit["notes"][0]

    ran.clear()
    steps["environment"], steps["kit"] = fake("ok"), fake("failed")
    assert check.main(["--out", str(tmp_path), "--work", str(tmp_path / "work")]) == 1
    assert ran == ["environment", "kit"]
    assert check.stop_reason("gpu-tests", "failed") == "" and check.stop_reason("kit", "ok") == ""
