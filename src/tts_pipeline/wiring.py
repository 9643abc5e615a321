"""What the Snakefile calls: the validated config, output paths, per-rule params and code hashes.

The workflow files hold no logic; everything here is plain Python and tested. A rule's ``params``
carry (1) the JSON of exactly the config it reads and (2) a hash of the package source files its
stage imports, so Snakemake reruns a stage when either changes, and nothing else.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from tts_pipeline import stage_table
from tts_pipeline.config import PipelineConfig, check_folders, parse_config
from tts_pipeline.data.feature_layout import FeatureLayout

PACKAGE = "tts_pipeline"

# Modules left out of every code hash: the stage table and this module are wiring, and what they hand
# a stage (its config slice, its paths) reaches its rule through ``params`` and files that Snakemake
# tracks itself; hashing them would rerun every stage when a row or a path helper is added. (Stages
# import the stage table to check their ``--section`` and, run by hand, to cut it from ``--config``.)
UNHASHED_MODULES = frozenset({f"{PACKAGE}.stage_table", f"{PACKAGE}.wiring"})

# --------------------------------------------------------------------------------------------------
# code hashes
# --------------------------------------------------------------------------------------------------


def _package_dir() -> Path:
    spec = importlib.util.find_spec(PACKAGE)
    assert spec is not None and spec.submodule_search_locations, f"{PACKAGE} is not importable"
    return Path(next(iter(spec.submodule_search_locations)))


def _module_file(module: str) -> Path | None:
    """The source file of a package module, found on disk without importing anything."""
    base = _package_dir().joinpath(*module.split(".")[1:])
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _package_imports(module: str, path: Path) -> set[str]:
    """Modules of this package imported (anywhere, also inside functions) by one source file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative import: resolve against this module's package
                base_parts = module.split(".")[: len(module.split(".")) - node.level + (1 if is_package else 0)]
                base = ".".join(base_parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            # "from pkg import name" may name a submodule or an attribute; keep both candidates.
            names = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            if name == PACKAGE or name.startswith(PACKAGE + "."):
                found.add(name)
    return found


@cache
def source_files(module: str) -> tuple[Path, ...]:
    """Every package source file ``module`` depends on: its import closure within the package,
    including each imported module's parent ``__init__`` files. Sorted, for a stable hash."""
    seen: dict[str, Path] = {}
    pending = [module]
    while pending:
        name = pending.pop()
        if name in seen or name in UNHASHED_MODULES:
            continue
        parts = name.split(".")
        parents = [".".join(parts[:i]) for i in range(1, len(parts))]
        path = _module_file(name)
        if path is None:  # an attribute imported with "from x import y", not a module
            seen[name] = Path()
            continue
        seen[name] = path
        pending.extend(parents)
        pending.extend(_package_imports(name, path))
    return tuple(sorted({p for p in seen.values() if p != Path()}))


def code_hash(stage: str) -> str:
    """SHA-256 (12 hex digits) of the sources a stage runs, keyed by path inside the package."""
    digest = hashlib.sha256()
    for path in source_files(stage_table.stage(stage).module):
        relative = path.as_posix().rsplit(f"/{PACKAGE}/", 1)[-1]
        digest.update(relative.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:12]


# --------------------------------------------------------------------------------------------------
# paths (DESIGN.md section 3)
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Paths:
    """Every path a rule reads or writes; rule files name them, they never build them."""

    config: PipelineConfig

    @property
    def experiment(self) -> Path:
        return self.config.experiment_dir

    @property
    def corpus_dir(self) -> Path:
        return Path(self.config.resources_dir) / self.config.corpus.name

    @property
    def corpus_record(self) -> str:
        """Written last by ``corpus``: where the corpus is and what it holds."""
        return str(self.corpus_dir / "corpus.json")

    @property
    def downloads(self) -> str:
        return str(Path(self.config.resources_dir) / "downloads")

    @property
    def data_dir(self) -> str:
        return str(self.experiment / "data")

    def manifest(self, split: str) -> str:
        from tts_pipeline.data.manifest import manifest_path

        return str(manifest_path(self.data_dir, split))

    @property
    def validation(self) -> str:
        return str(self.experiment / "data" / "validation.json")

    @property
    def resampled(self) -> str:
        return str(self.experiment / "data" / "resampled")

    # features (mels, pitch, durations); the per-utterance folders are not Snakemake outputs, so a
    # killed extraction keeps its finished files. The index files are the declared outputs.
    @property
    def features_dir(self) -> str:
        return str(self.experiment / "features")

    @property
    def features(self) -> FeatureLayout:
        return FeatureLayout(Path(self.features_dir))

    @property
    def pitch_stats(self) -> str:
        return str(self.features.pitch_stats)

    @property
    def features_index(self) -> str:
        """One line per utterance: id, split, n_frames (written last by ``features``)."""
        return str(self.features.features_index)

    @property
    def aligner_model(self) -> str:
        return str(self.experiment / "aligner" / "model.pt")

    @property
    def aligner_metrics(self) -> str:
        return str(self.experiment / "aligner" / "metrics.json")

    @property
    def durations_index(self) -> str:
        """Symbol table, per-utterance summary and alignment quality (written last by ``durations``)."""
        return str(self.features.durations_index)

    @property
    def hifigan_model(self) -> str:
        return str(self.experiment / "hifigan" / "model.pt")

    @property
    def hifigan_metrics(self) -> str:
        return str(self.experiment / "hifigan" / "metrics.json")

    @property
    def hifigan_state(self) -> str:
        """The final training checkpoint (generator, discriminators, optimisers): fine-tuning's start."""
        return str(self.experiment / "hifigan" / "training_state.pt")

    @property
    def fastpitch_model(self) -> str:
        return str(self.experiment / "fastpitch" / "model.pt")

    @property
    def fastpitch_metrics(self) -> str:
        return str(self.experiment / "fastpitch" / "metrics.json")

    @property
    def fastpitch_mels_dir(self) -> str:
        return str(self.experiment / "fastpitch_mels")

    @property
    def fastpitch_mels_index(self) -> str:
        """Written last by ``extract_fastpitch_mels``: count, frames, timing, model hash."""
        return str(self.experiment / "fastpitch_mels" / "index.json")

    @property
    def hifigan_finetuned_model(self) -> str:
        return str(self.experiment / "hifigan_finetuned" / "model.pt")

    @property
    def hifigan_finetuned_metrics(self) -> str:
        return str(self.experiment / "hifigan_finetuned" / "metrics.json")

    @property
    def inference_dir(self) -> str:
        return str(self.experiment / "inference")

    @property
    def inference_manifest(self) -> str:
        """Written last by ``synthesize``, beside its ``<name>.wav`` files."""
        return str(Path(self.inference_dir) / "manifest.jsonl")

    @property
    def benchmark_dir(self) -> str:
        return str(self.experiment / "benchmark")

    @property
    def benchmark_json(self) -> str:
        return str(Path(self.benchmark_dir) / "report.json")

    @property
    def benchmark_md(self) -> str:
        return str(Path(self.benchmark_dir) / "report.md")

    @property
    def html_report(self) -> str:
        """``snakemake --report`` writes it (the Makefile's demo target does, after the run)."""
        return str(self.experiment / "report.html")

    @property
    def report_dir(self) -> str:
        return str(self.experiment / "report")

    def report_page(self, name: str) -> str:
        """A page or figure of the HTML report (``report_pages`` writes them)."""
        return str(Path(self.report_dir) / name)

    # WaveGlow, the optional second vocoder (FastPitch 1.0's path)
    @property
    def waveglow_model(self) -> str:
        return str(self.experiment / "waveglow" / "model.pt")

    @property
    def waveglow_metrics(self) -> str:
        return str(self.experiment / "waveglow" / "metrics.json")

    @property
    def tacotron2_model(self) -> str:
        return str(self.experiment / "tacotron2" / "model.pt")

    @property
    def tacotron2_metrics(self) -> str:
        return str(self.experiment / "tacotron2" / "metrics.json")

    def work(self, stage: str) -> str:
        """Resumable state of a stage (checkpoints), outside its declared outputs."""
        return str(self.experiment / "work" / stage)

    def log(self, stage: str) -> str:
        return str(self.experiment / "logs" / f"{stage}.log")

    def benchmark(self, stage: str) -> str:
        return str(self.experiment / "benchmarks" / f"{stage}.tsv")


# --------------------------------------------------------------------------------------------------
# the object the Snakefile holds
# --------------------------------------------------------------------------------------------------


class Pipeline:
    """The validated config plus everything rules need from it."""

    def __init__(
        self, raw_config: dict[str, Any], source: str = "snakemake config", repository: str | Path | None = None
    ) -> None:
        self.config = parse_config(raw_config, source=source)
        check_folders(self.config, source=source)
        self.paths = Paths(self.config)
        self.repository = Path(repository) if repository is not None else None

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

    def inference_phrases(self) -> str:
        """The phrase file ``synthesize`` reads: ``inference.phrases``, or the val manifest (devset10)."""
        phrases = self.config.inference.phrases
        return self.shipped(phrases) if phrases else self.paths.manifest("val")

    def benchmark_phrases(self) -> str:
        return self.shipped(self.config.benchmark.phrases)

    def training_metrics(self) -> dict[str, str]:
        """``metrics.json`` of every training stage in the DAG (a pretrained model has none)."""
        metrics = {"train_aligner": self.paths.aligner_metrics} if self.config.durations.source == "aligner" else {}
        if self.config.durations.source == "tacotron2" and self.config.tacotron2.checkpoint is None:
            metrics["train_tacotron2"] = self.paths.tacotron2_metrics
        if self.config.hifigan.checkpoint is None:
            metrics["train_hifigan"] = self.paths.hifigan_metrics
        if self.config.fastpitch.checkpoint is None:
            metrics["train_fastpitch"] = self.paths.fastpitch_metrics
        metrics["finetune_hifigan"] = self.paths.hifigan_finetuned_metrics
        if self.uses_waveglow and self.config.waveglow.checkpoint is None:
            metrics["train_waveglow"] = self.paths.waveglow_metrics
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

    def durations_inputs(self) -> dict[str, str]:
        """The durations stage needs the trained aligner (or Tacotron 2) only when durations come from it."""
        inputs = {"features": self.paths.features_index, "corpus": self.paths.corpus_record}
        if self.config.durations.source == "aligner":
            inputs["aligner"] = self.paths.aligner_model
        if self.config.durations.source == "tacotron2":
            inputs["tacotron2"] = self.tacotron2_model()
        return inputs

    # WaveGlow: an optional vocoder, in the DAG only when synthesis uses it or the config names a
    # pretrained one (then the benchmark compares it with HiFi-GAN); `snakemake train_waveglow` trains
    # it on request whatever the config.
    @property
    def uses_waveglow(self) -> bool:
        return self.config.inference.vocoder == "waveglow" or self.config.waveglow.checkpoint is not None

    def waveglow_model(self) -> str:
        """The WaveGlow model file later stages read: ``waveglow.checkpoint`` or the trained one."""
        return self.config.waveglow.checkpoint or self.paths.waveglow_model

    def waveglow_inputs(self) -> dict[str, str]:
        """``{"waveglow": <model>}`` when WaveGlow is in the DAG, else nothing (benchmark, report)."""
        return {"waveglow": self.waveglow_model()} if self.uses_waveglow else {}

    def synthesis_vocoder(self) -> dict[str, str]:
        """The vocoder ``synthesize`` reads, under the input name of ``inference.vocoder``."""
        if self.config.inference.vocoder == "waveglow":
            return {"waveglow": self.waveglow_model()}
        return {"hifigan": self.paths.hifigan_finetuned_model}

    @staticmethod
    def vocoder_option() -> Callable[..., list[str]]:
        """A params function: ``["--hifigan", <file>]`` or ``["--waveglow", <file>]``, whichever input the
        rule has (:meth:`synthesis_vocoder`)."""
        return lambda wildcards, input: (
            ["--waveglow", input["waveglow"]] if "waveglow" in input.keys() else ["--hifigan", input["hifigan"]]
        )

    def durations_batch_size(self) -> int:
        """Utterances per forward pass of the durations stage (``tacotron2.durations_batch_size`` for
        Tacotron 2; the aligner's batch of 16 otherwise)."""
        return self.config.tacotron2.durations_batch_size if self.config.durations.source == "tacotron2" else 16

    def gpus(self, stage: str) -> int:
        """GPUs a stage asks for (``resources: gpu``); Snakemake caps it at ``--resources gpu=N``."""
        key = stage_table.stage(stage).gpus
        return 0 if key is None else int(stage_table.lookup(self.config, key))

    # tracking hooks: the parent run lives as long as one `snakemake` invocation
    def export_tracking_env(self) -> None:
        """Put the tracking settings into the environment every job inherits (no side effects)."""
        from tts_pipeline import tracking

        settings = tracking.TrackingSettings.from_config(self.config)
        if not settings.enabled:
            os.environ.pop(tracking.ENV_PARENT_RUN_ID, None)
        os.environ.update(settings.to_env())
        os.environ[tracking.ENV_LOG_EVERY_N_STEPS] = str(self.config.tracking.log_every_n_steps)
        os.environ[tracking.ENV_LOG_MODELS] = "1" if self.config.tracking.log_models else "0"

    def open_parent_run(self) -> None:
        from tts_pipeline import tracking

        tracking.open_parent_run(self.config)

    def close_parent_run(self, status: str) -> None:
        """End the parent run with the figures the outputs hold now, and each job's log on its run."""
        from tts_pipeline import tracking
        from tts_pipeline.run_summary import workflow_summary

        trainings = {name.removeprefix("train_"): path for name, path in self.training_metrics().items()}
        summary = workflow_summary(
            validation=self.paths.validation, trainings=trainings, benchmark=self.paths.benchmark_json
        )
        logs = {row.rule: self.paths.log(row.rule) for row in stage_table.STAGES}
        manifests = [path for path in map(self.paths.manifest, ("train", "val")) if Path(path).is_file()]
        dataset = (self.config.corpus.name, manifests)
        tracking.close_parent_run(status, summary=summary, job_logs=logs, dataset=dataset)

    # cluster: each job's resources and a tracking store jobs on other hosts can share (cluster.py)
    def job_resources(self, stage: str) -> dict[str, int]:
        """``mem_mb``, ``runtime`` (minutes) and ``cpus_per_task`` of a rule (``cluster.resources``)."""
        from tts_pipeline.cluster import job_resources

        return job_resources(self.config, stage)

    def check_cluster_run(self, workflow: Any) -> None:
        """Before any job of a cluster executor: refuse a SQLite MLflow store (``cluster.allow_sqlite``)
        and folder names the jobs' commands would mangle (``cluster.check_folder_names``)."""
        from tts_pipeline import tracking
        from tts_pipeline.cluster import check_folder_names, check_tracking_store, executor_name

        executor = executor_name(workflow)
        check_folder_names(self.config, executor)
        check_tracking_store(self.config, tracking.TrackingSettings.from_config(self.config).uri, executor)
