"""Train the standalone aligner (RAD-TTS / FastPitch 1.1) whose MAS alignments give the durations.

Reads the train/val manifests and the mels of the features stage; writes ``model.pt`` (weights,
model config, step, symbol mode and table, prior scaling) and ``metrics.json``. Resumable: checkpoints go to
``--work-dir`` every ``aligner.checkpoint_every_n_steps`` steps, and a rerun continues from the
newest one (and in the same MLflow run) unless the config that shapes training changed.

Warm start (``aligner.init_from``, passed as ``--warm-start``): training starts from another aligner's
weights (checked against the section first, :mod:`tts_pipeline.training.aligner.warm_start`); the file's
SHA-256 is part of the resume hash and tags the MLflow run (``init_from_sha256``).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
    parser.add_argument(
        "--warm-start",
        type=Path,
        default=None,
        help="start from this aligner model file's weights, optimiser fresh; default aligner.init_from",
    )


def run(args: argparse.Namespace) -> None:
    from tts_pipeline.config import AlignerConfig, parse_section
    from tts_pipeline.models.aligner.data import AlignerDataset
    from tts_pipeline.models.aligner.model_file import save_aligner
    from tts_pipeline.training import aligner as trainer
    from tts_pipeline.training.aligner import warm_start
    from tts_pipeline.training.warm_start import file_digest, refuse

    payload = load_stage_section(args, STAGE)
    cfg: AlignerConfig = parse_section(AlignerConfig, payload["aligner"], "aligner")
    inputs = TextMelInputs.read(args, payload)
    init_from = args.warm_start if args.warm_start is not None or cfg.init_from is None else Path(cfg.init_from)
    init_digest = file_digest(init_from, warm_start.KEY) if init_from is not None else None

    def starting_weights(run: TrainingRun) -> dict[str, Any]:
        """The warm start's weights, checked against the config, unless the run resumes (its checkpoint wins)."""
        if init_from is None or run.io.checkpoint is not None:
            return {"init": None}
        init = warm_start.read_init(init_from)
        sizes = {"n_mels": inputs.n_mels, "symbol_set": inputs.symbol_set, "symbol_table": inputs.symbol_table}
        refuse(warm_start.KEY, warm_start.mismatches(init, section=cfg, **sizes))
        return {"init": init}

    def datasets(*splits: list) -> tuple[AlignerDataset, AlignerDataset]:
        return tuple(inputs.dataset(AlignerDataset, records, cfg.symbols) for records in splits)

    def fit(run: TrainingRun, train_set: AlignerDataset, val_set: AlignerDataset, init: Any) -> TrainingResult:
        return trainer.fit(cfg, train_set, val_set, run.io, **inputs.model_sizes(), init=init)

    def save(result: TrainingResult, run: TrainingRun) -> None:
        text = inputs.text_settings(cfg.symbols)
        save_aligner(
            args.model,
            result.model,
            step=result.step,
            epoch=result.epoch,
            **text,
            prior_scaling=cfg.prior_scaling,
            warm_started_from=str(init_from) if init_from is not None else None,
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
            resume_hash=trainer.resume_hash(
                payload["aligner"], inputs.n_mels, inputs.symbol_set, init_digest=init_digest
            ),
            datasets=datasets,
            fit=fit,
            save=save,
            tags={"symbols": cfg.symbols, **({"init_from_sha256": init_digest} if init_digest else {})},
            single_process=True,
            extra_metrics={
                "symbols": cfg.symbols,
                "symbol_set": inputs.symbol_set,
                "warm_started_from": str(init_from) if init_from is not None else None,
            },
            summary=summary,
            prepare=starting_weights,
        ),
    )
