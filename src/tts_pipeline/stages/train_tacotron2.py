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

from tts_pipeline.stages.common import add_stage_arguments, load_stage_section
from tts_pipeline.stages.training_stage import TrainingRun, TrainingStage, run_training

STAGE = "train_tacotron2"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_stage_arguments(parser, "--manifest-dir", "--features-dir", "--work-dir", "--model", "--metrics")
    parser.add_argument(
        "--gpus",
        type=int,
        default=None,
        help="GPUs (0 = the CPU); default tacotron2.gpus; torchrun starts one process per GPU",
    )


def run(args: argparse.Namespace) -> None:
    from tts_pipeline.config import Tacotron2SectionConfig, parse_section
    from tts_pipeline.data.feature_layout import MELS, FeatureLayout
    from tts_pipeline.models.tacotron2 import save_tacotron2
    from tts_pipeline.models.tacotron2.data import Tacotron2Dataset
    from tts_pipeline.text import get_symbols
    from tts_pipeline.training import tacotron2 as trainer

    payload = load_stage_section(args, STAGE)
    cfg: Tacotron2SectionConfig = parse_section(Tacotron2SectionConfig, payload["tacotron2"], "tacotron2")
    n_mels = int(payload["audio.n_mel_channels"])
    symbol_set = str(payload["text.symbol_set"])
    symbol_table = get_symbols(symbol_set)
    mels_dir = FeatureLayout(args.features_dir).folder(MELS)

    def datasets(*splits: list) -> list[Tacotron2Dataset | None]:
        return [
            Tacotron2Dataset(records, mels_dir, n_mels, cfg.symbols, symbol_set) if records else None
            for records in splits
        ]

    def fit(run: TrainingRun, train_set: Tacotron2Dataset, val_set: Tacotron2Dataset | None) -> trainer.TrainingResult:
        options = run.fit_options()
        return trainer.fit(cfg, train_set, val_set, n_symbols=len(symbol_table), n_mels=n_mels, **options)

    def save(result: trainer.TrainingResult, run: TrainingRun) -> None:
        text = {"symbols": cfg.symbols, "symbol_set": symbol_set, "symbol_table": symbol_table}
        save_tacotron2(args.model, result.model, step=result.step, epoch=result.epoch, extra=text)

    run_training(
        args,
        payload,
        TrainingStage(
            name=STAGE,
            section="tacotron2",
            settings=cfg,
            resume_hash=trainer.resume_hash(payload["tacotron2"], n_mels, symbol_set),
            datasets=datasets,
            fit=fit,
            save=save,
            tags={"symbols": cfg.symbols},
            extra_metrics={"symbols": cfg.symbols, "symbol_set": symbol_set},
            tag_parameter_count=True,
        ),
    )
