"""Export the voice for serving: FastPitch and the vocoder of ``inference.vocoder`` as ONNX and TorchScript
(``export.formats``, ONNX opset ``export.opset``), checked against the eager models, and ``voice.json``.

Each file is checked on the first ``export.n_texts`` texts of ``--texts`` (the validation manifest),
each alone, in padded batches of ``export.batch_size`` and once with other controls than the
defaults: FastPitch's mel may differ from the eager model's by at most ``export.mel_tolerance`` (its
durations must be the same), the vocoder's audio must reach ``export.min_snr_db`` of SNR against the
eager audio. The reference is the synthesizer's fp32 path on the CPU (:mod:`tts_pipeline.export.compare`).

Writes into ``--out-dir`` (R/export): ``<kind>.onnx`` / ``<kind>.ts`` per model, ``verification.json``
(every figure per input, and the seconds spent) and, last, only when every check passed,
``voice.json`` (:mod:`tts_pipeline.export.voice_card`). A mismatch fails the stage with an error naming
the model, the format and the input. Under tracking, the worst figures are the run's metrics, and the
files its artifacts (the model files unless ``tracking.log_models`` is off); with ``export.register_voice``
the ONNX voice is also an MLflow model of the run, registered under the experiment's name with the alias
``export.registry_alias`` (:mod:`tts_pipeline.serving.registry`).
"""

from __future__ import annotations

import argparse
import json
import logging
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tts_pipeline.stages.common import add_stage_arguments, load_stage_section, tracked

if TYPE_CHECKING:
    from tts_pipeline.export.voice import ExportRequest

log = logging.getLogger(__name__)

STAGE = "export_voice"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_stage_arguments(parser)
    parser.add_argument("--fastpitch", type=Path, required=True, help="FastPitch model.pt (or NVIDIA's checkpoint)")
    parser.add_argument(
        "--vocoder", type=Path, required=True, help="the vocoder's model.pt, of the kind inference.vocoder names"
    )
    parser.add_argument(
        "--texts", type=Path, required=True, help="texts to check the exports on: a manifest .jsonl or phrase file"
    )
    parser.add_argument("--out-dir", type=Path, required=True, help="the export folder (R/export)")
    parser.add_argument("--name", default=None, help="the voice's name; default: the experiment (out-dir's parent)")


def run(args: argparse.Namespace) -> None:
    from tts_pipeline.config import AudioConfig, ExportConfig, InferenceConfig, TextConfig, parse_section
    from tts_pipeline.export.verify import ExportMismatch, Limits
    from tts_pipeline.export.voice import ExportRequest, export_voice
    from tts_pipeline.export.voice_card import VERIFICATION

    payload = load_stage_section(args, STAGE)
    settings: ExportConfig = parse_section(ExportConfig, payload["export"], "export")
    name = args.name or args.out_dir.resolve().parent.name
    request = ExportRequest(
        acoustic_model=args.fastpitch,
        vocoder=args.vocoder,
        texts=args.texts,
        out_dir=args.out_dir,
        # the sections as the stage table cuts them: inference without the keys export ignores (defaults)
        inference=parse_section(InferenceConfig, payload["inference"], "inference"),
        audio=parse_section(AudioConfig, payload["audio"], "audio"),
        text=parse_section(TextConfig, payload["text"], "text"),
        formats=list(dict.fromkeys(settings.formats)),
        opset=settings.opset,
        n_texts=settings.n_texts,
        batch_size=settings.batch_size,
        limits=Limits(mel_max_abs_diff=settings.mel_tolerance, min_snr_db=settings.min_snr_db),
        name=name,
        source={},
    )
    tags = {"vocoder": request.inference.vocoder, "formats": ",".join(request.formats)}
    with tracked(STAGE, payload, dataset=name, tags=tags) as run_log:
        # checked before the export: a name the registry refuses should not wait for the end
        registry = _registry_name() if settings.register_voice and run_log.active else None
        request = _with_source(request, run_log.run_id)
        try:
            result = export_voice(request)
        except ExportMismatch:
            _log_verification(run_log, args.out_dir / VERIFICATION)  # the figures that failed, for the run
            raise
        _log_verification(run_log, result.files["verification"])
        run_log.log_artifact(result.files["voice"])
        if _log_models():
            for key, path in result.files.items():
                # the graphs; the .pt copies are the training runs' models, logged there already
                if key not in ("verification", "voice") and not key.endswith("_pytorch"):
                    run_log.log_artifact(path, "export")
        log.info(
            "export_voice: %s in %s; export %.1f s, verification %.1f s",
            ", ".join(sorted(path.name for path in result.files.values())),
            args.out_dir,
            result.seconds["export"],
            result.seconds["verify"],
        )
        if registry is not None:
            _register(args.out_dir, registry, settings.registry_alias, run_log.run_id)


