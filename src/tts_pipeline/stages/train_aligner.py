"""Train the standalone aligner (RAD-TTS / FastPitch 1.1) whose MAS alignments give the durations.

Reads the train/val manifests and the mels of the features stage; writes ``model.pt`` (weights,
model config, step, symbol mode and table, prior scaling) and ``metrics.json``. Resumable: checkpoints go to
``--work-dir`` every ``aligner.checkpoint_every_n_steps`` steps, and a rerun continues from the
newest one (and in the same MLflow run) unless the config that shapes training changed.
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

STAGE = "train_aligner"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_stage_arguments(parser, "--manifest-dir", "--features-dir", "--work-dir", "--model", "--metrics")
    add_gpus_argument(parser, "GPUs to use (default: aligner.gpus); 0 = CPU, >0 = one CUDA device")


def run(args: argparse.Namespace) -> None:
    from tts_pipeline.config import AlignerConfig, parse_section
    from tts_pipeline.models.aligner.data import AlignerDataset
    from tts_pipeline.models.aligner.model_file import save_aligner
    from tts_pipeline.training import aligner as trainer

    payload = load_stage_section(args, STAGE)
    cfg: AlignerConfig = parse_section(AlignerConfig, payload["aligner"], "aligner")
    inputs = TextMelInputs.read(args, payload)

    def datasets(*splits: list) -> tuple[AlignerDataset, AlignerDataset]:
        return tuple(inputs.dataset(AlignerDataset, records, cfg.symbols) for records in splits)

    def fit(run: TrainingRun, train_set: AlignerDataset, val_set: AlignerDataset) -> TrainingResult:
        return trainer.fit(cfg, train_set, val_set, run.io, **inputs.model_sizes())

    def save(result: TrainingResult, run: TrainingRun) -> None:
        text = inputs.text_settings(cfg.symbols)
        save_aligner(
            args.model, result.model, step=result.step, epoch=result.epoch, **text, prior_scaling=cfg.prior_scaling
        )

    def summary(result: TrainingResult) -> str:
        # the final val_* figures are on the curves already (logged at the last epoch's step)
        final = {key: value for key, value in result.metrics.items() if key.startswith("val_")}
        return f"{STAGE}: step {result.step}, epoch {result.epoch}, {final}"

    run_training(
        args,
        payload,
        TrainingStage(
            name=STAGE,
            section="aligner",
            settings=cfg,
            resume_hash=trainer.resume_hash(payload["aligner"], inputs.n_mels, inputs.symbol_set),
            datasets=datasets,
            fit=fit,
            save=save,
            tags={"symbols": cfg.symbols},
            single_process=True,
            extra_metrics={"symbols": cfg.symbols, "symbol_set": inputs.symbol_set},
            summary=summary,
        ),
    )
