"""A real export folder from tiny random models, for the speech server's and the MLflow model's tests:
the ``export_voice`` stage run in-process on model files as the trainers write them."""

from __future__ import annotations

import json
from pathlib import Path

import torch

from tts_pipeline.config import ExportConfig, InferenceConfig, TextConfig
from tts_pipeline.files import write_jsonl
from tts_pipeline.stages import export_voice as stage

from .inference_models import AUDIO, save_fastpitch_file, save_hifigan_file
from .stage_helpers import run_in_process

TEXTS = ["Hello there.", "The old lighthouse keeper painted the door a bright shade of blue.", "A cat."]


def export_tiny_voice(
    root: Path, *, name: str = "tiny", seed: int = 0, harmonic: bool = False, **inference: object
) -> Path:
    """Export a voice of tiny models (``seed`` sets their weights) into ``root/<name>/export`` and return
    that folder; ``harmonic`` gives its vocoder a harmonic source. ``inference`` overrides keys of the
    ``inference`` section (default: the denoiser on at 0.01, as ``synthesize`` runs by default).
    Untracked unless the caller set up tracking."""
    torch.set_num_threads(1)
    models = root / f"models-{seed}{'-harmonic' if harmonic else ''}"
    if not (models / "hifigan" / "model.pt").is_file():
        save_fastpitch_file(models / "fastpitch" / "model.pt", seed=seed)
        save_hifigan_file(models / "hifigan" / "model.pt", seed=seed, harmonic=harmonic)
    records = [{"id": f"VAL-{i}", "text": text, "wav": f"wavs/VAL-{i}.wav"} for i, text in enumerate(TEXTS)]
    write_jsonl(models / "manifest.val.jsonl", records)
    section = export_section(ExportConfig(batch_size=2, n_texts=2), denoising_strength=0.01, **inference)
    out = root / name / "export"
    run_export(section, models / "fastpitch/model.pt", models / "hifigan/model.pt", models / "manifest.val.jsonl", out)
    return out


def export_section(export: ExportConfig, **inference: object) -> str:
    """The stage's ``--section`` JSON: ``export``, the ``inference`` section (``gpus`` 0 and ``inference``'s
    keys), the tiny models' audio section and the default text section."""
    return json.dumps({
        "export": export.model_dump(mode="json"),
        "inference": InferenceConfig(**{"gpus": 0, **inference}).model_dump(mode="json"),
        "audio": AUDIO.model_dump(mode="json"),
        "text": TextConfig().model_dump(mode="json"),
    })  # fmt: skip


def run_export(section: str, fastpitch: Path, vocoder: Path, texts: Path, out: Path) -> Path:
    """Run the ``export_voice`` stage in-process into ``out``; return ``out``."""
    run_in_process(stage, [
        "--section", section, "--fastpitch", str(fastpitch), "--vocoder", str(vocoder), "--texts", str(texts),
        "--out-dir", str(out),
    ])  # fmt: skip
    return out
