"""The one table of stages: every workflow rule and every command, and what each reads.

The CLI (``cli.py``), the workflow's per-rule params and GPU requests (``workflow/pipeline.py``), each stage's
check of the JSON it receives (``stages/common.py``) and the stage list of ``config/README.md``
(``tts-pipeline schema``) are all derived from it; a test fails when a rule of ``workflow/rules``
and its row disagree.

Adding a stage: one :class:`Stage` row here, its module in ``tts_pipeline/stages/`` (named after the
rule, with ``add_arguments(parser)`` and ``run(args)``), and its rule in ``workflow/rules/*.smk`` whose
``params.section`` is ``pipeline.params("<rule>")`` and, when the row names a GPU key,
``resources: gpu=pipeline.gpus("<rule>")``.

This module holds the table and :func:`stage_params`, the slice of a config a row reads, and imports
nothing of the package. The stages' code hashes leave it out (see ``workflow.code_hash``): what a stage
reads already reaches its rule through ``params``, so a new row reruns nothing else.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import BaseModel

_STAGES = "tts_pipeline.stages."


@dataclass(frozen=True)
class Stage:
    """One workflow rule.

    Attributes:
        rule: The Snakemake rule name (also the stage's MLflow run name).
        reads: Config the rule passes as ``--section`` JSON: section names, or dotted keys for a single
            value (so that e.g. a new hop length does not rerun the manifest).
        excludes: Dotted keys dropped from a section in ``reads``: settings the stage ignores, so
            changing them does not rerun it.
        gpus: Dotted config key of the stage's GPU count (``resources: gpu``); ``None``: CPU only.
        module: The module whose ``run(args)`` does the work; default: ``tts_pipeline.stages.<rule>``.
        command: The ``tts-pipeline`` command that runs it; default: the rule name with hyphens.
    """

    rule: str
    reads: tuple[str, ...]
    excludes: tuple[str, ...] = ()
    gpus: str | None = None
    module: str = ""
    command: str = ""

    def __post_init__(self) -> None:
        if not self.module:
            object.__setattr__(self, "module", _STAGES + self.rule)
        if not self.command:
            object.__setattr__(self, "command", self.rule.replace("_", "-"))

    @property
    def sections(self) -> tuple[str, ...]:
        """Top-level config sections this stage depends on (``"audio"`` for ``"audio.hop_length"``)."""
        return tuple(dict.fromkeys(name.split(".")[0] for name in self.reads))


# In DAG order.
STAGES: tuple[Stage, ...] = (
    Stage("corpus", ("corpus", "text.cleaners")),
    Stage("manifest", ("data", "text", "audio.sampling_rate")),
    Stage("features", ("audio", "pitch")),
    Stage("train_aligner", ("aligner", "audio.n_mel_channels", "text.symbol_set"), gpus="aligner.gpus"),
    Stage("durations", ("durations", "audio", "text.symbol_set")),
    Stage(
        "train_hifigan",
        ("hifigan", "audio"),
        # base vocoder training ignores the fine-tuning settings and the pretrained shortcut
        excludes=(
            "hifigan.fine_tune_lr_factor",
            "hifigan.fine_tune_epochs",
            "hifigan.fine_tune_spectral_steps",
            "hifigan.checkpoint",
            "hifigan.discriminator_checkpoint",
        ),
        gpus="hifigan.gpus",
    ),
    Stage(
        "train_fastpitch",
        ("fastpitch", "audio", "text.cleaners"),
        excludes=("fastpitch.checkpoint", "fastpitch.extract_batch_size"),
        gpus="fastpitch.gpus",
    ),
    Stage(
        "extract_fastpitch_mels",
        # the model file carries everything else extraction needs, except for a foreign checkpoint
        # (fastpitch.checkpoint from NVIDIA), whose text and audio settings come from the config
        ("fastpitch.extract_batch_size", "fastpitch.gpus", "audio", "text"),
        gpus="fastpitch.gpus",
    ),
    Stage(
        "finetune_hifigan",
        ("hifigan", "audio"),
        gpus="hifigan.gpus",
        module=_STAGES + "train_hifigan",
        command="train-hifigan",
    ),
    # text: the symbols of a FastPitch checkpoint that records none (NVIDIA's)
    Stage("synthesize", ("inference", "audio", "text"), gpus="inference.gpus"),
    Stage("benchmark", ("benchmark", "inference", "audio", "text", "pitch", "corpus.demo"), gpus="benchmark.gpus"),
    Stage("report_pages", ()),
    # the voice as ONNX and TorchScript files for serving, checked against the eager models; it reads
    # what synthesis loads the models with and the controls it speaks with, not how it batches or post-processes
    Stage(
        "export_voice",
        ("export", "inference", "audio", "text"),
        excludes=(
            "inference.batch_size",
            "inference.denoising_strength",
            "inference.fade_out_frames",
            "inference.normalize_peak",
            "inference.amp",
            "inference.gpus",
            "inference.phrases",
            "inference.n_val_phrases",
        ),
    ),
    # optional second vocoder (FastPitch 1.0's path); the pretrained shortcut does not shape training
    Stage("train_waveglow", ("waveglow", "audio"), excludes=("waveglow.checkpoint",), gpus="waveglow.gpus"),
    # FastPitch 1.0's path (durations.source: tacotron2): Tacotron 2 trained for its attention
    Stage(
        "train_tacotron2",
        ("tacotron2", "audio.n_mel_channels", "text.symbol_set"),
        excludes=("tacotron2.checkpoint", "tacotron2.durations_batch_size"),
        gpus="tacotron2.gpus",
    ),
)

_TOOLS = "tts_pipeline.commands."

# Commands that are not workflow rules: the workflow's helpers and the developer tools.
COMMANDS: dict[str, str] = {
    "lease-gpus": _TOOLS + "lease_gpus",
    "tracking": _TOOLS + "tracking_run",
    "check-config": _TOOLS + "check_config",
    "schema": _TOOLS + "schema",
    "where": _TOOLS + "where",
    "alignment-error": _TOOLS + "alignment_error",
    "bench-features": _TOOLS + "bench_features",
    "bench-hifigan": _TOOLS + "bench_hifigan",
    "bench-inference": _TOOLS + "bench_inference",
    "bench-fastpitch": _TOOLS + "bench_fastpitch",
    "bench-intelligibility": _TOOLS + "bench_intelligibility",
    "bench-voices": _TOOLS + "bench_voices",
    "bench-vocoders": _TOOLS + "bench_vocoders",
    "bench-engines": _TOOLS + "bench_engines",
    "serve": _TOOLS + "serve",
    "bench-serve": _TOOLS + "bench_serve",
}

BY_RULE: dict[str, Stage] = {stage.rule: stage for stage in STAGES}


def stage(rule: str) -> Stage:
    """The row of a rule; a ``KeyError`` naming the known rules otherwise."""
    try:
        return BY_RULE[rule]
    except KeyError:
        raise KeyError(f"unknown stage {rule!r}; expected one of {sorted(BY_RULE)}") from None


def command_modules() -> dict[str, str]:
    """Every ``tts-pipeline`` command and its module: stages first, in DAG order, then the tools."""
    commands = {row.command: row.module for row in STAGES}
    return {**commands, **COMMANDS}


def old_command_names() -> dict[str, str]:
    """Underscored command names of earlier releases (``train_hifigan``) -> today's (``train-hifigan``);
    accepted as aliases so existing scripts keep working."""
    return {row.command.replace("-", "_"): row.command for row in STAGES if "-" in row.command}


def lookup(config: BaseModel, dotted: str) -> Any:
    """The value of a dotted key (``"audio.sampling_rate"``) or section (``"data"``) of a pipeline
    config, sections as JSON-ready dicts."""
    value: Any = config
    for part in dotted.split("."):
        value = getattr(value, part)
    return value.model_dump(mode="json") if hasattr(value, "model_dump") else value


def stage_params(config: BaseModel, rule: str) -> str:
    """Compact, key-sorted JSON of the config a stage reads: ``{"data": {...}, "audio.sampling_rate": 22050}``.

    ``config`` is a :class:`tts_pipeline.config.PipelineConfig` (the config sits above this table);
    the workflow passes the result as the rule's ``--section``.
    """
    row = stage(rule)
    payload = {name: lookup(config, name) for name in row.reads}
    for dotted in row.excludes:
        section, key = dotted.rsplit(".", 1)
        payload[section].pop(key)
    return json.dumps(payload, sort_keys=True, separators=(",", ":"))
