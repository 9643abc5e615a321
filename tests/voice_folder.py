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


def export_tiny_voice(root: Path, *, name: str = "tiny", seed: int = 0, **inference: object) -> Path:
    """Export a voice of tiny models (``seed`` sets their weights) into ``root/<name>/export`` and return
    that folder. ``inference`` overrides keys of the ``inference`` section (default: the denoiser on at
    0.01, as ``synthesize`` runs by default). Untracked unless the caller set up tracking."""
    torch.set_num_threads(1)
    models = root / f"models-{seed}"
    if not (models / "hifigan" / "model.pt").is_file():
        save_fastpitch_file(models / "fastpitch" / "model.pt", seed=seed)
        save_hifigan_file(models / "hifigan" / "model.pt", seed=seed)
    records = [{"id": f"VAL-{i}", "text": text, "wav": f"wavs/VAL-{i}.wav"} for i, text in enumerate(TEXTS)]
    write_jsonl(models / "manifest.val.jsonl", records)
    section = json.dumps({
        "export": ExportConfig(batch_size=2, n_texts=2).model_dump(mode="json"),
        "inference": InferenceConfig(**{"gpus": 0, "denoising_strength": 0.01, **inference}).model_dump(mode="json"),
        "audio": AUDIO.model_dump(mode="json"),
        "text": TextConfig().model_dump(mode="json"),
    })  # fmt: skip
    out = root / name / "export"
    run_in_process(stage, [
        "--section", section, "--fastpitch", str(models / "fastpitch/model.pt"),
        "--vocoder", str(models / "hifigan/model.pt"), "--texts", str(models / "manifest.val.jsonl"),
        "--out-dir", str(out),
    ])  # fmt: skip
    return out
