"""The sequence every training stage runs, written once (:func:`run_training`); a stage supplies its
model's pieces (:class:`TrainingStage`).

1. Join the job: one process per GPU under torchrun, or one plain process (the aligner always trains
   in one); ranks other than 0 log warnings only.
2. Read the train and val manifests (an empty train manifest is an error) and build the datasets.
3. Open the stage's checkpoint folder under the hash of the settings that shape training and of the data
   it trains on (:func:`training_data_digest`), and find the checkpoint to resume from (rank 0 first:
   looking may set checkpoints of another hash aside). A killed job resumes; a job rerun because its
   inputs changed (new durations, another corpus) starts afresh instead of finishing the old training.
4. Open the stage's MLflow child run (the resumed run's own, when resuming) and train.
5. On rank 0: write the model file (and whatever else the stage writes), ``metrics.json``, log both to
   the run, and log the end-of-training line. Then every rank waits for the others.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tts_pipeline.config.pipeline import config_hash
from tts_pipeline.data.manifest_record import ManifestRecord
from tts_pipeline.stages.common import log_every_n_steps, log_outputs, tracked, training_summary

if TYPE_CHECKING:
    from tts_pipeline.config import LoopSettings
    from tts_pipeline.training.distributed import DistributedContext
    from tts_pipeline.training.loop import LoopIO

Records = list[ManifestRecord]


@dataclass(frozen=True)
class TrainingRun:
    """What the skeleton opened for one training run, as a stage's hooks receive it.

    Attributes:
        io: What every trainer's ``fit`` takes (:class:`~tts_pipeline.training.loop.LoopIO`): this
            process's place in the job, the stage's checkpoints and the one to resume from (or None), and
            ``tracking.log_every_n_steps``; its ``sink`` (the stage's tracking run) and ``run_id`` are set
            once that run is open.
        records: The manifests' records by split (``"train"``, ``"val"``).
    """

    io: LoopIO
    records: Mapping[str, Records]


@dataclass(frozen=True)
class TrainingStage:
    """One training stage's names, settings and model-specific pieces, for :func:`run_training`.

    A trainer's result has ``step``, ``epoch`` and ``metrics`` (what ``metrics.json`` holds).

    Attributes:
        name: The stage, as its module is named (``train_fastpitch``): the first word of its messages
            and of its summary line, which goes to that module's logger.
        section: Its model's config section (``fastpitch``); messages name ``<section>.gpus``.
        settings: That section, parsed: its GPUs (unless ``--gpus`` says otherwise) and how many
            checkpoints stay.
        resume_hash: Hash of the settings that shape training: checkpoints of another hash are not resumed.
        datasets: ``(train records, val records) -> (train set, val set)``; the val set may be None.
        fit: ``(run, train set, val set, **prepared) -> result``: trains (every rank).
        save: ``(result, run)``: writes the model file and any output besides ``metrics.json`` (rank 0).
        tags: Tracking tags besides ``device`` (and ``world_size`` for a distributed stage).
        tracked_as: The tracking run's stage name, when it is not ``name`` (fine-tuning).
        single_process: Train in one process on one device even under torchrun (no ``world_size`` tag).
        prepare: ``run -> keyword arguments for fit``, computed once the checkpoint is known and before
            the tracking run opens (fine-tuning's starting weights: a file that does not load fails the
            stage before it is tracked).
        extra_metrics: Written to ``metrics.json`` after the trainer's figures.
        tag_parameter_count: Also tag the tracking run with ``n_params``.
        summary_loss, summary_rate: The figures of the summary line (:func:`training_summary`).
        summary: The summary line, in place of :func:`training_summary`'s.
        data_files: The index files of ``--features-dir`` / ``--mels-dir`` the stage trains on, hashed
            into the resume hash (:func:`training_data_digest`). Only what the stage reads: a file that a
            later stage writes into the same folder (the durations, counted from the aligner's or
            Tacotron 2's attention) would otherwise make every rerun start afresh.
    """

    name: str
    section: str
    settings: LoopSettings
    resume_hash: str
    datasets: Callable[[Records, Records], tuple[Any, Any]]
    fit: Callable[..., Any]
    save: Callable[[Any, TrainingRun], None]
    tags: Mapping[str, str] = field(default_factory=dict)
    tracked_as: str | None = None
    single_process: bool = False
    prepare: Callable[[TrainingRun], Mapping[str, Any]] | None = None
    extra_metrics: Mapping[str, Any] = field(default_factory=dict)
    tag_parameter_count: bool = False
    summary_loss: str = "val_loss"
    summary_rate: str = "frames_per_s"
    summary: Callable[[Any], str] | None = None
    data_files: tuple[str, ...] = ("features.jsonl", "pitch_stats.json", "index.json")

    def summary_line(self, result: Any) -> str:
        """The line logged when training ends."""
        if self.summary is not None:
            return self.summary(result)
        return training_summary(
            self.name, result.step, result.epoch, result.metrics, loss=self.summary_loss, rate=self.summary_rate
        )


@dataclass(frozen=True)
class TextMelInputs:
    """What the stages that train on encoded text and the features' mels (the aligner, Tacotron 2) read
    besides their section: mel channels, symbol set and table, and the mels' folder.

    Attributes:
        n_mels: ``audio.n_mel_channels``.
        symbol_set: ``text.symbol_set``.
        symbol_table: That set's symbols (its size is the model's ``n_symbols``).
        mels_dir: ``<id>.npy`` mels under ``--features-dir``.
    """

    n_mels: int
    symbol_set: str
    symbol_table: list[str]
    mels_dir: Path

    @classmethod
    def read(cls, args: argparse.Namespace, payload: Mapping[str, Any]) -> TextMelInputs:
        """From the stage's config and its ``--features-dir``."""
        from tts_pipeline.data.feature_layout import MELS, FeatureLayout
        from tts_pipeline.text import get_symbols

        n_mels = int(payload["audio.n_mel_channels"])
        symbol_set = str(payload["text.symbol_set"])
        symbol_table = get_symbols(symbol_set)
        return cls(n_mels, symbol_set, symbol_table, FeatureLayout(args.features_dir).folder(MELS))

    def dataset(self, kind: Callable[..., Any], records: Records, symbols: str) -> Any:
        """A ``kind`` dataset (``AlignerDataset``, ``Tacotron2Dataset``) of ``records``, their text encoded as
        ``symbols`` of this set."""
        return kind(records, self.mels_dir, self.n_mels, symbols, self.symbol_set)

    def model_sizes(self) -> dict[str, int]:
        """The sizes the trainer's ``fit`` builds its model with (``n_symbols``, ``n_mels``)."""
        return {"n_symbols": len(self.symbol_table), "n_mels": self.n_mels}

    def text_settings(self, symbols: str) -> dict[str, Any]:
        """What the model file records to encode new text: ``symbols`` of this set, and its table."""
        return {"symbols": symbols, "symbol_set": self.symbol_set, "symbol_table": self.symbol_table}


def add_gpus_argument(parser: argparse.ArgumentParser, help_text: str) -> None:
    """``--gpus N``, which :func:`run_training` reads; not given (None), the section's ``gpus`` holds."""
    parser.add_argument("--gpus", type=int, default=None, help=help_text)


def run_training(args: argparse.Namespace, payload: dict[str, Any], stage: TrainingStage) -> None:
    """Train ``stage`` as the module docstring says, with the arguments every training stage takes
    (``--manifest-dir``, ``--work-dir``, ``--model``, ``--metrics``, ``--gpus``); ``payload`` is the config
    the stage read (its tracking params)."""
    from tts_pipeline.training.checkpoint import CheckpointManager
    from tts_pipeline.training.engine import find_resume_checkpoint
    from tts_pipeline.training.loop import LoopIO

    log_every = log_every_n_steps()
    with _session(stage, stage.settings.gpus if args.gpus is None else args.gpus) as context:
        if not context.is_main:
            # Every rank computes the same figures; one copy of the progress lines is enough.
            logging.getLogger("tts_pipeline").setLevel(logging.WARNING)
        records = _read_manifests(args, stage.name)
        train_set, val_set = stage.datasets(records["train"], records["val"])
        data = training_data_digest(args, stage.data_files)
        resume_hash = config_hash({"settings": stage.resume_hash, "data": data})
        manager = CheckpointManager(args.work_dir, resume_hash, keep=stage.settings.keep_checkpoints)
        checkpoint = find_resume_checkpoint(manager, context)
        run = TrainingRun(LoopIO(manager, context, checkpoint, log_every=log_every), records)
        prepared = stage.prepare(run) if stage.prepare is not None else {}
        with tracked(
            stage.tracked_as or stage.name,
            payload,
            dataset=args.manifest_dir.resolve().parent.name,
            manifest_dir=args.manifest_dir,
            tags=_tags(stage, context),
            run_id=checkpoint.run_id if checkpoint else None,
        ) as sink:
            run = replace(run, io=replace(run.io, sink=sink, run_id=sink.run_id))
            result = stage.fit(run, train_set, val_set, **prepared)
            if context.is_main:
                _write_outputs(args, stage, run, result)
        context.barrier()


# The index files the features stage writes last, each of which changes when the data under it does;
# the pitch statistics sit beside the features index a vocoder with a harmonic source reads its pitch by.
FEATURE_INDEX_FILES = ("features.jsonl", "pitch_stats.json")


def training_data_digest(args: argparse.Namespace, data_files: tuple[str, ...]) -> str:
    """SHA-256 over the train and val manifests of ``--manifest-dir``, the ``data_files`` of the folders
    the stage reads (``--features-dir``, ``--mels-dir``) and, with ``--pitch-features``, that index and
    the pitch statistics beside it: another corpus, split, features or durations give another digest, a
    rerun of the same data the same one."""
    import hashlib

    from tts_pipeline.data.manifest import manifest_path

    files = [manifest_path(args.manifest_dir, split) for split in ("train", "val")]
    for option in ("features_dir", "mels_dir"):
        folder = getattr(args, option, None)
        if folder is not None:
            files += [folder / name for name in data_files]
    pitch_features = getattr(args, "pitch_features", None)
    if pitch_features is not None:
        files += [Path(pitch_features).parent / name for name in FEATURE_INDEX_FILES]
    digest = hashlib.sha256()
    for path in files:
        if path.is_file():
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _session(stage: TrainingStage, gpus: int) -> contextlib.AbstractContextManager[Any]:
    """The processes the stage trains in: torchrun's (:func:`distributed_session`), or this one alone."""
    from tts_pipeline.training.distributed import DistributedContext, choose_device, distributed_session

    what = f"{stage.section}.gpus"
    if stage.single_process:
        return contextlib.nullcontext(DistributedContext(device=choose_device(gpus, what=what)))
    return distributed_session(gpus, what=what)


def _read_manifests(args: argparse.Namespace, name: str) -> dict[str, Records]:
    """The train and val records of ``--manifest-dir``; raises UserError when the train manifest is empty."""
    from tts_pipeline.data.manifest import manifest_path, read_manifest
    from tts_pipeline.errors import UserError

    records = {split: read_manifest(manifest_path(args.manifest_dir, split)) for split in ("train", "val")}
    if not records["train"]:
        raise UserError(f"{name}: the train manifest in {args.manifest_dir} lists no utterances")
    return records


def _tags(stage: TrainingStage, context: DistributedContext) -> dict[str, str]:
    tags = {"device": str(context.device)}
    if not stage.single_process:
        tags["world_size"] = str(context.world_size)
    return {**tags, **stage.tags}


def _write_outputs(args: argparse.Namespace, stage: TrainingStage, run: TrainingRun, result: Any) -> None:
    """Rank 0's end of training: the model file, ``metrics.json``, both logged to the run, the summary."""
    from tts_pipeline.files import write_json

    stage.save(result, run)
    write_json(args.metrics, {**result.metrics, **stage.extra_metrics})
    if stage.tag_parameter_count:
        run.io.sink.set_tags({"n_params": result.metrics["n_params"]})
    # the final val_* figures are on the curves already (logged by validation at the last step)
    log_outputs(run.io.sink, model=args.model, metrics=args.metrics)
    # Under the stage module's own logger, as the lines it logs itself.
    logging.getLogger(f"{__package__}.{stage.name}").info("%s", stage.summary_line(result))
