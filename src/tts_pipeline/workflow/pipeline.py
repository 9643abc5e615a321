"""The object the Snakefile holds: the validated config, its paths, each rule's params and DAG choices.

The workflow files hold no logic; everything here is plain Python and tested. A rule's ``params``
carry (1) the JSON of exactly the config it reads (:func:`tts_pipeline.stage_table.stage_params`) and
(2) a hash of the package source files its stage imports (:mod:`.code_hash`), so Snakemake reruns a
stage when either changes, and nothing else.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tts_pipeline import preflight, stage_table
from tts_pipeline.config import PipelineConfig, check_folders, parse_config
from tts_pipeline.config.model_kinds import (
    PIPELINE_ACOUSTIC_MODEL,
    PIPELINE_VOCODER,
    AcousticModelKind,
    VocoderKind,
    acoustic_model_kind,
    acoustic_models_in_use,
    pretrained_file,
    vocoder_kind,
    vocoders_in_use,
)
from tts_pipeline.export.voice_card import PYTORCH, VERIFICATION, VOICE_CARD, model_file_name
from tts_pipeline.workflow import cluster, parent_run
from tts_pipeline.workflow.code_hash import code_hash
from tts_pipeline.workflow.paths import Paths
from tts_pipeline.workflow.stopping import StopWatch


class Pipeline:
    """The validated config plus everything rules need from it."""

    def __init__(
        self,
        raw_config: dict[str, Any] | PipelineConfig,
        source: str = "snakemake config",
        repository: str | Path | None = None,
    ) -> None:
        if isinstance(raw_config, PipelineConfig):
            self.config = raw_config
        else:
            self.config = parse_config(raw_config, source=source)
        check_folders(self.config, source=source)
        self.paths = Paths(self.config)
        self.repository = Path(repository) if repository is not None else None
        self.stopping = StopWatch(self.paths.stop_file)
        # before any job: values the data, memory or time cannot carry end here, naming the key
        preflight.settle(self.check_settings(), source)

    def check_settings(self) -> list[preflight.Finding]:
        """What :mod:`tts_pipeline.preflight` finds about the config: its settings against the training
        data (the manifest when it exists), the memory their batches need and the time their epochs imply."""
        return preflight.check_settings(
            self.config,
            manifest=self.paths.manifest("train"),
            trainings=self.training_metrics(),
            benchmark_phrases=self.benchmark_phrases(),
            durations_index=self.paths.durations_index,
        )

    def shipped(self, path: str) -> str:
        """A file the config names: as given when it exists (relative to the working directory), else
        the repository's copy (``config/phrases/...`` ship with it), so ``--directory`` runs find them."""
        if Path(path).is_absolute() or Path(path).exists() or self.repository is None:
            return path
        candidate = self.repository / path
        return str(candidate) if candidate.exists() else path

    # A stage takes folders (manifests, features); the rule derives each from a declared input or
    # output file at run time rather than naming it, so that the folder follows the file wherever a
    # storage plugin or a remote executor puts it (``snakemake --lint`` checks this).
    @staticmethod
    def input_folder(name: str) -> Callable[..., str]:
        """A params function: the folder of the rule's input ``name``."""
        return lambda wildcards, input: str(Path(input[name]).parent)

    @staticmethod
    def output_folder(name: str) -> Callable[..., str]:
        """A params function: the folder of the rule's output ``name``."""
        return lambda wildcards, output: str(Path(output[name]).parent)

    @staticmethod
    def optional_input_option(option: str, name: str) -> Callable[..., list[str]]:
        """A params function: ``[option, <input name>]`` when the rule has that input, else ``[]``.

        For an input only some configs declare (the aligner, published discriminators): quoted with
        ``:q``, an empty string would vanish in the shell and leave the option without its value."""
        return lambda wildcards, input: [option, input[name]] if name in input.keys() else []

    def metrics_arguments(self) -> Callable[..., list[str]]:
        """A params function: ``<stage>=<metrics.json>`` for every training stage in the DAG."""
        return lambda wildcards, input: [f"{name}={input[name]}" for name in self.training_metrics()]

    def params(self, stage: str) -> str:
        return stage_table.stage_params(self.config, stage)

    def code(self, stage: str) -> str:
        return code_hash(stage)

    def all_targets(self) -> list[str]:
        """What ``rule all`` asks for: the last output of every phase built so far."""
        targets = [self.paths.validation, self.paths.features_index, self.paths.durations_index]
        if self.config.fastpitch.checkpoint is None:
            targets.append(self.paths.fastpitch_metrics)
        if self.config.hifigan.checkpoint is None:
            targets.append(self.paths.hifigan_metrics)
        targets.append(self.paths.report_page("audio"))
        if self.voice_is_exportable():
            targets.append(self.paths.export_file(VOICE_CARD))
        return targets

    # pretrained shortcut: a checkpoint path in the config stands in for the training rule's output,
    # so the DAG no longer needs that rule.
    def fastpitch_model(self) -> str:
        """The FastPitch model file later stages read: ``fastpitch.checkpoint`` or the trained one."""
        return self.config.fastpitch.checkpoint or self.paths.fastpitch_model

    def hifigan_model(self) -> str:
        """The base vocoder: ``hifigan.checkpoint`` or the trained one."""
        return self.config.hifigan.checkpoint or self.paths.hifigan_model

    def tacotron2_model(self) -> str:
        """The Tacotron 2 the durations come from: ``tacotron2.checkpoint`` or the trained one."""
        return self.config.tacotron2.checkpoint or self.paths.tacotron2_model

    def warm_start(self, section: str) -> dict[str, str]:
        """The ``init_from`` input of a training rule: ``{"init_from": <section>.init_from}`` when the config
        warm-starts that model (training starts from the file's weights), else ``{}``. A declared input, so
        a new or changed file reruns the training."""
        path = getattr(self.config, section).init_from
        return {"init_from": path} if path is not None else {}

    def inference_phrases(self) -> str:
        """The phrase file ``synthesize`` reads: ``inference.phrases``, or the val manifest (devset10)."""
        phrases = self.config.inference.phrases
        return self.shipped(phrases) if phrases else self.paths.manifest("val")

    def benchmark_phrases(self) -> str:
        return self.shipped(self.config.benchmark.phrases)

    def training_metrics(self) -> dict[str, str]:
        """``metrics.json`` of every training stage in the DAG (a pretrained model has none)."""
        metrics = {"train_aligner": self.paths.aligner_metrics} if self.config.durations.source == "aligner" else {}
        for acoustic in self.other_acoustic_model_kinds():
            if pretrained_file(self.config, acoustic) is None:
                metrics[acoustic.trained_by] = self._trained_file(acoustic, "metrics")
        if self.config.hifigan.checkpoint is None:
            metrics["train_hifigan"] = self.paths.hifigan_metrics
        if self.config.fastpitch.checkpoint is None:
            metrics["train_fastpitch"] = self.paths.fastpitch_metrics
        metrics["finetune_hifigan"] = self.paths.hifigan_finetuned_metrics
        for kind in self.other_vocoder_kinds():
            if pretrained_file(self.config, kind) is None:
                metrics[kind.trained_by] = self._trained_file(kind, "metrics")
        return metrics

    def benchmark_reference(self) -> str:
        """What synthesised sentences are compared with: eSpeak NG renders any text of the demo corpus;
        LJSpeech validation texts (``inference.phrases`` null) have their recordings."""
        if self.config.inference.phrases is None:
            return "manifest"
        return "espeak" if self.config.corpus.source == "demo" else "none"

    def hifigan_init(self) -> dict[str, str]:
        """What fine-tuning starts from: ``init``, ``hifigan.checkpoint`` or the base run's final
        checkpoint (with its discriminators); ``discriminators``, ``hifigan.discriminator_checkpoint``
        when the config names published ones."""
        inputs = {"init": self.config.hifigan.checkpoint or self.paths.hifigan_state}
        if self.config.hifigan.discriminator_checkpoint is not None:
            inputs["discriminators"] = self.config.hifigan.discriminator_checkpoint
        return inputs

    def vocoder_pitch(self) -> dict[str, str]:
        """The pitch features a HiFi-GAN with ``source: harmonic`` trains its pitch head and excitation on:
        ``{"pitch_features": <features index>}`` (passed as ``--pitch-features``), else ``{}``."""
        if self.config.hifigan.source == "none":
            return {}
        return {"pitch_features": self.paths.features_index}

    def durations_inputs(self) -> dict[str, str]:
        """The durations stage needs the trained aligner (or Tacotron 2) only when durations come from it."""
        inputs = {"features": self.paths.features_index, "corpus": self.paths.corpus_record}
        if self.config.durations.source == "aligner":
            inputs["aligner"] = self.paths.aligner_model
        if self.config.durations.source == "tacotron2":
            inputs["tacotron2"] = self.tacotron2_model()
        return inputs

    # Vocoders, by the table of kinds (config.model_kinds): HiFi-GAN is always trained; another kind is
    # in the DAG only when synthesis uses it or the config names a pretrained one (the benchmark and the
    # report then compare it with HiFi-GAN). `snakemake <its training rule>` trains it on request.
    def _trained_file(self, kind: VocoderKind | AcousticModelKind, name: str) -> str:
        """``model`` or ``metrics``: the file of that name its training rule writes (``Paths.<folder>_<name>``)."""
        return getattr(self.paths, f"{kind.folder}_{name}")

    def vocoder_model(self, kind: VocoderKind) -> str:
        """The model file of a vocoder later stages read: its pretrained file or the trained one."""
        return pretrained_file(self.config, kind) or self._trained_file(kind, "model")

    def other_vocoder_kinds(self) -> tuple[VocoderKind, ...]:
        """The vocoders of the DAG besides HiFi-GAN, in table order."""
        return tuple(kind for kind in vocoders_in_use(self.config) if kind.name != PIPELINE_VOCODER)

    def other_vocoders(self) -> dict[str, str]:
        """Inputs (the kind's name -> its model file) of every other vocoder of the DAG: what the benchmark
        and the report compare with HiFi-GAN."""
        return {kind.name: self.vocoder_model(kind) for kind in self.other_vocoder_kinds()}

    def other_vocoders_option(self) -> Callable[..., list[str]]:
        """A params function: ``["--vocoders", "<kind>=<model.pt>", ...]`` for the other vocoders of the DAG
        (:meth:`other_vocoders`, the rule's inputs), or ``[]`` when there is none."""
        names = list(self.other_vocoders())
        return lambda wildcards, input: ["--vocoders", *(f"{name}={input[name]}" for name in names)] if names else []

    # Acoustic models, by the same table: FastPitch is always trained; another kind (Tacotron 2) is in the
    # DAG when synthesis uses it, durations come from it or the config names a pretrained one (the
    # benchmark then measures it beside FastPitch).
    def acoustic_model(self, kind: AcousticModelKind) -> str:
        """The model file of an acoustic model later stages read: its pretrained file or the trained one."""
        return pretrained_file(self.config, kind) or self._trained_file(kind, "model")

    def synthesis_acoustic_model(self) -> str:
        """The model file of the acoustic model ``synthesize`` reads: ``inference.acoustic_model``'s kind."""
        return self.acoustic_model(acoustic_model_kind(self.config.inference.acoustic_model))

    def other_acoustic_model_kinds(self) -> tuple[AcousticModelKind, ...]:
        """The acoustic models of the DAG besides FastPitch, in table order."""
        return tuple(kind for kind in acoustic_models_in_use(self.config) if kind.name != PIPELINE_ACOUSTIC_MODEL)

    def other_acoustic_models(self) -> dict[str, str]:
        """Inputs (``acoustic_<kind>`` -> its model file) of every other acoustic model of the DAG."""
        return {f"acoustic_{kind.name}": self.acoustic_model(kind) for kind in self.other_acoustic_model_kinds()}

    def other_acoustic_models_option(self) -> Callable[..., list[str]]:
        """A params function: ``["--acoustic-models", "<kind>=<model.pt>", ...]`` for the other acoustic
        models of the DAG (:meth:`other_acoustic_models`, the rule's inputs), or ``[]`` when there is none."""
        names = [kind.name for kind in self.other_acoustic_model_kinds()]
        return lambda wildcards, input: (
            ["--acoustic-models", *(f"{name}={input['acoustic_' + name]}" for name in names)] if names else []
        )

    def synthesis_vocoder(self) -> str:
        """The model file of the vocoder ``synthesize`` reads: ``inference.vocoder``'s kind."""
        return self.vocoder_model(vocoder_kind(self.config.inference.vocoder))

    def voice_is_exportable(self) -> bool:
        """Whether ``export_voice`` can export the voice synthesis speaks with: the kind of ``inference.vocoder``
        has an export module (WaveGlow has none yet; the DAG then ends without the export)."""
        return vocoder_kind(self.config.inference.vocoder).export is not None

    def export_outputs(self) -> dict[str, str]:
        """What ``export_voice`` writes: ``<role>_<format>`` model files named by kind and format (the
        graphs of ``export.formats`` and the ``pytorch`` model files), ``verification.json`` and
        ``voice.json`` (written last)."""
        kinds = {"acoustic_model": PIPELINE_ACOUSTIC_MODEL, "vocoder": self.config.inference.vocoder}
        outputs = {
            f"{role}_{fmt}": self.paths.export_file(model_file_name(kind, fmt))
            for role, kind in kinds.items()
            for fmt in [*self.config.export.formats, PYTORCH]
        }
        outputs["verification"] = self.paths.export_file(VERIFICATION)
        outputs["voice"] = self.paths.export_file(VOICE_CARD)
        return outputs

    def durations_batch_size(self) -> int:
        """Utterances per forward pass of the durations stage (``tacotron2.durations_batch_size`` for
        Tacotron 2; the aligner's batch of 16 otherwise)."""
        return self.config.tacotron2.durations_batch_size if self.config.durations.source == "tacotron2" else 16

    def gpus(self, stage: str) -> int:
        """GPUs a stage asks for (``resources: gpu``); Snakemake caps it at ``--resources gpu=N``."""
        key = stage_table.stage(stage).gpus
        return 0 if key is None else int(stage_table.lookup(self.config, key))

    # tracking hooks (parent_run.py) and cluster checks (cluster.py), for the Snakefile's handlers
    def export_tracking_env(self) -> None:
        parent_run.export_tracking_env(self.config)

    def open_parent_run(self) -> None:
        parent_run.open_parent_run(self.config)

    def close_parent_run(self, status: str) -> None:
        """End the parent run (KILLED after a user's stop), then say how to resume if the user stopped."""
        status = self.stopping.end_status(status)
        parent_run.close_parent_run(self.config, self.paths, self.training_metrics(), status)
        self.stopping.finish()

    # a user's stop (SIGTERM or Ctrl-C to snakemake): the jobs checkpoint and stop (stopping.py)
    def export_stop_file(self) -> None:
        self.stopping.export_env()

    def watch_for_stop(self) -> None:
        self.stopping.arm()

    def threads(self, stage: str, default: int) -> int:
        """The threads of a rule's job: ``cluster.resources.<stage>.threads``, else the rule's ``default``."""
        return getattr(self.config.cluster.resources, stage).threads or default

    def job_resources(self, stage: str) -> dict[str, int]:
        """``mem_mb``, ``runtime`` (minutes) and ``cpus_per_task`` of a rule (``cluster.resources``)."""
        return cluster.job_resources(self.config, stage)

    def check_cluster_run(self, workflow: Any) -> None:
        cluster.check_cluster_run(self.config, workflow)
