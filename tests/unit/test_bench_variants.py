"""The speed variants of the bench commands (``--tf32``, ``--fused-adamw``, ``--compile``, ``--cuda-graph``):
each is accepted, recorded in the JSON beside the figures, and leaves them finite; CUDA-only options
refuse a CPU by name. Tiny models and one timed step keep every run to seconds; ``--compile`` compiles
for a minute on a CPU, so only one (slow) test runs it."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
import torch
import yaml

from tts_pipeline.cli import build_parser, main
from tts_pipeline.commands import bench_inference
from tts_pipeline.config import HiFiGANConfig
from tts_pipeline.errors import UserError
from tts_pipeline.precision import allow_tf32, resolve_precision, tf32_allowed
from tts_pipeline.training.hifigan.state import build_state

from ..inference_models import TINY_FASTPITCH, TINY_HIFIGAN, save_fastpitch_file, save_hifigan_file

# The v3 generator and discriminators at an eighth of their width: one step on 1024 samples in a tenth of a second.
TINY_HIFIGAN_RUN = ["--preset", "v3", "--discriminator-scale", "0.125", "--batch", "1", "--segment-size", "1024"]
ONE_STEP = ["--steps", "1", "--rounds", "1", "--warmup", "1", "--threads", "1"]


def read(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def finite(*values: float) -> bool:
    return all(math.isfinite(value) for value in values)


def timings(*values: float) -> bool:
    """Seconds and rates: finite and above 0."""
    return finite(*values) and min(values) > 0


@pytest.fixture
def tf32_restored():
    """The process's TF32 switches as they were before the test, whatever it did to them."""
    before = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    yield before
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = before


@pytest.fixture
def inference_files(tmp_path: Path) -> list[str]:
    """bench-inference's options for tiny FastPitch and HiFi-GAN model files, one timed call."""
    fastpitch = save_fastpitch_file(tmp_path / "fastpitch.pt")
    hifigan = save_hifigan_file(tmp_path / "hifigan.pt")
    return ["--fastpitch", str(fastpitch), "--hifigan", str(hifigan), "--runs", "1", "--repeats", "1", "--threads", "1"]


def test_allow_tf32_sets_both_switches_and_returns_the_previous_pair(tf32_restored) -> None:
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = False, True  # torch's defaults

    assert allow_tf32(True) == (False, True)
    assert (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32) == (True, True)
    assert allow_tf32(False) == (True, True)
    assert (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32) == (False, False)


def test_tf32_allowed_restores_the_switches_even_after_an_error(tf32_restored) -> None:
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = False, True

    with pytest.raises(RuntimeError), tf32_allowed(True):
        assert torch.backends.cuda.matmul.allow_tf32 and torch.backends.cudnn.allow_tf32
        raise RuntimeError("inside")
    assert (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32) == (False, True)


def test_the_speed_options_default_to_torchs_plain_path() -> None:
    for command in ("bench-hifigan", "bench-fastpitch", "bench-inference"):
        args = build_parser(command).parse_args([command])
        assert args.tf32 == "off" and args.compile is False, command
    assert build_parser("bench-hifigan").parse_args(["bench-hifigan"]).fused_adamw is False
    assert build_parser("bench-inference").parse_args(["bench-inference"]).cuda_graph is False


def test_build_state_makes_both_adamw_fused_on_request() -> None:
    cfg = HiFiGANConfig(**{**TINY_HIFIGAN.model_dump(), "discriminator_channels_scale": 0.125})
    precision = resolve_precision("off", torch.device("cpu"))

    fused = build_state(cfg, 80, precision, fused_adamw=True)
    plain = build_state(cfg, 80, precision)

    assert fused.optim_g.defaults["fused"] and fused.optim_d.defaults["fused"]
    assert not plain.optim_g.defaults["fused"] and not plain.optim_d.defaults["fused"]


def test_bench_hifigan_records_tf32_and_fused_adamw_and_nvidias_unit(tmp_path: Path, tf32_restored) -> None:
    out = tmp_path / "hifigan.json"

    main(["bench-hifigan", *TINY_HIFIGAN_RUN, *ONE_STEP, "--tf32", "on", "--fused-adamw", "--json", str(out)])

    report = read(out)
    assert (report["tf32"], report["fused_adamw"], report["compile"]) == ("on", True, False)
    assert report["precision"] == "fp32" and report["batch"] == 1 and report["device_name"]
    ours = report["ours"]
    assert len(ours["warmup_step_seconds"]) == 1 and timings(*ours["warmup_step_seconds"])
    assert timings(ours["median_step_seconds"], ours["frames_per_s"]) and finite(*ours["last_losses"].values())
    # NVIDIA counts 80 mel bins per 1024-sample clip, which is 4 real frames: 20 times the real count.
    assert ours["frames_per_s_nvidia_units"] == pytest.approx(20 * ours["frames_per_s"])
    assert (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32) == tf32_restored


