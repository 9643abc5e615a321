"""Train FastPitch on the features and durations (NVIDIA's recipe), one process per GPU or on the CPU.

Reads the train/val manifests and, under ``--features-dir``, the mels, per-symbol durations, symbols and
pitch, ``pitch_stats.json`` and ``durations.json`` (the symbol table). Writes ``model.pt`` (weights,
model config, step, the symbol table and the text settings that encode new text, pitch statistics,
audio section; :func:`tts_pipeline.models.fastpitch.model_file.load_fastpitch` rebuilds it) and ``metrics.json``
(train and validation losses at the start and the end, frames/s, parameter count, device).

Launch with ``torchrun --standalone --nproc_per_node=N -m tts_pipeline train_fastpitch ...`` for N GPUs
(``tts-pipeline lease-gpus --count N --stage -- train_fastpitch ...`` does that inside a GPU lease), or
as a plain command on the CPU. Resumable: checkpoints go to ``--work-dir`` every
``fastpitch.checkpoint_every_n_epochs`` epochs and when training stops; a rerun continues from the
newest one (in the same MLflow run) unless the settings that shape training changed.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from tts_pipeline.stages.common import (
    add_stage_arguments,
    load_stage_section,
    log_every_n_steps,
    log_outputs,
    tracked,
    training_summary,
)

log = logging.getLogger(__name__)

STAGE = "train_fastpitch"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_stage_arguments(parser, "--manifest-dir", "--model", "--metrics")
    parser.add_argument(
        "--features-dir",
        type=Path,
        required=True,
        help="features folder: mels/, durations/, symbols/, symbol_pitch/, pitch_stats.json, durations.json",
    )
    parser.add_argument(
        "--work-dir",
        type=Path,
        required=True,
        help="resumable checkpoints, outside the outputs (R/work/train_fastpitch)",
    )
    parser.add_argument(
        "--gpus",
        type=int,
        default=None,
        help="GPUs (0 = the CPU); default fastpitch.gpus; torchrun starts one process per GPU",
    )


def run(args: argparse.Namespace) -> None:
    from tts_pipeline.config import AudioConfig, FastPitchConfig, parse_section
    from tts_pipeline.data.feature_layout import FeatureLayout
    from tts_pipeline.data.manifest import manifest_path, read_manifest
    from tts_pipeline.errors import UserError
    from tts_pipeline.files import write_json
    from tts_pipeline.models.fastpitch.data import FastPitchDataset, PitchStats, TextSettings
    from tts_pipeline.models.fastpitch.model_file import save_fastpitch
    from tts_pipeline.training import fastpitch as trainer
    from tts_pipeline.training.checkpoint import CheckpointManager
    from tts_pipeline.training.distributed import distributed_session
    from tts_pipeline.training.engine import find_resume_checkpoint

    payload = load_stage_section(args, "train_fastpitch")
    cfg: FastPitchConfig = parse_section(FastPitchConfig, payload["fastpitch"], "fastpitch")
    audio: AudioConfig = parse_section(AudioConfig, payload["audio"], "audio")
    features = FeatureLayout(args.features_dir)
    text = TextSettings.from_durations_index(features.durations_index, payload["text.cleaners"])
    pitch = PitchStats.read(features.pitch_stats)
    gpus = cfg.gpus if args.gpus is None else args.gpus

    with distributed_session(gpus, what="fastpitch.gpus") as context:
        if not context.is_main:
            # Every rank computes the same figures; one copy of the progress lines is enough.
            logging.getLogger("tts_pipeline").setLevel(logging.WARNING)
        splits = {split: read_manifest(manifest_path(args.manifest_dir, split)) for split in ("train", "val")}
        if not splits["train"]:
            raise UserError(f"{STAGE}: the train manifest in {args.manifest_dir} lists no utterances")
        datasets = {
            split: FastPitchDataset(
                records,
                args.features_dir,
                pitch,
                audio.n_mel_channels,
                n_symbols=len(text.symbols),
                with_energy=cfg.energy_conditioning,
            )
            for split, records in splits.items()
            if records
        }
        manager = CheckpointManager(
            args.work_dir,
            trainer.resume_hash(payload["fastpitch"], payload["audio"], text, pitch),
            keep=cfg.keep_checkpoints,
        )
        checkpoint = find_resume_checkpoint(manager, context)
        tags = {"device": str(context.device), "world_size": str(context.world_size), "optimizer": cfg.optimizer}
        with tracked(
            STAGE,
            payload,
            dataset=args.manifest_dir.resolve().parent.name,
            manifest_dir=args.manifest_dir,
            tags=tags,
            run_id=checkpoint.run_id if checkpoint else None,
        ) as run_log:
            result = trainer.fit(
                cfg,
                datasets["train"],
                datasets.get("val"),
                text=text,
                pitch=pitch,
                frame_period_s=audio.hop_length / audio.sampling_rate,
                manager=manager,
                context=context,
                checkpoint=checkpoint,
                sink=run_log,
                run_id=run_log.run_id,
                log_every=log_every_n_steps(),
            )
            if context.is_main:
                save_fastpitch(
                    args.model,
                    result.model,
                    step=result.step,
                    epoch=result.epoch,
                    learning_rate=result.learning_rate,
                    text=text,
                    pitch=pitch,
                    audio=audio,
                )
                write_json(args.metrics, result.metrics)
                # the final val_* figures are on the curves already (logged by validation at this step)
                run_log.set_tags({"n_params": result.metrics["n_params"]})
                log_outputs(run_log, model=args.model, metrics=args.metrics)
                summary = training_summary(STAGE, result.step, result.epoch, result.metrics)
                log.info("%s; val mel loss %s", summary, result.metrics.get("val_loss_mel"))
        context.barrier()
