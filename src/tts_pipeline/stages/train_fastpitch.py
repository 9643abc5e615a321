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
from pathlib import Path
from typing import TYPE_CHECKING

from tts_pipeline.stages.common import add_stage_arguments, load_stage_section, training_summary
from tts_pipeline.stages.training_stage import TrainingRun, TrainingStage, add_gpus_argument, run_training

if TYPE_CHECKING:
    from tts_pipeline.training.loop import TrainingResult

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
    add_gpus_argument(parser, "GPUs (0 = the CPU); default fastpitch.gpus; torchrun starts one process per GPU")


def run(args: argparse.Namespace) -> None:
    from tts_pipeline.config import AudioConfig, FastPitchConfig, parse_section
    from tts_pipeline.data.feature_layout import FeatureLayout
    from tts_pipeline.models.fastpitch.data import FastPitchDataset, PitchStats, TextSettings
    from tts_pipeline.models.fastpitch.model_file import save_fastpitch
    from tts_pipeline.training import fastpitch as trainer

    payload = load_stage_section(args, STAGE)
    cfg: FastPitchConfig = parse_section(FastPitchConfig, payload["fastpitch"], "fastpitch")
    audio: AudioConfig = parse_section(AudioConfig, payload["audio"], "audio")
    features = FeatureLayout(args.features_dir)
    text = TextSettings.from_durations_index(features.durations_index, payload["text.cleaners"])
    pitch = PitchStats.read(features.pitch_stats)

    def datasets(*splits: list) -> list[FastPitchDataset | None]:
        n_mels, energy = audio.n_mel_channels, cfg.energy_conditioning
        return [
            FastPitchDataset(records, args.features_dir, pitch, n_mels, n_symbols=len(text.symbols), with_energy=energy)
            if records
            else None
            for records in splits
        ]

    def fit(run: TrainingRun, train_set: FastPitchDataset, val_set: FastPitchDataset | None) -> TrainingResult:
        frame_period_s = audio.hop_length / audio.sampling_rate
        return trainer.fit(cfg, train_set, val_set, run.io, text=text, pitch=pitch, frame_period_s=frame_period_s)

    def save(result: TrainingResult, run: TrainingRun) -> None:
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

    def summary(result: TrainingResult) -> str:
        line = training_summary(STAGE, result.step, result.epoch, result.metrics)
        return f"{line}; val mel loss {result.metrics.get('val_loss_mel')}"

    run_training(
        args,
        payload,
        TrainingStage(
            name=STAGE,
            section="fastpitch",
            settings=cfg,
            resume_hash=trainer.resume_hash(payload["fastpitch"], payload["audio"], text, pitch),
            datasets=datasets,
            fit=fit,
            save=save,
            tags={"optimizer": cfg.optimizer},
            tag_parameter_count=True,
            summary=summary,
        ),
    )
