"""The ``export_voice`` stage's work: load the voice as synthesis does, export both models in every
format, check every file against the eager models, and describe the voice.

Writes into ``out_dir``: ``<kind>.onnx`` and ``<kind>.ts`` of the acoustic model and of the vocoder
(:func:`tts_pipeline.export.voice_card.model_file_name`), their model files as ``<kind>.pt`` (the
speech server's PyTorch engine), ``verification.json`` (every figure, input by
input; written before the verdict, so that a failed check leaves it to read) and, last and only when
every check passed, ``voice.json``.
"""

from __future__ import annotations

import dataclasses
import logging
import shutil
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from tts_pipeline.config import AudioConfig, InferenceConfig, TextConfig
from tts_pipeline.config.model_kinds import (
    PIPELINE_ACOUSTIC_MODEL,
    AcousticModelKind,
    VocoderKind,
    acoustic_model_kind,
    vocoder_kind,
)
from tts_pipeline.errors import UserError
from tts_pipeline.export.cases import Case, Controls, build_cases
from tts_pipeline.export.compare import check_acoustic, check_vocoder, eager_acoustic, eager_vocoder, vocoder_inputs
from tts_pipeline.export.graphs import ExportGraph, export_graph, names
from tts_pipeline.export.onnx_file import write_onnx
from tts_pipeline.export.runtime import OnnxModel
from tts_pipeline.export.torchscript import TorchScriptModel, write_torchscript
from tts_pipeline.export.verify import Check, Limits, require_passed, summary
from tts_pipeline.export.voice_card import PYTORCH, VERIFICATION, VOICE_CARD, build_card, model_file_name
from tts_pipeline.files import atomic_path, write_json
from tts_pipeline.inference import SynthesisOptions, Synthesizer, read_phrases

log = logging.getLogger(__name__)

ACOUSTIC, VOCODER = "acoustic_model", "vocoder"  # the two roles, as the voice card names them


@dataclass(frozen=True)
class ExportRequest:
    """What to export and how.

    Attributes:
        acoustic_model: The acoustic model's file (this pipeline's or a foreign checkpoint).
        vocoder: The vocoder's file, of kind ``inference.vocoder``.
        texts: A phrase file or manifest whose first ``n_texts`` texts the check speaks.
        out_dir: The export folder.
        inference, audio, text: The config sections synthesis reads (models, controls, foreign files).
        formats: ``onnx`` and / or ``torchscript``.
        opset: ONNX opset.
        n_texts: Texts of ``texts`` checked.
        batch_size: Items of the padded batches checked.
        limits: What every file must meet.
        name: The voice's name (the experiment).
        source: Where it came from (commit, run ids): the card's ``source``, with the model files added.
    """

    acoustic_model: Path
    vocoder: Path
    texts: Path
    out_dir: Path
    inference: InferenceConfig
    audio: AudioConfig | None
    text: TextConfig | None
    formats: Sequence[str]
    opset: int
    n_texts: int
    batch_size: int
    limits: Limits
    name: str
    source: Mapping[str, Any]


@dataclass(frozen=True)
class ExportResult:
    """Files written (``<role>_<format>``, ``verification``, ``voice`` -> path), the checks, the worst
    figures (:func:`tts_pipeline.export.verify.summary`) and the seconds of each step."""

    files: dict[str, Path]
    checks: list[Check]
    figures: dict[str, float]
    seconds: dict[str, float]


@dataclass(frozen=True)
class _Model:
    """One role's model: its row, the model its seam loaded and its graph."""

    kind: AcousticModelKind | VocoderKind
    model: nn.Module
    graph: ExportGraph