def test_bench_hifigan_times_the_warm_up_step_beside_the_plain_layout(tmp_path: Path) -> None:
    out = tmp_path / "hifigan.json"

    main(["bench-hifigan", *TINY_HIFIGAN_RUN, *ONE_STEP, "--spectral", "--plain-layout-beside", "--json", str(out)])

    report = read(out)
    assert (report["step"], report["generator_cpu_layout"]) == ("spectral", "rows")
    for side in ("ours", "plain"):
        assert timings(report[side]["median_step_seconds"]), side
        assert report[side]["last_losses"]["loss_discrim"] == 0.0  # no discriminator in the warm-up
    assert report["ratio_plain_over_ours"] > 0


def test_bench_fastpitch_records_amp_and_tf32(tmp_path: Path, tf32_restored) -> None:
    config = tmp_path / "tiny.yaml"
    section = {**TINY_FASTPITCH.model_dump(mode="json"), "batch_size": 2, "global_batch_size": 2}
    config.write_text(yaml.safe_dump({"experiment": "tiny", "fastpitch": section}), encoding="utf-8")
    out = tmp_path / "fastpitch.json"
    shapes = ["--tokens", "5", "9", "--frames", "20", "40", "--steps", "1", "--runs", "1", "--threads", "1"]

    main(["bench-fastpitch", "--config", str(config), *shapes, "--amp", "off", "--tf32", "on", "--json", str(out)])

    report = read(out)
    assert (report["precision"], report["tf32"], report["compile"]) == ("fp32", "on", False)
    assert report["batch"] == 2 and report["device_name"]
    run = report["runs"][0]
    assert (
        len(run["warmup_seconds"]) == 1 and timings(*run["warmup_seconds"], run["frames_per_s"]) and finite(run["loss"])
    )


def test_bench_inference_records_tf32(tmp_path: Path, inference_files: list[str], tf32_restored) -> None:
    out = tmp_path / "inference.json"

    main(["bench-inference", *inference_files, "--warmup", "0", "--amp", "off", "--tf32", "on", "--json", str(out)])

    report = read(out)
    assert (report["tf32"], report["cuda_graph"], report["compile"]) == ("on", False, False)
    assert report["precision"] == "fp32" and report["batch_size"] == 1 and report["device_name"]
    assert report["first_call"] is None  # nothing to compile or capture
    assert timings(*report["medians"].values())


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--cuda-graph"], "--cuda-graph: CUDA graphs need --device cuda, got --device cpu"),
        (["--cuda-graph", "--compile", "--device", "cuda"], "--cuda-graph and --compile: choose one"),
        (["--compile", "--nvidia-root", "dle"], "--compile: the comparison with --nvidia-root"),
    ],
)
def test_bench_inference_refuses_what_it_cannot_time(argv: list[str], message: str) -> None:
    args = build_parser("bench-inference").parse_args(["bench-inference", *argv])
    with pytest.raises(UserError, match=message):
        bench_inference.check_arguments(args)


def test_bench_inference_names_cuda_graph_on_a_cpu(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["bench-inference", "--cuda-graph"])
    assert stop.value.code == 2 and "--cuda-graph" in capsys.readouterr().err


@pytest.mark.slow
def test_bench_inference_compiles_both_models_and_times_the_compilation_apart(
    tmp_path: Path, inference_files: list[str]
) -> None:
    out = tmp_path / "inference.json"

    main(["bench-inference", *inference_files, "--warmup", "1", "--amp", "off", "--compile", "--json", str(out)])

    report = read(out)
    assert report["compile"] is True and report["cuda_graph"] is False
    first, timed = report["first_call"], report["medians"]
    assert timings(first["fastpitch_s"], first["hifigan_s"], *timed.values())
    # The first call compiles: it takes longer than a compiled call.
    assert 1000 * (first["fastpitch_s"] + first["hifigan_s"]) > timed["total_p50_ms"]
