"""The benchmark with a WaveGlow beside HiFi-GAN (tiny models): its speed rows in NVIDIA's layout, its mel
L1 rows and its intelligibility rows, in report.json and report.md."""

from __future__ import annotations

import re

import pytest
import torch

from tts_pipeline.benchmark import other_vocoders
from tts_pipeline.models.waveglow.model_file import save_waveglow

from .test_benchmark import AUDIO, VAL_IDS, root, run_stage, section  # noqa: F401 (root is a fixture)
from .test_synthesize_waveglow import tiny_waveglow


@pytest.fixture(autouse=True)
def one_thread():
    torch.set_num_threads(1)


def test_waveglow_rows_stand_beside_hifigan_s(root):  # noqa: F811
    save_waveglow(root / "waveglow" / "model.pt", tiny_waveglow(), step=1, audio=AUDIO)
    payload = section(precisions=["fp32"], batch_sizes=[1, 2], intelligibility_clips=1, n_figures=1)
    report = run_stage(root, "--vocoders", f"waveglow={root / 'waveglow' / 'model.pt'}", payload=payload)

    hifigan, waveglow = report["speed"]["rows"], report["speed"]["waveglow_rows"]
    assert [(r["batch_size"], r["precision"]) for r in waveglow] == [(r["batch_size"], r["precision"]) for r in hifigan]
    for row in waveglow:
        assert row["latency_mean_s"] > 0 and row["vocoder_latency_mean_s"] > 0 and row["x_real_time"] > 0
        assert row["frames_per_utterance"] == pytest.approx(hifigan[0]["frames_per_utterance"])
    assert report["models"]["waveglow"].endswith("model.pt") and report["settings"]["waveglow_sigma"] == 0.9

    mel_rows = report["quality"]["vocoder_mel_l1"]["rows"]
    assert [(r["vocoder"], r["input_key"]) for r in mel_rows] == [
        (vocoder, key) for vocoder in ("base", "fine-tuned", "waveglow") for key in ("ground_truth", "fastpitch")
    ]
    assert all(r["mel_l1"] > 0 and r["utterances"] == len(VAL_IDS) - 1 for r in mel_rows if r["vocoder"] == "waveglow")

    rows = {row["name"]: row for row in report["quality"]["intelligibility"]["rows"]}
    waveglow_rows = {"waveglow_ground_truth", "tts_waveglow"}
    descriptions = other_vocoders.row_descriptions()
    assert waveglow_rows <= set(descriptions)
    assert descriptions["tts_waveglow"] == "FastPitch + WaveGlow (full TTS)"
    for name in waveglow_rows:
        assert rows[name]["description"] == descriptions[name]
        assert 0 <= rows[name]["closed"]["wer"]
    assert "hifigan_fine_tuned_ground_truth" in rows and "tts" in rows
    # the listening example (the report's held-out page) lets one hear and see both vocoders
    (example,) = report["quality"]["intelligibility"]["examples"]
    assert {"hifigan_fine_tuned_ground_truth", "tts", *waveglow_rows} <= set(example["wavs"])

    markdown = (root / "benchmark" / "report.md").read_text(encoding="utf-8")
    assert "## Inference speed: FastPitch + HiFi-GAN" in markdown
    # the rows' generic vocoder_... keys are headed by the vocoder each section timed
    hifigan_section = markdown.split("## Inference speed: FastPitch + HiFi-GAN")[1].split("## Inference speed")[0]
    assert "| hifigan avg (s) |" in hifigan_section and "vocoder avg" not in markdown
    assert "## Inference speed: FastPitch + WaveGlow" in markdown and "WaveGlow avg (s)" in markdown
    waveglow_section = markdown.split("## Inference speed: FastPitch + WaveGlow")[1].split("## Quality")[0]
    assert "per call (one batch), FastPitch + WaveGlow" in waveglow_section and "HiFi-GAN" not in waveglow_section
    assert "inference.waveglow_sigma 0.9, model " in waveglow_section
    assert re.search(r"\| waveglow +\| ground-truth mel", markdown)
    assert "FastPitch + WaveGlow (full TTS)" in markdown


def test_without_waveglow_the_report_has_no_waveglow_rows(root):  # noqa: F811
    report = run_stage(root, payload=section(precisions=["fp32"], batch_sizes=[1]))
    assert report["speed"]["waveglow_rows"] == [] and report["models"]["waveglow"] is None
    assert all(r["vocoder"] != "waveglow" for r in report["quality"]["vocoder_mel_l1"]["rows"])
    assert "WaveGlow" not in (root / "benchmark" / "report.md").read_text(encoding="utf-8")
