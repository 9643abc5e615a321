"""Train NVIDIA's Tacotron 2 on the features stage's mels (FastPitch 1.0's source of durations), one
process per GPU or on the CPU.

Reads the train/val manifests (their cleaned text, encoded as ``tacotron2.symbols`` of
``text.symbol_set``: the symbols FastPitch trains on) and ``<features-dir>/mels/<id>.npy``. Writes
``model.pt`` (weights, model config, step, epoch, and the text settings: ``symbols``, ``symbol_set``,
``symbol_table``; :func:`tts_pipeline.models.tacotron2.load_tacotron2` rebuilds it) and
``metrics.json`` (train and validation losses at the start and the end, frames/s, parameter count).

Launch with ``torchrun --standalone --nproc_per_node=N -m tts_pipeline train_tacotron2 ...`` for N GPUs
(``tts-pipeline lease-gpus --count N --stage -- train-tacotron2 ...`` does that inside a GPU lease), or
as a plain command on the CPU. Resumable: checkpoints go to ``--work-dir`` every
``tacotron2.checkpoint_every_n_epochs`` epochs and when training stops; a rerun continues from the
newest one (in the same MLflow run) unless the settings that shape training changed.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from tts_pipeline.stages.common import add_stage_arguments, load_stage_section
from tts_pipeline.stages.training_stage import (
    TextMelInputs,
    TrainingRun,
    TrainingStage,
    add_gpus_argument,
    run_training,
)

if TYPE_CHECKING:
    from tts_pipeline.training.loop import TrainingResult

STAGE = "train_tacotron2"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_stage_arguments(parser, "--manifest-dir", "--features-dir", "--work-dir", "--model", "--metrics")
    add_gpus_argument(parser, "GPUs (0 = the CPU); default tacotron2.gpus; torchrun starts one process per GPU")


def run(args: argparse.Namespace) -> None:
    from tts_pipeline.config import Tacotron2SectionConfig, parse_section
    from tts_pipeline.models.tacotron2 import save_tacotron2
    from tts_pipeline.models.tacotron2.data import Tacotron2Dataset
    from tts_pipeline.training import tacotron2 as trainer

    payload = load_stage_section(args, STAGE)
    cfg: Tacotron2SectionConfig = parse_section(Tacotron2SectionConfig, payload["tacotron2"], "tacotron2")
    inputs = TextMelInputs.read(args, payload)

    def datasets(*splits: list) -> list[Tacotron2Dataset | None]:
        return [inputs.dataset(Tacotron2Dataset, records, cfg.symbols) if records else None for records in splits]

    def fit(run: TrainingRun, train_set: Tacotron2Dataset, val_set: Tacotron2Dataset | None) -> TrainingResult:
        return trainer.fit(cfg, train_set, val_set, run.io, **inputs.model_sizes())

    def save(result: TrainingResult, run: TrainingRun) -> None:
        text = inputs.text_settings(cfg.symbols)
        save_tacotron2(args.model, result.model, step=result.step, epoch=result.epoch, extra=text)

    run_training(
        args,
        payload,
        TrainingStage(
            name=STAGE,
            section="tacotron2",
            settings=cfg,
            resume_hash=trainer.resume_hash(payload["tacotron2"], inputs.n_mels, inputs.symbol_set),
            datasets=datasets,
            fit=fit,
            save=save,
            tags={"symbols": cfg.symbols},
            extra_metrics={"symbols": cfg.symbols, "symbol_set": inputs.symbol_set},
            tag_parameter_count=True,
        ),
    )
