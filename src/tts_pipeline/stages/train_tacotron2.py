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
import logging

from tts_pipeline.stages.common import (
    add_stage_arguments,
    load_stage_section,
    log_every_n_steps,
    log_outputs,
    tracked,
    training_summary,
)

log = logging.getLogger(__name__)

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
    from tts_pipeline.data.manifest import manifest_path, read_manifest
    from tts_pipeline.errors import UserError
    from tts_pipeline.files import write_json
    from tts_pipeline.models.tacotron2 import save_tacotron2
    from tts_pipeline.models.tacotron2.data import Tacotron2Dataset
    from tts_pipeline.text import get_symbols
    from tts_pipeline.training import tacotron2 as trainer
    from tts_pipeline.training.checkpoint import CheckpointManager
    from tts_pipeline.training.distributed import distributed_session
    from tts_pipeline.training.engine import find_resume_checkpoint

    payload = load_stage_section(args, STAGE)
    cfg: Tacotron2SectionConfig = parse_section(Tacotron2SectionConfig, payload["tacotron2"], "tacotron2")
    n_mels = int(payload["audio.n_mel_channels"])
    symbol_set = str(payload["text.symbol_set"])
    symbol_table = get_symbols(symbol_set)
    gpus = cfg.gpus if args.gpus is None else args.gpus
    mels_dir = FeatureLayout(args.features_dir).folder(MELS)

    with distributed_session(gpus, what="tacotron2.gpus") as context:
        if not context.is_main:
            logging.getLogger("tts_pipeline").setLevel(logging.WARNING)
        splits = {split: read_manifest(manifest_path(args.manifest_dir, split)) for split in ("train", "val")}
        if not splits["train"]:
            raise UserError(f"{STAGE}: the train manifest in {args.manifest_dir} lists no utterances")
        datasets = {
            split: Tacotron2Dataset(records, mels_dir, n_mels, cfg.symbols, symbol_set)
            for split, records in splits.items()
            if records
        }
        manager = CheckpointManager(
            args.work_dir, trainer.resume_hash(payload["tacotron2"], n_mels, symbol_set), keep=cfg.keep_checkpoints
        )
        checkpoint = find_resume_checkpoint(manager, context)
        tags = {"device": str(context.device), "world_size": str(context.world_size), "symbols": cfg.symbols}
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
                n_symbols=len(symbol_table),
                n_mels=n_mels,
                manager=manager,
                context=context,
                checkpoint=checkpoint,
                sink=run_log,
                run_id=run_log.run_id,
                log_every=log_every_n_steps(),
            )
            if context.is_main:
                text = {"symbols": cfg.symbols, "symbol_set": symbol_set, "symbol_table": symbol_table}
                save_tacotron2(args.model, result.model, step=result.step, epoch=result.epoch, extra=text)
                write_json(args.metrics, {**result.metrics, "symbols": cfg.symbols, "symbol_set": symbol_set})
                run_log.set_tags({"n_params": result.metrics["n_params"]})
                log_outputs(run_log, model=args.model, metrics=args.metrics)
                log.info("%s", training_summary(STAGE, result.step, result.epoch, result.metrics))
        context.barrier()
