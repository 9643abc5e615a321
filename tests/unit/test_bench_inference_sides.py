"""``bench-inference``'s engines side by side: ONNX Runtime on the same models exported (``--onnxruntime``)
and NVIDIA's code (its twins stood in for by our own models here) in the same interleaved rounds as ours
in ``auto`` and ours in plain fp32, with the figures ``auto`` chose by printed first. Tiny models and one
timed call per engine keep every run to seconds."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch

from tts_pipeline.benchmark import nvidia_inference
from tts_pipeline.benchmark.inference_sides import OURS_FP32, compare_models, format_comparison, ours_engine
from tts_pipeline.benchmark.random_models import FixedDurations, spread_frames
from tts_pipeline.cli import main
from tts_pipeline.precision import cpu_bf16_instructions

from ..inference_models import save_fastpitch_file, save_hifigan_file, tiny_models, tiny_synthesizer_of


@pytest.fixture
def tiny_files(tmp_path: Path) -> list[str]:
    fastpitch = save_fastpitch_file(tmp_path / "fastpitch.pt")
    hifigan = save_hifigan_file(tmp_path / "hifigan.pt")
    return ["--fastpitch", str(fastpitch), "--hifigan", str(hifigan)]


def test_onnxruntime_rows_appear_beside_ours(tmp_path: Path, tiny_files: list[str], capsys, one_thread) -> None:
    out = tmp_path / "sides.json"
    short = ["--runs", "1", "--repeats", "1", "--warmup", "0", "--threads", "1", "--hifigan-frames", "24"]

    main(["bench-inference", *tiny_files, "--onnxruntime", *short, "--json", str(out)])

    printed = capsys.readouterr().out
    assert "auto on " in printed and "HiFi-GAN: fp32 " in printed  # the figures auto chose by
    assert printed.count("ONNX Runtime (fp32, ORT_ENABLE_ALL)") == 2  # a row per model
    report = json.loads(out.read_text(encoding="utf-8"))
    # FastPitch has a second way to run (held in bf16) only on a CPU that advertises bf16
    measured = ["FastPitch", "HiFi-GAN"] if cpu_bf16_instructions() else ["HiFi-GAN"]
    assert [choice["model"] for choice in report["auto"]] == measured
    fastpitch, hifigan = report["models"]
    assert (fastpitch["model"], hifigan["model"]) == ("FastPitch", "HiFi-GAN")
    for row in (fastpitch, hifigan):
        assert row["engines"] == ["ours", "ours fp32", "onnxruntime"] and row["reference"] == "ours fp32"
        assert all(seconds > 0 and math.isfinite(seconds) for seconds in row["seconds"].values())
        assert row["ratios"]["ours"] == 1.0
        # The float32 export computes the eager function: rounding apart, the same output.
        assert row["snr_db"]["onnxruntime"] >= 60.0 and row["max_abs_diff"]["onnxruntime"] < 1e-3
    assert hifigan["audio_seconds"] == pytest.approx(24 * 256 / 22050)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--device", "cuda"], "--onnxruntime: ONNX Runtime runs on the CPU here"),
        (["--compile"], "--compile: the comparison with --onnxruntime times the models as they are"),
        (["--denoising-strength", "0.1"], "the side-by-side timing runs no denoiser"),
    ],
)
def test_the_side_by_side_timing_names_what_it_cannot_honour(
    tiny_files: list[str], capsys, options: list[str], message: str
) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["bench-inference", *tiny_files, "--onnxruntime", *options])
    assert stop.value.code == 2 and message in capsys.readouterr().err


class TheirFastPitch(torch.nn.Module):
    """Stands in for NVIDIA's FastPitch: ``infer(inputs, dur_tgt=...)`` returns a tuple, mel first."""

    def __init__(self, ours: torch.nn.Module) -> None:
        super().__init__()
        self.ours = ours
        self.durations_given: list[tuple[int, ...]] = []

    def infer(self, inputs: torch.Tensor, dur_tgt: torch.Tensor | None = None) -> tuple[torch.Tensor]:
        assert dur_tgt is not None
        self.durations_given.append(tuple(dur_tgt.shape))
        lengths = torch.full((inputs.shape[0],), inputs.shape[1], dtype=torch.int64)
        return (self.ours.infer(inputs, lengths).mel,)


def test_nvidias_code_is_one_more_engine_in_the_same_rounds(monkeypatch, one_thread) -> None:
    fastpitch, generator = tiny_models()
    tokens = list(range(10, 22))
    fixed = torch.tensor(spread_frames(40, len(tokens)), dtype=torch.float64)
    fastpitch.duration_predictor = FixedDurations(fastpitch.duration_predictor, fixed)
    synth = tiny_synthesizer_of((fastpitch, generator), fade_out_frames=0)
    theirs = TheirFastPitch(fastpitch)
    # Their twins are our own models here (the same function); the fixed durations go to dur_tgt.
    monkeypatch.setattr(nvidia_inference, "fastpitch_twin", lambda code, ours: (theirs, fixed.float()))
    monkeypatch.setattr(nvidia_inference, "generator_twin", lambda code, ours: ours)
    engines = [ours_engine(synth), ours_engine(synth.with_options(synth.options, "off"), OURS_FP32)]
    engines.append(nvidia_inference.nvidia_engine(None, synth))  # type: ignore[arg-type]

    rows = compare_models(
        engines, tokens, device=torch.device("cpu"), hop_length=256, sampling_rate=22050, batch_size=2,
        hifigan_frames=16, rounds=2, repeats=1, warmup=0,
    )  # fmt: skip

    assert theirs.durations_given and set(theirs.durations_given) == {(2, len(tokens))}
    for row in rows:
        assert row.engines == ["ours", "ours fp32", "nvidia"] and row.snr_db["nvidia"] == 200.0
        assert len(row.round_medians["nvidia"]) == 2
        table = format_comparison(row)
        assert "NVIDIA (fp32)" in table and "ours (fp32)" in table and "round medians ms: ours " in table
    assert rows[1].audio_seconds == pytest.approx(2 * 16 * 256 / 22050)
