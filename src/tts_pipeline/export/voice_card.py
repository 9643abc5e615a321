"""The voice card, ``voice.json``: what a server needs beside the model files to speak with them.

A Piper-style description of the export folder, read without torch::

    {"format": "tts-pipeline-voice", "version": 1, "name": "demo",
     "acoustic_model": {"kind": "fastpitch", "label": "FastPitch", "step": 390,
                        "files": {"onnx": "fastpitch.onnx", "torchscript": "fastpitch.ts", "pytorch": "fastpitch.pt"},
                        "inputs": [...], "outputs": [...]},
     "vocoder": {... "kind": "hifigan", "files": {"onnx": "hifigan.onnx", ...}},
     "text": {"cleaners": ..., "symbols_kind": "characters", "symbol_set": ..., "symbols": [...], "padding_id": 0},
     "audio": {"sampling_rate": 22050, "hop_length": 256, ...},   # the config's audio section
     "pitch": {"mean": Hz, "std": Hz},
     "controls": {"pace": 1.0, "pitch_shift_hz": 0.0, "pitch_scale": 1.0},   # synthesize's settings
     "synthesis": {"denoising_strength": 0.01, "fade_out_frames": 10, "pause_seconds": 0.2,
                   "max_piece_symbols": 200, "max_phrase_symbols": 5000},   # synthesize's post-processing
     "source": {"experiment": ..., "git_commit": ..., "run_id": ..., "workflow_run_id": ..., "models": {...}},
     "export": {"opset": 17, "torch": ..., "verification": "verification.json"}}

``inputs`` / ``outputs`` give each tensor's name, dtype and shape (names for dynamic axes).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tts_pipeline.errors import UserError

VOICE_CARD = "voice.json"
VERIFICATION = "verification.json"
# format -> the suffix of its files, named after the model's kind: fastpitch.onnx, hifigan.ts. "pytorch" is
# the pipeline's own model file, copied as it is: what the speech server's PyTorch engine loads.
SUFFIXES = {"onnx": ".onnx", "torchscript": ".ts", "pytorch": ".pt"}
PYTORCH = "pytorch"
CARD_FORMAT = "tts-pipeline-voice"
CARD_VERSION = 1
ROLES = ("acoustic_model", "vocoder")
# key -> the keys it must hold; what read_card checks
REQUIRED: dict[str, tuple[str, ...]] = {
    "acoustic_model": ("kind", "files", "inputs", "outputs"),
    "vocoder": ("kind", "files", "inputs", "outputs"),
    "text": ("cleaners", "symbols_kind", "symbol_set", "symbols"),
    "audio": ("sampling_rate", "hop_length", "n_mel_channels"),
    "controls": ("pace", "pitch_shift_hz", "pitch_scale"),
    "source": ("git_commit",),
}


def model_file_name(kind: str, fmt: str) -> str:
    """The file of kind ``kind`` in format ``fmt`` in an export folder (``fastpitch.onnx``)."""
    return kind + SUFFIXES[fmt]


def build_card(
    *,
    name: str,
    models: Mapping[str, Mapping[str, Any]],
    text: Mapping[str, Any],
    audio: Mapping[str, Any],
    controls: Mapping[str, float],
    synthesis: Mapping[str, Any],
    source: Mapping[str, Any],
    export: Mapping[str, Any],
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The card as a JSON-ready dict.

    Args:
        name: The voice's name (the experiment).
        models: Per role of :data:`ROLES`: kind, label, step, files (format -> file name), inputs, outputs.
        text: The front end: cleaners, symbols_kind, symbol_set, symbols (the table; id = index).
        audio: The audio settings the models were trained for.
        controls: The acoustic graph's default controls (synthesize's).
        synthesis: What synthesize does around the models (denoiser strength, fade-out, pieces and pauses),
            for a server to do the same.
        source: Where the voice came from: experiment, git commit, MLflow run ids, model files.
        extra: Sections the models add (FastPitch's ``pitch`` statistics).
        export: Opset, library versions, the verification file.
    """
    missing = [role for role in ROLES if role not in models]
    if missing:
        raise ValueError(f"voice card: no model for {missing}")
    card: dict[str, Any] = {"format": CARD_FORMAT, "version": CARD_VERSION, "name": name}
    card.update({role: dict(models[role]) for role in ROLES})
    card["text"] = {**text, "padding_id": 0}
    card.update(audio=dict(audio), **dict(extra or {}), controls=dict(controls), synthesis=dict(synthesis))
    card["source"] = dict(source)
    card["export"] = dict(export)
    return card


def read_card(folder: str | Path) -> dict[str, Any]:
    """``folder/voice.json``, checked for its format and the keys a runner needs; UserError naming the
    file and the key otherwise."""
    path = Path(folder) / VOICE_CARD
    try:
        card = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"{path}: no voice card here (is {folder} an export folder, R/export?)") from None
    except (OSError, ValueError) as error:
        raise UserError(f"{path}: not a readable JSON voice card ({error})") from None
    if not isinstance(card, dict) or card.get("format") != CARD_FORMAT:
        raise UserError(f"{path}: format: expected {CARD_FORMAT!r}")
    if card.get("version") != CARD_VERSION:
        raise UserError(f"{path}: version: expected {CARD_VERSION}, got {card.get('version')!r}")
    for section, keys in REQUIRED.items():
        if not isinstance(card.get(section), dict):
            raise UserError(f"{path}: {section}: missing (expected an object)")
        for key in keys:
            if key not in card[section]:
                raise UserError(f"{path}: {section}.{key}: missing")
    return card
