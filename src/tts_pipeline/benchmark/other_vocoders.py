"""The rows of every other vocoder in the benchmark report, beside HiFi-GAN's.

When the DAG builds another vocoder (a row of :mod:`tts_pipeline.config.model_kinds` other than
HiFi-GAN's, e.g. WaveGlow, trained or given), the benchmark times FastPitch + that vocoder as it times
FastPitch + HiFi-GAN (``speed.<name>_rows``, the same columns: NVIDIA's table layout per vocoder),
measures its mel L1 on the same mels (a ``<name>`` row of the vocoder table) and adds two rows to the
intelligibility table (``<name>_ground_truth``: copy synthesis; ``tts_<name>``: FastPitch + the vocoder
from the texts). Every name comes from the kind's row, so a new vocoder needs nothing here.

Speed rows name the vocoder's time ``vocoder_...`` whichever vocoder ran (the synthesizer's timed
``vocoder`` step); the tables here head it with the vocoder's label.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Container, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from tts_pipeline.benchmark.report import Column, component_columns, render_table
from tts_pipeline.config.model_kinds import PIPELINE_VOCODER, VOCODERS, VocoderKind, vocoder_kind
from tts_pipeline.errors import UserError


class VocoderFile(NamedTuple):
    """Another vocoder's model file, by kind (a ``--vocoders`` item)."""

    kind: VocoderKind
    path: Path


def other_kinds() -> tuple[VocoderKind, ...]:
    """Every vocoder kind but the pipeline's own (HiFi-GAN), in table order."""
    return tuple(kind for kind in VOCODERS if kind.name != PIPELINE_VOCODER)


def add_vocoders_argument(parser: argparse.ArgumentParser, use: str) -> None:
    """``--vocoders NAME=PATH ...``: the DAG's vocoders beside HiFi-GAN, by kind, as the workflow passes
    them to the ``benchmark`` and ``report_pages`` stages (items read by :func:`parse_vocoder_argument`).
    ``use``: what the stage does with them, for the help."""
    parser.add_argument(
        "--vocoders",
        nargs="*",
        default=[],
        metavar="NAME=PATH",
        help=f"other vocoders by kind (e.g. waveglow=R/waveglow/model.pt): {use}",
    )


def parse_vocoder_argument(value: str) -> VocoderFile:
    """``name=path`` -> :class:`VocoderFile` (the command line's ``--vocoders`` items); UserError for a
    malformed item, HiFi-GAN (the benchmark's own) or an unknown kind, naming the known ones."""
    names = [kind.name for kind in other_kinds()]
    return VocoderFile(*parse_kind_item(value, "--vocoders", vocoder_kind, PIPELINE_VOCODER, names))


def parse_kind_item(
    value: str, option: str, kind_of: Callable[[str], Any], measured_anyway: str, others: Sequence[str]
) -> tuple[Any, Path]:
    """A ``name=path`` item of ``option`` -> (the kind ``kind_of(name)`` gives, path). UserError for a
    malformed item, an unknown kind or ``measured_anyway`` (the benchmark's own model of that role),
    naming ``others``, the kinds the option takes."""
    name, sep, path = value.partition("=")
    names = ", ".join(others)
    if not sep or not path.strip():
        raise UserError(f"{option}: expected name=path with a name of {names}, got {value!r}")
    try:
        kind = kind_of(name.strip())
    except KeyError as error:
        raise UserError(f"{option}: {error.args[0]}") from None
    if kind.name == measured_anyway:
        raise UserError(f"{option}: {kind.name} is measured anyway; expected one of {names}")
    return kind, Path(path.strip())


def speed_key(kind: VocoderKind) -> str:
    """The key of its speed rows in ``report["speed"]``."""
    return f"{kind.name}_rows"


def ground_truth_row(kind: VocoderKind) -> str:
    """Its intelligibility row on the ground-truth mels (copy synthesis)."""
    return f"{kind.name}_ground_truth"


def tts_row(kind: VocoderKind) -> str:
    """Its intelligibility row of FastPitch + it from the texts."""
    return f"tts_{kind.name}"


def row_descriptions() -> dict[str, str]:
    """The words of every other vocoder's intelligibility rows, by row name."""
    descriptions = {}
    for kind in other_kinds():
        descriptions[ground_truth_row(kind)] = f"{kind.label} on ground-truth mels (copy synthesis)"
        descriptions[tts_row(kind)] = f"FastPitch + {kind.label} (full TTS)"
    return descriptions


def comparisons() -> tuple[tuple[str, str, str], ...]:
    """(neural row, Griffin-Lim row on the same mels, what the mels are): intelligibility.findings' pairs."""
    pairs: tuple[tuple[str, str, str], ...] = ()
    for kind in other_kinds():
        pairs += (
            (ground_truth_row(kind), "griffin_lim_ground_truth", "ground-truth mels"),
            (tts_row(kind), "griffin_lim_fastpitch", "FastPitch mels"),
        )
    return pairs


def figure_rows() -> tuple[str, ...]:
    """Their panels of each spectrogram figure: copy synthesis, then full TTS, per vocoder."""
    return tuple(row for kind in other_kinds() for row in (ground_truth_row(kind), tts_row(kind)))


def vocoder_settings(inference: Mapping[str, Any], benchmarked: Container[str]) -> dict[str, Any]:
    """Every other vocoder's ``inference`` settings (its row's ``settings``) for ``report["settings"]``, by
    key: the section's value where the vocoder was benchmarked, else None."""
    return {
        key: inference[key] if kind.name in benchmarked else None for kind in other_kinds() for key in kind.settings
    }


def speed_markdown(report: Mapping[str, Any], speed_columns: tuple[Column, ...], notes: str) -> list[str]:
    """A section ``Inference speed: FastPitch + <vocoder>`` per other vocoder with speed rows."""
    lines: list[str] = []
    for kind in other_kinds():
        rows = report["speed"].get(speed_key(kind))
        if not rows:
            continue
        used = ", ".join(f"inference.{key} {report['settings'].get(key):g}" for key in kind.settings)
        per_model = component_columns(("fastpitch", "vocoder"), {"fastpitch": "FastPitch", "vocoder": kind.label})
        lines += [
            f"## Inference speed: FastPitch + {kind.label}",
            "",
            f"The same phrase, calls and precisions as above, with {kind.label} as the vocoder "
            f"({used + ', ' if used else ''}model {report['models'].get(kind.name)}).",
            "",
            render_table(rows, speed_columns),
            notes.replace("FastPitch + HiFi-GAN", f"FastPitch + {kind.label}"),
            "",
            "Per model (seconds per call):",
            "",
            render_table(rows, per_model),
            "",
        ]
    return lines


def headline_metrics(report: Mapping[str, Any]) -> dict[str, Any]:
    """The tracker's figures of every other vocoder's speed rows (``<name>_b<batch>_<precision>_<key>``)."""
    metrics = {}
    for kind in other_kinds():
        for row in report["speed"].get(speed_key(kind)) or []:
            prefix = f"{kind.name}_b{row['batch_size']}_{row['precision']}"
            for key in ("latency_mean_s", "latency_p99_s", "x_real_time", "rtf"):
                metrics[f"{prefix}_{key}"] = row[key]
    return metrics
