"""The bench-intelligibility command end to end on tiny random models: fp32, each faster precision the
CPU runs and the noise control are synthesised and recognised, and the rows are printed and saved."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
import yaml

from tts_pipeline.benchmark.inference import plan_precisions
from tts_pipeline.commands import bench_intelligibility
from tts_pipeline.errors import UserError
from tts_pipeline.files import write_jsonl

from ..conftest import REPO
from ..inference_models import AUDIO, save_fastpitch_file, save_hifigan_file
from ..stage_helpers import run_in_process

TEXTS = {
    "test": ["The cat sat on the mat.", "A dog ran home."],
    "val": ["Green trees grow tall."],
    "train": ["She sold three red boats.", "We walked to the old mill."],
}


@pytest.fixture
def setup(tmp_path):
    config = yaml.safe_load((REPO / "config/demo.yaml").read_text())
    config["audio"] = AUDIO.model_dump(mode="json")
    config["benchmark"]["precisions"] = ["fp32", "bf16"]
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    for split, texts in TEXTS.items():
        records = [{"id": f"{split}-{i}", "text": text, "wav": "x.wav", "n_samples": 1} for i, text in enumerate(texts)]
        write_jsonl(tmp_path / "data" / f"manifest.{split}.jsonl", records)
    save_fastpitch_file(tmp_path / "fastpitch.pt")
    save_hifigan_file(tmp_path / "hifigan.pt")
    return tmp_path


def arguments(root, *extra: str) -> list[str]:
    return [
        "--config", str(root / "config.yaml"), "--fastpitch", str(root / "fastpitch.pt"),
        "--hifigan", str(root / "hifigan.pt"), "--manifest-dir", str(root / "data"), "--workers", "1",
        "--threads", "1", *extra,
    ]  # fmt: skip


def test_rows_for_fp32_faster_precisions_and_the_noise_control(setup, capsys):
    run_in_process(bench_intelligibility, arguments(setup, "--n", "3", "--json", str(setup / "rows.json")))
    printed = capsys.readouterr().out
    saved = json.loads((setup / "rows.json").read_text())
    names = [row["name"] for row in saved["rows"]]
    faster = [c.name for c in plan_precisions(["fp32", "bf16"], torch.device("cpu")).runnable if c.name != "fp32"]
    # each faster precision, then its control: fp32 plus noise at that precision's vocoder SNR
    expected = ["fp32"] + [name for precision in faster for name in (precision, f"({precision})")]
    assert [name if not name.startswith("fp32 + noise at ") else name.split()[-1] for name in names] == expected
    assert saved["sentences"] == 3  # the held-out sentences first: test, then val
    for row in saved["rows"]:
        assert row["clips"] == 3 and row["words"] == 14
        assert 0.0 <= row["closed_sentence_accuracy"] <= 1.0 and row["closed_wer"] >= 0.0 and row["open_wer"] >= 0.0
        assert row["closed_sentence_accuracy_stderr"] >= 0.0
        assert row["name"] in printed
    assert "binomial standard error" in printed


def test_the_noise_control_is_white_noise_at_the_asked_snr():
    rng = np.random.default_rng(1)
    clip = np.sin(np.linspace(0, 200, 20000)).astype(np.float32)
    noisy = bench_intelligibility.with_noise(clip, 30.0, rng)
    snr = 10 * np.log10(np.sum(clip.astype(np.float64) ** 2) / np.sum((noisy - clip).astype(np.float64) ** 2))
    assert noisy.dtype == np.float32 and snr == pytest.approx(30.0, abs=0.3)


def test_n_must_be_positive(setup):
    with pytest.raises(UserError, match="--n"):
        run_in_process(bench_intelligibility, arguments(setup, "--n", "0"))