def _registry_name() -> str:
    """The registered model's name: the experiment's (UserError when the registry refuses it)."""
    from tts_pipeline import tracking
    from tts_pipeline.serving.registry import registry_name

    settings = tracking.settings_from_env(tracking.TrackingSettings(enabled=False, uri="", experiment=""))
    return registry_name(settings.experiment)


def _register(out_dir: Path, name: str, alias: str, run_id: str | None) -> None:
    """The exported voice as the registered MLflow model ``name`` (``export.register_voice``), ``alias`` on
    its version (:func:`tts_pipeline.serving.registry.register_voice`).

    Tracking is a side channel: a tracking server that does not answer is warned about once and the
    export stands (rerun the stage once it is back to register the voice); any other error fails the stage.
    """
    from tts_pipeline import tracking
    from tts_pipeline.serving.registry import register_voice, serve_command
    from tts_pipeline.tracking.outages import brief_tries, describe, is_unreachable, server_answers

    uri = tracking.settings_from_env(tracking.TrackingSettings(enabled=False, uri="", experiment="")).uri
    try:
        if not server_answers(uri):
            raise ConnectionError(f"{uri}/health does not answer")
        # a few seconds of retries, not MLflow's minutes: the export is done and should not stall on this
        with brief_tries(small_request=False):
            registered = register_voice(out_dir, name=name, alias=alias, run_id=run_id, tracking_uri=uri)
    except Exception as error:
        if not is_unreachable(error):
            raise
        log.warning(
            "export_voice: MLflow tracking server %s is unreachable (%s): the voice is not registered as %r; "
            "the export stands, rerun export_voice once the server is back to register it",
            uri,
            describe(error),
            name,
        )
        return
    log.info(
        "export_voice: registered model %r version %s, alias %r; serve it with: %s",
        registered.name,
        registered.version,
        alias,
        serve_command(registered.uri),
    )


def _with_source(request: ExportRequest, run_id: str | None) -> ExportRequest:
    """The request with the card's ``source``: experiment, git commit, this run and the workflow run."""
    import dataclasses

    from tts_pipeline import tracking

    settings = tracking.settings_from_env(tracking.TrackingSettings(enabled=False, uri="", experiment=""))
    source = {
        "experiment": settings.experiment or request.name,
        "git_commit": tracking.git_commit(),
        "run_id": run_id,
        "workflow_run_id": settings.parent_run_id,
    }
    return dataclasses.replace(request, source=source)


def _log_verification(run_log: Any, path: Path) -> None:
    """``verification.json`` as an artifact and its worst figures and seconds as metrics (finite ones:
    a shape mismatch reads ``inf``, which MLflow does not take)."""
    if not path.is_file():
        return
    verification = json.loads(path.read_text(encoding="utf-8"))
    metrics = {**verification["figures"], **{f"{key}_seconds": value for key, value in verification["seconds"].items()}}
    metrics["n_inputs"] = len(verification["inputs"])
    run_log.log_metrics({key: float(value) for key, value in metrics.items() if _finite(value)})
    run_log.log_artifact(path)


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value)


def _log_models() -> bool:
    """``tracking.log_models`` (exported by the Snakefile): whether model files go to the store."""
    import os

    from tts_pipeline.tracking.settings import ENV_LOG_MODELS

    return os.environ.get(ENV_LOG_MODELS, "1") != "0"
