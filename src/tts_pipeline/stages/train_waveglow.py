"""Train the WaveGlow vocoder on audio segments (NVIDIA's ``train.py -m WaveGlow``), one process per GPU or
on the CPU.

Reads the train/val manifests; writes ``model.pt`` (weights with weight norm, the network's config,
step, epoch and audio section; :func:`tts_pipeline.models.waveglow.model_file.load_waveglow` rebuilds it)
and ``metrics.json``. Launch with ``torchrun --standalone --nproc_per_node=N -m tts_pipeline train_waveglow
...`` for N GPUs (``tts-pipeline lease-gpus --count N --stage -- train-waveglow ...`` does that inside a
GPU lease), or as a plain command on the CPU. Resumable: checkpoints go to ``--work-dir`` every
``waveglow.checkpoint_every_n_epochs`` epochs and when training stops; a rerun continues from the newest
one (in the same MLflow run) unless the settings that shape training changed.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from tts_pipeline.stages.common import add_stage_arguments, load_stage_section
from tts_pipeline.stages.training_stage import TrainingRun, TrainingStage, add_gpus_argument, run_training

if TYPE_CHECKING:
    from tts_pipeline.training.loop import TrainingResult

STAGE = "train_waveglow"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_stage_arguments(parser, "--manifest-dir", "--work-dir", "--model", "--metrics")
    add_gpus_argument(parser, "0 = train on the CPU; default waveglow.gpus (processes come from torchrun, one per GPU)")


def run(args: argparse.Namespace) -> None:
    from tts_pipeline.config import AudioConfig, WaveGlowSection, parse_section
    from tts_pipeline.config.rules import require
    from tts_pipeline.config.waveglow_section import check_waveglow_fits_audio
    from tts_pipeline.models.hifigan.data import AudioSegments
    from tts_pipeline.models.waveglow.model_file import save_waveglow
    from tts_pipeline.training import waveglow as trainer

    payload = load_stage_section(args, STAGE)
    cfg: WaveGlowSection = parse_section(WaveGlowSection, payload["waveglow"], "waveglow")
    audio: AudioConfig = parse_section(AudioConfig, payload["audio"], "audio")
    # the full config checks this only when WaveGlow is in the DAG; a stage run by hand must not skip it
    require(check_waveglow_fits_audio, cfg, audio)

    def datasets(train: list, val: list) -> tuple[AudioSegments, AudioSegments | None]:
        train_set = AudioSegments(train, audio, cfg.segment_size)
        return train_set, AudioSegments(val, audio, cfg.segment_size, fixed_segments_seed=cfg.seed) if val else None

    def fit(run: TrainingRun, train_set: AudioSegments, val_set: AudioSegments | None) -> TrainingResult:
        return trainer.fit(cfg, audio, train_set, val_set, run.io)

    def save(result: TrainingResult, run: TrainingRun) -> None:
        save_waveglow(args.model, result.model, step=result.step, epoch=result.epoch, audio=audio)

    run_training(
        args,
        payload,
        TrainingStage(
            name=STAGE,
            section="waveglow",
            settings=cfg,
            resume_hash=trainer.resume_hash(payload["waveglow"], payload["audio"]),
            datasets=datasets,
            fit=fit,
            save=save,
            summary_rate="samples_per_s",
        ),
    )
