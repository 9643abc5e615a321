"""The benchmark with a Tacotron 2 beside FastPitch (tiny models): its speed rows beside NVIDIA's published
Tacotron 2 + WaveGlow figures, and its full-TTS intelligibility rows, in report.json and report.md."""

from __future__ import annotations

import json

import pytest
import torch

from tts_pipeline.benchmark import other_acoustic_models
from tts_pipeline.benchmark.document import headline_metrics
from tts_pipeline.errors import UserError

from .test_benchmark import root, run_stage, section  # noqa: F401 (root is a fixture)
from .test_synthesize_tacotron2 import tiny_tacotron2_file

STEPS = 12  # the tiny model's gate never fires: every phrase runs to this limit


@pytest.fixture(autouse=True)
def one_thread():
    torch.set_num_threads(1)


def payload(**benchmark: object) -> str:
    values = json.loads(section(**benchmark))
    values["inference"]["tacotron2_max_decoder_steps"] = STEPS
    return json.dumps(values)


def test_tacotron2_rows_stand_beside_fastpitch_s(root):  # noqa: F811
    model = tiny_tacotron2_file(root / "tacotron2" / "model.pt")
    report = run_stage(
        root, "--acoustic-models", f"tacotron2={model}",
        payload=payload(precisions=["fp32"], batch_sizes=[1, 2], intelligibility_clips=1, n_figures=1),
    )  # fmt: skip

    fastpitch, tacotron2 = report["speed"]["rows"], report["speed"]["acoustic_tacotron2_rows"]
    assert [(r["batch_size"], r["precision"]) for r in tacotron2] == [(1, "fp32"), (2, "fp32")]
    assert [(r["batch_size"], r["precision"]) for r in fastpitch] == [(1, "fp32"), (2, "fp32")]
    for row in tacotron2:
        assert row["fastpitch_latency_mean_s"] > 0 and row["vocoder_latency_mean_s"] > 0
        assert row["frames_per_utterance"] == pytest.approx(STEPS)
    assert report["models"]["tacotron2"] == str(model)
    assert report["settings"]["tacotron2_max_decoder_steps"] == STEPS
    assert report["settings"]["tacotron2_gate_threshold"] is None
    published = report["nvidia"]["published_acoustic_models"]["tacotron2"]
    assert {(row["batch_size"], row["precision"]) for row in published} == {(1, "fp16"), (4, "fp16"), (1, "fp32"),
                                                                            (4, "fp32")}  # fmt: skip

    rows = {row["name"]: row for row in report["quality"]["intelligibility"]["rows"]}
    assert rows["tts_tacotron2"]["description"] == "Tacotron 2 + fine-tuned HiFi-GAN (full TTS)"
    assert rows["tts_tacotron2"]["closed"]["wer"] >= 0 and "tts" in rows
    (example,) = report["quality"]["intelligibility"]["examples"]
    assert "tts_tacotron2" in example["wavs"]
    assert any(row["name"] == "tts_tacotron2" for row in report["quality"]["pauses"]["rows"])

    metrics = headline_metrics(report)
    assert metrics["tacotron2_b1_fp32_tacotron2_latency_mean_s"] > 0

    markdown = (root / "benchmark" / "report.md").read_text(encoding="utf-8")
    section_md = markdown.split("## Inference speed: Tacotron 2 + HiFi-GAN")[1].split("## Quality")[0]
    assert "inference.tacotron2_max_decoder_steps 12" in section_md
    assert "inference.tacotron2_gate_threshold null (the model file's)" in section_md
    assert "Tacotron 2 avg (s)" in section_md and "NVIDIA Tacotron 2 README (DGX A100 40 GB" in section_md
    assert "Tacotron 2 + fine-tuned HiFi-GAN (full TTS)" in markdown


def test_without_tacotron2_the_report_has_no_tacotron2_rows(root):  # noqa: F811
    report = run_stage(root, payload=payload(precisions=["fp32"], batch_sizes=[1]))
    assert report["speed"]["acoustic_tacotron2_rows"] == [] and report["models"]["tacotron2"] is None
    assert "Tacotron 2" not in (root / "benchmark" / "report.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("value", "message"),
    [("tacotron2", "expected name=path"), ("fastpitch=x.pt", "measured anyway"), ("glow=x.pt", "unknown acoustic")],
)
def test_a_bad_acoustic_models_item_is_named(value, message):
    with pytest.raises(UserError, match=message):
        other_acoustic_models.parse_acoustic_model_argument(value)
