"""Options of the side-by-side benchmark commands (``--nvidia-root``, ``--amp``), checked before any
model is built, and the interleaved timing they share. No NVIDIA code is imported here."""

from __future__ import annotations

from pathlib import Path

import pytest

from tts_pipeline.benchmark.side_by_side import interleaved
from tts_pipeline.cli import build_parser, main
from tts_pipeline.commands import bench_hifigan
from tts_pipeline.config import HiFiGANConfig
from tts_pipeline.errors import UserError


def parse(*argv: str):
    return build_parser(argv[0]).parse_args(list(argv))


def test_bench_inference_defaults_to_the_pipelines_precision_and_a_500_frame_mel() -> None:
    args = parse("bench-inference", "--nvidia-root", "dle")
    assert args.amp == "auto" and args.hifigan_frames == 500 and args.nvidia_root == Path("dle")
    assert parse("bench-inference").nvidia_root is None
    with pytest.raises(SystemExit):
        parse("bench-inference", "--amp", "fp8")


def test_bench_inference_names_a_missing_checkout_before_building_models(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["bench-inference", "--nvidia-root", str(tmp_path / "missing")])
    assert stop.value.code == 2
    assert f"--nvidia-root {tmp_path / 'missing'}: not a folder" in capsys.readouterr().err


def test_bench_inference_refuses_the_denoiser_beside_nvidia(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["bench-inference", "--nvidia-root", "dle", "--denoising-strength", "0.1"])
    assert "--denoising-strength" in capsys.readouterr().err


def test_bench_hifigan_takes_a_small_batch_beside_nvidia_and_the_sections_otherwise() -> None:
    cfg = HiFiGANConfig()
    beside = parse("bench-hifigan", "--nvidia-root", "dle", "--amp", "bf16")
    assert beside.amp == "bf16"
    assert bench_hifigan.check_arguments(beside, cfg, 256) == (bench_hifigan.NVIDIA_BATCH, cfg.segment_size)
    alone = parse("bench-hifigan")
    assert alone.amp is None  # the section's amp
    assert bench_hifigan.check_arguments(alone, cfg, 256) == (cfg.batch_size, cfg.segment_size)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--segment-size", "1000"], "--segment-size: expected a positive multiple of the hop"),
        (["--rounds", "0"], "--rounds must be >= 1"),
        (["--nvidia-root", "dle", "--discriminator-scale", "0.5"], "expected 1 with --nvidia-root"),
        (["--nvidia-root", "dle", "--spectral"], "--spectral: NVIDIA's train.py has no generator-alone warm-up"),
    ],
)
def test_bench_hifigan_names_the_option_it_cannot_honour(argv: list[str], message: str) -> None:
    args = parse("bench-hifigan", *argv)
    _, cfg = bench_hifigan.hifigan_config(args)
    with pytest.raises(UserError, match=message):
        bench_hifigan.check_arguments(args, cfg, 256)


def test_bench_hifigan_refuses_an_objective_nvidia_does_not_have() -> None:
    args = parse("bench-hifigan", "--nvidia-root", "dle")
    with pytest.raises(UserError, match="stft_loss_scale 0.5: NVIDIA's objective has no STFT loss"):
        bench_hifigan.check_arguments(args, HiFiGANConfig(stft_loss_scale=0.5), 256)


def test_interleaved_rounds_alternate_the_order_and_time_every_call() -> None:
    order: list[str] = []
    timing = interleaved(
        {"a": lambda: order.append("a"), "b": lambda: order.append("b")}, rounds=3, repeats=2, warmup=1
    )
    assert order == ["a", "b"] + ["a", "a", "b", "b"] + ["b", "b", "a", "a"] + ["a", "a", "b", "b"]
    assert [len(r) for r in timing.seconds["a"]] == [2, 2, 2]
    assert timing.median("a") > 0 and timing.ratio("a", "a") == 1.0
    with pytest.raises(ValueError, match="rounds"):
        interleaved({"a": lambda: None}, rounds=0, repeats=1, warmup=0)
