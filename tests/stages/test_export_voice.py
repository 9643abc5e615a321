"""The export_voice stage in-process on tiny model files: the export folder, its voice card and
verification, the voice spoken with ONNX Runtime alone, a failed check naming the model and the input,
and the MLflow run."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from tts_pipeline import tracking
from tts_pipeline.config import ExportConfig
from tts_pipeline.export.runtime import OnnxVoice
from tts_pipeline.export.verify import ExportMismatch
from tts_pipeline.files import write_jsonl
from tts_pipeline.stages import export_voice as stage

from ..inference_models import save_fastpitch_file, save_hifigan_file
from ..stage_helpers import track_into
from ..voice_folder import export_section, run_export

TEXTS = ["Hello there.", "The old lighthouse keeper painted the door a bright shade of blue.", "A cat."]
FILES = [
    "fastpitch.onnx", "fastpitch.pt", "fastpitch.ts", "hifigan.onnx", "hifigan.pt", "hifigan.ts", "verification.json",
    "voice.json",
]  # fmt: skip


@pytest.fixture
def files(tmp_path) -> Path:
    """Tiny model files as the trainers write them, a validation manifest of three texts; one thread."""
    torch.set_num_threads(1)
    for name, save in (("fastpitch", save_fastpitch_file), ("hifigan", save_hifigan_file)):
        save(tmp_path / name / "model.pt")
    records = [{"id": f"VAL-{i}", "text": text, "wav": f"wavs/VAL-{i}.wav"} for i, text in enumerate(TEXTS)]
    write_jsonl(tmp_path / "data" / "manifest.val.jsonl", records)
    return tmp_path


def section(**export: object) -> str:
    return export_section(ExportConfig(**{"batch_size": 2, **export}))


def run_stage(root: Path, payload: str) -> Path:
    files = (root / "fastpitch/model.pt", root / "hifigan/model.pt", root / "data/manifest.val.jsonl")
    return run_export(payload, *files, root / "demo" / "export")


def test_the_voice_is_exported_checked_and_described(files):
    out = run_stage(files, section())
    assert sorted(path.name for path in out.iterdir()) == FILES
    verification = json.loads((out / "verification.json").read_text())
    assert verification["passed"] and verification["limits"] == {"mel_max_abs_diff": 1e-4, "min_snr_db": 60.0}
    # three texts alone, one padded batch of two, that batch with other controls; each in both formats
    assert [(item["input"], item["batch"]) for item in verification["inputs"]] == [
        ("VAL-0", 1), ("VAL-1", 1), ("VAL-2", 1), ("batch of 2: VAL-1..VAL-0", 2),
        ("batch of 2: VAL-1..VAL-0, other controls", 2),
    ]  # fmt: skip
    assert len(verification["checks"]) == 2 * 5 + 2 * 4
    figures = verification["figures"]
    assert figures["fastpitch_onnx_mel_max_abs_diff"] <= 1e-4 and figures["hifigan_onnx_snr_db_min"] >= 60
    assert figures["fastpitch_torchscript_mel_max_abs_diff"] <= 1e-4 and figures["hifigan_torchscript_snr_db_min"] >= 60
    card = json.loads((out / "voice.json").read_text())
    assert card["name"] == "demo"
    assert card["vocoder"]["files"] == {"onnx": "hifigan.onnx", "torchscript": "hifigan.ts", "pytorch": "hifigan.pt"}
    assert card["pitch"] == {"mean": 200.0, "std": 50.0} and card["audio"]["hop_length"] == 256
    assert card["text"]["symbols"][0] == "_" and card["source"]["git_commit"]
    assert card["source"]["models"]["vocoder"]["path"].endswith("hifigan/model.pt")

    voice = OnnxVoice.load(out)  # what a server does: ONNX Runtime and the card, no model code
    audio = voice.speak("Hello there.")
    assert audio.dtype == np.float32 and audio.size % 256 == 0 and audio.size > 0 and np.abs(audio).max() <= 1.0


def test_a_check_that_fails_names_the_model_and_the_input_and_writes_no_card(files):
    with pytest.raises(ExportMismatch) as error:
        run_stage(files, section(mel_tolerance=1e-12, formats=["onnx"]))  # float32 rounding alone is more
    assert "fastpitch onnx, input 'VAL-0': mel_max_abs_diff" in str(error.value)
    out = files / "demo" / "export"
    assert not (out / "voice.json").exists()
    assert json.loads((out / "verification.json").read_text())["passed"] is False


def test_the_run_logs_the_figures_and_the_files(files, monkeypatch):
    runs = track_into(monkeypatch, stage, files, "export-test")
    run_stage(files, section(formats=["onnx"]))
    settings = tracking.settings_from_env(tracking.TrackingSettings(enabled=False, uri="", experiment=""))
    summary = tracking.get_run(settings, runs[0])
    assert summary["status"] == "FINISHED"
    assert summary["metrics"]["fastpitch_onnx_mel_max_abs_diff"] <= 1e-4 and summary["metrics"]["n_inputs"] == 5
    assert summary["metrics"]["export_seconds"] > 0
    artifacts = Path(summary["artifact_uri"].removeprefix("file://"))
    assert sorted(path.name for path in (artifacts / "export").iterdir()) == ["fastpitch.onnx", "hifigan.onnx"]
    assert (artifacts / "voice.json").is_file() and (artifacts / "verification.json").is_file()
    card = json.loads((files / "demo" / "export" / "voice.json").read_text())
    assert card["source"]["run_id"] == runs[0] and card["source"]["experiment"] == "export-test"