def export_voice(request: ExportRequest) -> ExportResult:
    """Export, check, describe (module docstring). Raises UserError for bad input (naming the file or
    key) and :class:`tts_pipeline.export.verify.ExportMismatch` when a file differs from its eager model."""
    # The synthesizer's fp32 path on the CPU is the reference. Its denoiser is post-processing, in
    # neither graph, so it is left out (and not measured at load).
    options = dataclasses.replace(SynthesisOptions.from_config(request.inference), denoising_strength=0.0)
    synth = Synthesizer.load(
        request.acoustic_model,
        request.vocoder,
        options,
        vocoder_kind=request.inference.vocoder,
        audio=request.audio,
        text=request.text,
        device="cpu",
        amp="off",
    )
    kinds = {ACOUSTIC: acoustic_model_kind(PIPELINE_ACOUSTIC_MODEL), VOCODER: vocoder_kind(request.inference.vocoder)}
    loaded = {ACOUSTIC: synth.acoustic_model, VOCODER: synth.vocoder}
    models = {role: _Model(kinds[role], loaded[role], export_graph(kinds[role], loaded[role])) for role in kinds}

    started = time.perf_counter()
    files = {
        f"{role}_{fmt}": _write(fmt, model, request.out_dir, request.opset)
        for role, model in models.items()
        for fmt in request.formats
    }
    origins = {ACOUSTIC: request.acoustic_model, VOCODER: request.vocoder}
    for role, model in models.items():
        files[f"{role}_{PYTORCH}"] = _copy(origins[role], request.out_dir / model_file_name(model.kind.name, PYTORCH))
    exported = time.perf_counter()
    cases = _cases(synth, request)
    checks = _check(synth, models, files, cases, request)
    seconds = {"export": exported - started, "verify": time.perf_counter() - exported}
    figures = summary(checks)
    files["verification"] = request.out_dir / VERIFICATION
    write_json(files["verification"], _verification(checks, cases, figures, seconds, request.limits))
    log.info(
        "export_voice: %d checks on %d inputs in %.1f s; worst figures %s",
        len(checks),
        len(cases),
        seconds["verify"],
        ", ".join(f"{key} {value:.3g}" for key, value in figures.items()),
    )
    require_passed(checks)
    files["voice"] = request.out_dir / VOICE_CARD
    write_json(files["voice"], _card(synth, models, files, request))
    return ExportResult(files, checks, figures, seconds)


def _write(fmt: str, model: _Model, out_dir: Path, opset: int) -> Path:
    """One file of ``model`` in ``fmt``; an exporter's failure is a UserError naming the model and format."""
    path = out_dir / model_file_name(model.kind.name, fmt)
    started = time.perf_counter()
    try:
        if fmt == "onnx":
            write_onnx(model.graph, path, opset=opset)
        else:
            write_torchscript(model.graph, path)
    except (RuntimeError, ValueError) as error:
        raise UserError(f"export_voice: {model.kind.label} could not be exported as {fmt} ({error})") from error
    log.info(
        "export_voice: %s as %s: %s (%.1f MB, %.1f s)",
        model.kind.label,
        fmt,
        path.name,
        path.stat().st_size / 1e6,
        time.perf_counter() - started,
    )
    return path


def _copy(source: Path, target: Path) -> Path:
    """The model file ``source`` as ``target``, byte for byte (the PyTorch engine's input), atomically."""
    with atomic_path(target) as tmp:
        shutil.copyfile(source, tmp)
    return target


def _cases(synth: Synthesizer, request: ExportRequest) -> list[Case]:
    """The first ``n_texts`` texts of ``request.texts``, encoded as the model was trained (errors name
    the file and line), as the cases of :func:`tts_pipeline.export.cases.build_cases`."""
    texts = []
    for phrase in read_phrases(request.texts, limit=request.n_texts):
        try:
            texts.append((phrase.name, synth.encode(phrase.text)))
        except UserError as error:
            raise UserError(f"{request.texts}:{phrase.line}: {phrase.name!r}: {error}") from None
    controls = Controls.from_inference(request.inference.model_dump())
    return build_cases(texts, batch_size=request.batch_size, controls=controls)


