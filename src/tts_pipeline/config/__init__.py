"""Typed, strict pipeline configuration: the one source of truth.

Every YAML config is parsed into :class:`PipelineConfig`. Unknown keys, wrong types and bad values
are errors that name the key's full path (``data.split.val_size``) and what was expected. The JSON
schema under ``workflow/schemas/`` is generated from these models (``tts-pipeline schema``), and each
Snakemake rule receives only the config it reads (``tts_pipeline.stage_table.stage_params``), so a
change reruns exactly the stages that depend on it.

Modules: ``base`` (strict model, error), ``loop_settings`` (the training-loop keys every model section
inherits), ``data_sections``, ``model_sections``, ``waveglow_section``, ``run_sections``, ``cluster_sections``
(the sections), ``rules`` (rules across sections), ``pipeline`` (the whole config and how it is read),
``folders`` (its folders, checked on disk before any job).
"""

from tts_pipeline.config.base import ConfigError, StrictModel
from tts_pipeline.config.cluster_sections import ClusterConfig, RuleResources
from tts_pipeline.config.data_sections import (
    AudioConfig,
    CorpusConfig,
    DataConfig,
    DemoCorpusConfig,
    LJSpeechDownloadConfig,
    PitchConfig,
    SplitConfig,
    TextConfig,
)
from tts_pipeline.config.folders import check_folders
from tts_pipeline.config.loop_settings import BucketedLoopSettings, EpochLoopSettings, LoopSettings
from tts_pipeline.config.model_sections import (
    FASTPITCH_MODEL_FIELDS,
    TACOTRON2_MODEL_FIELDS,
    AlignerConfig,
    DurationsConfig,
    FastPitchConfig,
    HiFiGANConfig,
    Tacotron2SectionConfig,
)
from tts_pipeline.config.pipeline import (
    PipelineConfig,
    config_hash,
    json_schema,
    load_config,
    parse_config,
    parse_section,
)
from tts_pipeline.config.run_sections import BenchmarkConfig, ExportConfig, InferenceConfig, TrackingConfig
from tts_pipeline.config.waveglow_section import WaveGlowSection

__all__ = [
    "FASTPITCH_MODEL_FIELDS",
    "AlignerConfig",
    "AudioConfig",
    "BenchmarkConfig",
    "BucketedLoopSettings",
    "ConfigError",
    "CorpusConfig",
    "DataConfig",
    "DemoCorpusConfig",
    "DurationsConfig",
    "ExportConfig",
    "EpochLoopSettings",
    "FastPitchConfig",
    "HiFiGANConfig",
    "InferenceConfig",
    "LJSpeechDownloadConfig",
    "LoopSettings",
    "PipelineConfig",
    "PitchConfig",
    "SplitConfig",
    "StrictModel",
    "TextConfig",
    "TrackingConfig",
    "WaveGlowSection",
    "TACOTRON2_MODEL_FIELDS",
    "Tacotron2SectionConfig",
    "check_folders",
    "config_hash",
    "json_schema",
    "load_config",
    "parse_config",
    "parse_section",
    "ClusterConfig",
    "RuleResources",
]
