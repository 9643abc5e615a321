"""The whole pipeline's config, and how it is read: from YAML, from a dict, or one section from JSON."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import Field, ValidationError, model_validator

from tts_pipeline.config.base import FOLDER_NAME_PATTERN, ConfigError, StrictModel
from tts_pipeline.config.cluster_sections import ClusterConfig
from tts_pipeline.config.data_sections import (
    AudioConfig,
    CorpusConfig,
    DataConfig,
    PitchConfig,
    TextConfig,
)
from tts_pipeline.config.model_kinds import vocoders_in_use
from tts_pipeline.config.model_sections import (
    AlignerConfig,
    DurationsConfig,
    FastPitchConfig,
    HiFiGANConfig,
    Tacotron2SectionConfig,
)
from tts_pipeline.config.run_sections import BenchmarkConfig, ExportConfig, InferenceConfig, TrackingConfig
from tts_pipeline.config.waveglow_section import WaveGlowSection


class PipelineConfig(StrictModel):
    """The whole pipeline. ``experiment`` decides ``<results_dir>/<experiment>/``."""

    experiment: str = Field(
        pattern=FOLDER_NAME_PATTERN, description="Experiment name: output folder and MLflow experiment."
    )
    results_dir: str = "results"
    resources_dir: str = "resources"
    tracking: TrackingConfig = TrackingConfig()
    corpus: CorpusConfig = CorpusConfig()
    audio: AudioConfig = AudioConfig()
    text: TextConfig = TextConfig()
    data: DataConfig = DataConfig()
    pitch: PitchConfig = PitchConfig()
    aligner: AlignerConfig = AlignerConfig()
    durations: DurationsConfig = DurationsConfig()
    hifigan: HiFiGANConfig = HiFiGANConfig()
    fastpitch: FastPitchConfig = FastPitchConfig()
    inference: InferenceConfig = InferenceConfig()
    benchmark: BenchmarkConfig = BenchmarkConfig()
    export: ExportConfig = ExportConfig()
    waveglow: WaveGlowSection = WaveGlowSection()
    tacotron2: Tacotron2SectionConfig = Tacotron2SectionConfig()
    cluster: ClusterConfig = ClusterConfig()

    @model_validator(mode="after")
    def _sections_agree(self) -> PipelineConfig:
        # a vocoder out of the DAG may hold settings that only fit another audio section
        for kind in vocoders_in_use(self):
            kind.fits_audio(getattr(self, kind.section), self.audio)
        return self

    @property
    def experiment_dir(self) -> Path:
        return Path(self.results_dir) / self.experiment


def _format_errors(error: ValidationError, source: str) -> str:
    lines = [f"invalid config ({source}):"]
    for item in error.errors():
        path = ".".join(str(part) for part in item["loc"]) or "<top level>"
        message = item["msg"].removeprefix("Value error, ")
        if item["type"] == "extra_forbidden":
            message = "unknown key (check its spelling and section; see config/README.md)"
        elif "input" in item and item["type"] not in ("missing",) and not isinstance(item["input"], dict):
            message += f" (got {item['input']!r})"
        lines.append(f"  - {path}: {message}")
    return "\n".join(lines)


def parse_config(raw: dict[str, Any], source: str = "<dict>") -> PipelineConfig:
    """Validate a config mapping; raise :class:`ConfigError` naming every bad key."""
    if not isinstance(raw, dict):
        raise ConfigError(f"invalid config ({source}): expected a mapping at the top level, got {type(raw).__name__}")
    try:
        return PipelineConfig.model_validate(raw)
    except ValidationError as error:
        raise ConfigError(_format_errors(error, source)) from None


def load_config(path: str | Path) -> PipelineConfig:
    """Read and validate a YAML config file."""
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {path}") from None
    except yaml.YAMLError as error:
        raise ConfigError(f"config file {path} is not valid YAML: {error}") from None
    return parse_config(raw or {}, source=str(path))


def parse_section(model: type[StrictModel], payload: str | dict[str, Any], name: str) -> StrictModel:
    """Rebuild one section from the JSON a rule passed on the command line."""
    raw = json.loads(payload) if isinstance(payload, str) else payload
    try:
        return model.model_validate(raw)
    except ValidationError as error:
        message = _format_errors(error, f"section '{name}'")
        raise ConfigError(message.replace("  - ", f"  - {name}.")) from None


def config_hash(payload: str | dict[str, Any]) -> str:
    """Short stable hash of a config slice (SHA-256 of its canonical JSON, 12 hex digits)."""
    if not isinstance(payload, str):
        payload = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    else:
        payload = json.dumps(json.loads(payload), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:12]


def json_schema() -> dict[str, Any]:
    """The JSON schema of :class:`PipelineConfig`, as written to ``workflow/schemas/config.schema.json``."""
    schema = PipelineConfig.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema
