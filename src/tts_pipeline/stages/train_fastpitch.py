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

Warm start (``fastpitch.init_from``, passed as ``--warm-start``): training starts from the weights of
that file (a model file of this pipeline or NVIDIA's checkpoint) instead of a random init, after
checking it against the config and the durations' symbol table; the optimiser and the step counter
start fresh, ``fastpitch.freeze`` keeps parts as the file has them, and pitch is normalised with this
corpus's statistics, which the model file records. The file's SHA-256 is part of the resume hash and
tags the MLflow run (``init_from_sha256``).

Speakers: when the manifests name speakers, ``pitch_stats.json`` lists them with their pitch statistics
(the features stage). Their names, sorted, are the speaker ids ``0 .. k - 1``; each batch carries its
utterances' ids, each utterance's pitch is normalised with its own speaker's mean and std (NVIDIA uses
one corpus-wide pair; see :mod:`tts_pipeline.models.fastpitch.data`), and the model file records the
speakers in id order with their statistics. ``fastpitch.n_speakers`` must fit the corpus: at least ``k``
for ``k > 1`` speakers, 1 for a single speaker.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tts_pipeline.errors import UserError
from tts_pipeline.stages.common import add_stage_arguments, load_stage_section, training_summary
from tts_pipeline.stages.training_stage import TrainingRun, TrainingStage, add_gpus_argument, run_training

if TYPE_CHECKING:
    from tts_pipeline.config import AudioConfig, FastPitchConfig
    from tts_pipeline.models.fastpitch.data import Speakers, TextSettings
    from tts_pipeline.training.fastpitch.warm_start import FastPitchInit
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
    parser.add_argument(
        "--warm-start",
        type=Path,
        default=None,
        help="start from this FastPitch's weights (model file or NVIDIA checkpoint); default fastpitch.init_from",
    )


def run(args: argparse.Namespace) -> None:
    from tts_pipeline.config import AudioConfig, FastPitchConfig, parse_section
    from tts_pipeline.data.feature_layout import FeatureLayout
    from tts_pipeline.models.fastpitch.data import FastPitchDataset, PitchStats, Speakers, TextSettings
    from tts_pipeline.models.fastpitch.model_file import save_fastpitch
    from tts_pipeline.training import fastpitch as trainer
    from tts_pipeline.training.warm_start import file_digest

    payload = load_stage_section(args, STAGE)
    cfg: FastPitchConfig = parse_section(FastPitchConfig, payload["fastpitch"], "fastpitch")
    audio: AudioConfig = parse_section(AudioConfig, payload["audio"], "audio")
    features = FeatureLayout(args.features_dir)
    text = TextSettings.from_durations_index(features.durations_index, payload["text.cleaners"])
    pitch = PitchStats.read(features.pitch_stats)
    speakers = Speakers.read(features.pitch_stats)
    check_speaker_count(cfg.n_speakers, speakers, features.pitch_stats)
    init_from = args.warm_start if args.warm_start is not None or cfg.init_from is None else Path(cfg.init_from)
    init_digest = file_digest(init_from, "fastpitch.init_from") if init_from is not None else None

    def datasets(*splits: list) -> list[FastPitchDataset | None]:
        n_mels, energy = audio.n_mel_channels, cfg.energy_conditioning
        return [
            FastPitchDataset(
                records,
                args.features_dir,
                pitch,
                n_mels,
                n_symbols=len(text.symbols),
                with_energy=energy,
                speakers=speakers,
            )
            if records
            else None
            for records in splits
        ]

    def starting_weights(run: TrainingRun) -> dict[str, Any]:
        """The warm start's weights, checked against the config, unless the run resumes (its checkpoint wins)."""
        if init_from is None or run.io.checkpoint is not None:
            return {"init": None}
        return {"init": _warm_start(init_from, cfg, audio, text, features.durations_index, speakers)}

    def fit(
        run: TrainingRun, train_set: FastPitchDataset, val_set: FastPitchDataset | None, init: Any
    ) -> TrainingResult:
        frame_period_s = audio.hop_length / audio.sampling_rate
        return trainer.fit(
            cfg,
            train_set,
            val_set,
            run.io,
            text=text,
            pitch=pitch,
            frame_period_s=frame_period_s,
            init=init,
            speakers=speakers,
        )

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
            warm_started_from=result.metrics.get("warm_started_from"),
            speakers=speakers,
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
            resume_hash=trainer.resume_hash(
                payload["fastpitch"], payload["audio"], text, pitch, init_digest=init_digest, speakers=speakers
            ),
            datasets=datasets,
            fit=fit,
            save=save,
            tags={"optimizer": cfg.optimizer, **({"init_from_sha256": init_digest} if init_digest else {})},
            tag_parameter_count=True,
            summary=summary,
            prepare=starting_weights,
            data_files=("features.jsonl", "durations.json", "pitch_stats.json"),
        ),
    )


def check_speaker_count(n_speakers: int, speakers: Speakers | None, pitch_stats: Path) -> None:
    """UserError naming ``fastpitch.n_speakers`` when it does not fit the corpus's speakers (those of
    ``pitch_stats``, None for a single-speaker corpus): ``k > 1`` speakers need ``n_speakers >= k`` (an
    embedding row per speaker id), a single speaker ``n_speakers: 1`` (the other rows would never train)."""
    names = speakers.names if speakers is not None else ()
    if len(names) > 1 and n_speakers < len(names):
        raise UserError(
            f"fastpitch.n_speakers is {n_speakers}, but the corpus has {len(names)} speakers ({', '.join(names)}; "
            f"{pitch_stats}); set fastpitch.n_speakers: {len(names)} (one speaker-embedding row per speaker)"
        )
    if len(names) <= 1 and n_speakers > 1:
        found = f"one speaker ({names[0]})" if names else "a single speaker (its manifests name none)"
        raise UserError(
            f"fastpitch.n_speakers is {n_speakers}, but the corpus has {found} ({pitch_stats}); set "
            "fastpitch.n_speakers: 1, or train on a corpus whose metadata.csv names its speakers (4th field)"
        )


def _warm_start(
    path: Path,
    cfg: FastPitchConfig,
    audio: AudioConfig,
    text: TextSettings,
    durations_index: Path,
    speakers: Speakers | None,
) -> FastPitchInit:
    """Read the file a warm start begins from and check it against the section, the audio settings, the
    durations' symbol table and the corpus's speakers; UserError naming ``fastpitch.init_from`` when it
    does not fit."""
    from tts_pipeline.config import TextConfig
    from tts_pipeline.training.fastpitch import warm_start
    from tts_pipeline.training.warm_start import refuse

    # A file that records no text settings (NVIDIA's) takes them from what this training reads.
    text_section = TextConfig(cleaners=text.cleaners, **({"symbol_set": text.symbol_set} if text.symbol_set else {}))
    init = warm_start.read_init(path, text=text_section, audio=audio)
    found = warm_start.mismatches(
        init,
        section=cfg,
        audio=audio,
        cleaners=text.cleaners,
        symbols=text.symbols,
        symbol_set=text.symbol_set,
        symbols_origin=str(durations_index),
        speakers=speakers.names if speakers is not None else (),
    )
    refuse("fastpitch.init_from", found)
    return init
