"""Print where a config's outputs are: corpus, manifests, models, audio, benchmark, exported voice, report,
logs, the MLflow store and UI command, and how to serve the voice.

The commands it prints quote their paths for a POSIX shell, so they can be pasted as they are even when
``results_dir`` holds spaces or quotes. ``--report-path`` prints the bare path, for ``"$(...)"``.
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tts_pipeline.config import PipelineConfig
    from tts_pipeline.workflow.paths import Paths


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", type=Path, default=Path("config/config.yaml"), help="YAML config")
    parser.add_argument("--report-path", action="store_true", help="print only the HTML report's path")


def run(args: argparse.Namespace) -> None:
    from tts_pipeline.config import load_config
    from tts_pipeline.workflow.paths import Paths

    config = load_config(args.config)
    paths = Paths(config)
    if args.report_path:
        print(paths.html_report)
        return
    lines = [
        f"experiment:   {config.experiment}",
        f"corpus:       {paths.corpus_dir}/",
        f"manifests:    {paths.data_dir}/manifest.{{train,val,test}}.jsonl",
        f"validation:   {paths.validation}",
        f"models:       {paths.fastpitch_model}, {paths.hifigan_finetuned_model}",
        f"audio:        {Path(paths.inference_manifest).parent}/*.wav",
        f"benchmark:    {paths.benchmark_md}",
        f"voice:        {paths.export_dir}/   (ONNX, TorchScript, PyTorch, voice.json)",
        f"report:       {paths.html_report}   (snakemake --report {shlex.quote(paths.html_report)}"
        f" --configfile {shlex.quote(str(args.config))})",
        f"logs:         {paths.experiment}/logs/",
    ]
    if config.tracking.enabled:
        from tts_pipeline import tracking

        uri = config.tracking.uri or f"sqlite:///{Path(config.results_dir) / 'mlflow.db'}"
        experiment = tracking.experiment_id(tracking.TrackingSettings.from_config(config))
        lines.append(f"MLflow store: {uri}")
        lines.append(f"MLflow UI:    mlflow ui --backend-store-uri {shlex.quote(uri)}   (or make mlflow-ui), then open")
        lines.append(f"              {tracking.ui_url('http://127.0.0.1:5000', experiment)}")
    lines += _how_to_serve(config, paths, args.config)
    print("\n".join(lines))


def _how_to_serve(config: PipelineConfig, paths: Paths, config_path: Path) -> list[str]:
    """How to put the exported voice behind HTTP: ``tts-pipeline serve`` on the folder, and MLflow's own
    server on the registered model (when the export registers it)."""
    from tts_pipeline.config.model_kinds import vocoder_kind

    if vocoder_kind(config.inference.vocoder).export is None:  # no export_voice in the DAG
        return []
    lines = [
        f"serve:        tts-pipeline serve {shlex.quote(str(paths.export_dir))}   then open http://127.0.0.1:8000/",
        '              (or POST /v1/audio/speech; README.md, "Serving the voice")',
    ]
    if config.tracking.enabled and config.export.register_voice:
        uri = config.tracking.uri or f"sqlite:///{Path(config.results_dir) / 'mlflow.db'}"
        model = f"models:/{config.experiment}@{config.export.registry_alias}"
        lines.append(f"registered:   {model}   (MLflow Model Registry)")
        serve = f"mlflow models serve -m {model} --env-manager local --port 5001"
        lines.append(f"              MLFLOW_TRACKING_URI={shlex.quote(uri)} {serve}")
    return lines
