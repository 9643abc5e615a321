"""The rows of every other acoustic model in the benchmark report, beside FastPitch's.

When the DAG builds another acoustic model (a row of :mod:`tts_pipeline.config.model_kinds` other than
FastPitch's, e.g. Tacotron 2: synthesis speaks with it, durations come from it, or a pretrained file is
named), the benchmark

- times it with the vocoder of ``inference.vocoder`` as it times FastPitch + HiFi-GAN
  (``speed.acoustic_<name>_rows``, the same columns; NVIDIA's published figures for that pair, where
  there are some, beside them: their Tacotron 2 + WaveGlow table);
- adds full-TTS rows to the intelligibility and pause tables: ``tts_<name>`` (it + the fine-tuned
  HiFi-GAN, the benchmark's own vocoder) and ``tts_<name>_<vocoder>`` for every other vocoder of the DAG.

Every name comes from the kinds' rows, so a new acoustic model needs nothing here. Speed rows keep the
column names of FastPitch's rows (``fastpitch_latency_...`` is the acoustic model's time, the
synthesizer's timer name); the tables here head them with the model's label.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from tts_pipeline.benchmark.nvidia import PUBLISHED_ACOUSTIC_MODELS
from tts_pipeline.benchmark.other_vocoders import parse_kind_item
from tts_pipeline.benchmark.report import PUBLISHED_COLUMNS, Column, component_columns, render_table
from tts_pipeline.config.model_kinds import (
    ACOUSTIC_MODELS,
    PIPELINE_ACOUSTIC_MODEL,
    PIPELINE_VOCODER,
    VOCODERS,
    AcousticModelKind,
    VocoderKind,
    acoustic_model_kind,
)


class AcousticModelFile(NamedTuple):
    """Another acoustic model's file, by kind (an ``--acoustic-models`` item)."""

    kind: AcousticModelKind
    path: Path


def other_kinds() -> tuple[AcousticModelKind, ...]:
    """Every acoustic-model kind but the pipeline's own (FastPitch), in table order."""
    return tuple(kind for kind in ACOUSTIC_MODELS if kind.name != PIPELINE_ACOUSTIC_MODEL)


def add_acoustic_models_argument(parser: argparse.ArgumentParser) -> None:
    """``--acoustic-models NAME=PATH ...``: the DAG's acoustic models beside FastPitch, by kind, as the
    workflow passes them (items read by :func:`parse_acoustic_model_argument`)."""
    parser.add_argument(
        "--acoustic-models",
        nargs="*",
        default=[],
        metavar="NAME=PATH",
        help="other acoustic models by kind (e.g. tacotron2=R/tacotron2/model.pt): timed and listened to beside "
        "FastPitch",
    )


def parse_acoustic_model_argument(value: str) -> AcousticModelFile:
    """``name=path`` -> :class:`AcousticModelFile`; UserError for a malformed item, FastPitch (measured
    anyway) or an unknown kind, naming the known ones."""
    names = [kind.name for kind in other_kinds()]
    return AcousticModelFile(
        *parse_kind_item(value, "--acoustic-models", acoustic_model_kind, PIPELINE_ACOUSTIC_MODEL, names)
    )


def speed_key(kind: AcousticModelKind) -> str:
    """The key of its speed rows in ``report["speed"]``."""
    return f"acoustic_{kind.name}_rows"


def tts_row(kind: AcousticModelKind, vocoder: VocoderKind | None = None) -> str:
    """Its full-TTS intelligibility row: with the fine-tuned HiFi-GAN (``vocoder`` None) or ``vocoder``."""
    if vocoder is None or vocoder.name == PIPELINE_VOCODER:
        return f"tts_{kind.name}"
    return f"tts_{kind.name}_{vocoder.name}"