def _check(
    synth: Synthesizer,
    models: Mapping[str, _Model],
    files: Mapping[str, Path],
    cases: list[Case],
    request: ExportRequest,
) -> list[Check]:
    """Every file on every case against the synthesizer's fp32 models (:mod:`tts_pipeline.export.compare`)."""
    threads = torch.get_num_threads()  # ONNX Runtime's default would take every core, not the job's

    def runners(role: str) -> dict[str, OnnxModel | TorchScriptModel]:
        paths = {fmt: files[f"{role}_{fmt}"] for fmt in request.formats}
        return {
            fmt: OnnxModel(path, threads=threads) if fmt == "onnx" else TorchScriptModel(path)
            for fmt, path in paths.items()
        }

    acoustic, vocoder = models[ACOUSTIC], models[VOCODER]
    outputs = names(acoustic.graph.outputs)
    eager = eager_acoustic(synth.acoustic_runner, outputs)  # type: ignore[arg-type]
    checks, mels = check_acoustic(acoustic.kind.name, eager, runners(ACOUSTIC), cases, request.limits, outputs)
    batches = vocoder_inputs(cases, mels)
    checks += check_vocoder(
        vocoder.kind.name, eager_vocoder(synth.vocoder_runner), runners(VOCODER), batches, request.limits
    )
    return checks


def _card(
    synth: Synthesizer, models: Mapping[str, _Model], files: Mapping[str, Path], request: ExportRequest
) -> dict[str, Any]:
    """The voice card (:mod:`tts_pipeline.export.voice_card`) of the exported files."""
    from tts_pipeline.data.download import sha256_of
    from tts_pipeline.text import get_symbols

    encoder = synth.text_encoder
    assert encoder is not None  # loaded with an acoustic model
    described = {
        role: {
            "kind": model.kind.name,
            "label": model.kind.label,
            "files": {fmt: files[f"{role}_{fmt}"].name for fmt in [*request.formats, PYTORCH]},
            **model.graph.signature(),
        }
        for role, model in models.items()
    }
    # A harmonic source's running phase makes every sample depend on all earlier frames: a stream must
    # vocode each chunk from the piece's start to give the whole's audio (serving.streaming).
    described[VOCODER]["stream_from_start"] = bool(getattr(models[VOCODER].model, "has_source", False))
    origins = {ACOUSTIC: request.acoustic_model, VOCODER: request.vocoder}
    return build_card(
        name=request.name,
        models=described,
        text={
            "cleaners": encoder.cleaners,
            "symbols_kind": encoder.symbols,
            "symbol_set": encoder.symbol_set,
            "symbols": list(get_symbols(encoder.symbol_set)),
        },
        audio=synth.audio.model_dump(mode="json"),
        controls=dataclasses.asdict(Controls.from_inference(request.inference.model_dump())),
        synthesis=_synthesis(request),
        source={
            **request.source,
            "models": {role: {"path": str(path), "sha256": sha256_of(path)} for role, path in origins.items()},
        },
        export={"opset": request.opset, "torch": torch.__version__, "verification": VERIFICATION},
        extra={key: value for model in models.values() for key, value in model.graph.card.items()},
    )


def _synthesis(request: ExportRequest) -> dict[str, Any]:
    """The card's ``synthesis`` section: the post-processing ``synthesize`` applies with this config."""
    options = SynthesisOptions.from_config(request.inference)
    keys = ("denoising_strength", "fade_out_frames", "pause_seconds", "max_piece_symbols", "max_phrase_symbols")
    return {key: getattr(options, key) for key in keys}


def _verification(
    checks: Sequence[Check],
    cases: Sequence[Case],
    figures: Mapping[str, float],
    seconds: Mapping[str, float],
    limits: Limits,
) -> dict[str, Any]:
    """``verification.json``: the verdict, the limits, the worst figures, the seconds, every input and check."""
    return {
        "passed": all(check.passed for check in checks),
        "limits": dataclasses.asdict(limits),
        "figures": {key: value if abs(value) != float("inf") else str(value) for key, value in figures.items()},
        "seconds": {key: round(value, 3) for key, value in seconds.items()},
        "inputs": [case.describe() for case in cases],
        "checks": [check.record() for check in checks],
    }
