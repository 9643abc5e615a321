"""Train the standalone aligner (RAD-TTS / FastPitch 1.1) whose MAS alignments give the durations.

Reads the train/val manifests and the mels of the features stage; writes ``model.pt`` (weights,
model config, step, symbol mode and table, prior scaling) and ``metrics.json``. Resumable: checkpoints go to
``--work-dir`` every ``aligner.checkpoint_every_n_steps`` steps, and a rerun continues from the
newest one (and in the same MLflow run) unless the config that shapes training changed.
"""

from __future__ import annotations

import argparse

from tts_pipeline.stages.common import add_stage_arguments, load_stage_section
from tts_pipeline.stages.training_stage import TrainingRun, TrainingStage, run_training

STAGE = "train_aligner"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_stage_arguments(parser, "--manifest-dir", "--features-dir", "--work-dir", "--model", "--metrics")
    parser.add_argument(
        "--gpus", type=int, default=None, help="GPUs to use (default: aligner.gpus); 0 = CPU, >0 = one CUDA device"
    )


def run(args: argparse.Namespace) -> None:
    from tts_pipeline.config import AlignerConfig, parse_section
    from tts_pipeline.data.feature_layout import MELS, FeatureLayout
    from tts_pipeline.models.aligner.data import AlignerDataset
    from tts_pipeline.models.aligner.model_file import save_aligner
    from tts_pipeline.text import get_symbols
    from tts_pipeline.training import aligner as trainer

    payload = load_stage_section(args, STAGE)
    cfg: AlignerConfig = parse_section(AlignerConfig, payload["aligner"], "aligner")
    n_mels = int(payload["audio.n_mel_channels"])
    symbol_set = str(payload["text.symbol_set"])
    symbol_table = get_symbols(symbol_set)
    mels_dir = FeatureLayout(args.features_dir).folder(MELS)

    def datasets(*splits: list) -> tuple[AlignerDataset, AlignerDataset]:
        return tuple(AlignerDataset(records, mels_dir, n_mels, cfg.symbols, symbol_set) for records in splits)

    def fit(run: TrainingRun, train_set: AlignerDataset, val_set: AlignerDataset) -> trainer.TrainingResult:
        options = run.fit_options()
        return trainer.fit(cfg, train_set, val_set, n_symbols=len(symbol_table), n_mels=n_mels, **options)

    def save(result: trainer.TrainingResult, run: TrainingRun) -> None:
        save_aligner(
            args.model,
            result.model,
            step=result.step,
            epoch=result.epoch,
            symbols=cfg.symbols,
            symbol_set=symbol_set,
            symbol_table=symbol_table,
            prior_scaling=cfg.prior_scaling,
        )

    def summary(result: trainer.TrainingResult) -> str:
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
            resume_hash=trainer.resume_hash(payload["aligner"], n_mels, symbol_set),
            datasets=datasets,
            fit=fit,
            save=save,
            tags={"symbols": cfg.symbols},
            single_process=True,
            extra_metrics={"symbols": cfg.symbols, "symbol_set": symbol_set},
            summary=summary,
        ),
    )