def row_descriptions() -> dict[str, str]:
    """The words of every other acoustic model's intelligibility rows, by row name."""
    descriptions = {}
    for kind in other_kinds():
        descriptions[tts_row(kind)] = f"{kind.label} + fine-tuned HiFi-GAN (full TTS)"
        for vocoder in VOCODERS:
            if vocoder.name != PIPELINE_VOCODER:
                descriptions[tts_row(kind, vocoder)] = f"{kind.label} + {vocoder.label} (full TTS)"
    return descriptions


def figure_rows() -> tuple[str, ...]:
    """Their panels of each spectrogram figure: full TTS with the fine-tuned HiFi-GAN."""
    return tuple(tts_row(kind) for kind in other_kinds())


def settings_of(inference: Mapping[str, Any], benchmarked: Mapping[str, Path]) -> dict[str, Any]:
    """Every other acoustic model's ``inference`` settings for ``report["settings"]``, by key: the
    section's value where the model was benchmarked, else None."""
    return {
        key: inference[key] if kind.name in benchmarked else None for kind in other_kinds() for key in kind.settings
    }


def speed_markdown(report: Mapping[str, Any], speed_columns: tuple[Column, ...], notes: str) -> list[str]:
    """A section ``Inference speed: <acoustic model> + <vocoder>`` per other acoustic model with speed rows,
    NVIDIA's published figures for that pair beside them."""
    lines: list[str] = []
    vocoder = report["settings"].get("acoustic_models_vocoder") or "HiFi-GAN"
    for kind in other_kinds():
        rows = report["speed"].get(speed_key(kind))
        if not rows:
            continue
        used = [f"inference.{key} {_setting(report['settings'].get(key))}" for key in kind.settings]
        per_model = component_columns(("fastpitch", "vocoder"), {"fastpitch": kind.label, "vocoder": vocoder})
        pair = f"{kind.label} + {vocoder}"
        lines += [
            f"## Inference speed: {pair}",
            "",
            f"The same phrase, calls and precisions as above, with {kind.label} as the acoustic model "
            f"({', '.join(used) + ', ' if used else ''}model {report['models'].get(kind.name)}). An "
            "autoregressive model decodes until every copy in the batch has stopped.",
            "",
            render_table(rows, speed_columns),
            notes.replace("FastPitch + HiFi-GAN", pair),
            "",
            "Per model (seconds per call):",
            "",
            render_table(rows, per_model),
            "",
        ]
        published = report.get("nvidia", {}).get("published_acoustic_models", {}).get(kind.name) or []
        if published:
            device = report["environment"]["device_name"]
            sizes = {row["batch_size"] for row in published}
            ours = [
                {**row, "precision": row["precision_label"], "source": f"this run ({device}, {pair})"}
                for row in rows
                if row["batch_size"] in sizes
            ]
            lines += [
                f"NVIDIA's published {kind.label} figures beside ours:",
                "",
                render_table([*published, *ours], PUBLISHED_COLUMNS),
            ]
    return lines


def _setting(value: Any) -> str:
    return "null (the model file's)" if value is None else f"{value:g}"


def published() -> dict[str, list[dict[str, Any]]]:
    """NVIDIA's published figures of every other acoustic model that has some, by kind."""
    return {kind.name: list(PUBLISHED_ACOUSTIC_MODELS.get(kind.name, ())) for kind in other_kinds()}


def headline_metrics(report: Mapping[str, Any]) -> dict[str, Any]:
    """The tracker's figures of every other acoustic model's speed rows (``<name>_b<batch>_<precision>_<key>``)."""
    metrics = {}
    for kind in other_kinds():
        for row in report["speed"].get(speed_key(kind)) or []:
            prefix = f"{kind.name}_b{row['batch_size']}_{row['precision']}"
            for key in ("latency_mean_s", "latency_p99_s", "x_real_time", "rtf", "fastpitch_latency_mean_s"):
                metrics[f"{prefix}_{key.replace('fastpitch', kind.name)}"] = row[key]
    return metrics
