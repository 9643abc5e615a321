"""Train the standalone aligner (RAD-TTS / FastPitch 1.1) whose MAS alignments give the durations.

Reads the train/val manifests and the mels of the features stage; writes ``model.pt`` (weights,
model config, step, symbol mode and table, prior scaling) and ``metrics.json``. Resumable: checkpoints go to
``--work-dir`` every ``aligner.checkpoint_every_n_steps`` steps, and a rerun continues from the
newest one (and in the same MLflow run) unless the config that shapes training changed.
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
)

log = logging.getLogger(__name__)

STAGE = "train_aligner"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_stage_arguments(parser, "--manifest-dir", "--features-dir", "--work-dir", "--model", "--metrics")
    parser.add_argument(
        "--gpus", type=int, default=None, help="GPUs to use (default: aligner.gpus); 0 = CPU, >0 = one CUDA device"
    )


def run(args: argparse.Namespace) -> None:
    from tts_pipeline.config import AlignerConfig, parse_section
    from tts_pipeline.data.feature_layout import MELS, FeatureLayout
    from tts_pipeline.data.manifest import manifest_path, read_manifest
    from tts_pipeline.files import write_json
    from tts_pipeline.models.aligner.data import AlignerDataset
    from tts_pipeline.models.aligner.model_file import save_aligner
    from tts_pipeline.text import get_symbols
    from tts_pipeline.training.aligner import choose_device, fit, resume_hash
    from tts_pipeline.training.checkpoint import CheckpointManager

    payload = load_stage_section(args, "train_aligner")
    cfg: AlignerConfig = parse_section(AlignerConfig, payload["aligner"], "aligner")
    n_mels = int(payload["audio.n_mel_channels"])
    symbol_set = str(payload["text.symbol_set"])
    log_every = log_every_n_steps()
    symbols = cfg.symbols
    symbol_table = get_symbols(symbol_set)

    mels_dir = FeatureLayout(args.features_dir).folder(MELS)
    train_set, val_set = (
        AlignerDataset(read_manifest(manifest_path(args.manifest_dir, split)), mels_dir, n_mels, symbols, symbol_set)
        for split in ("train", "val")
    )
    if not len(train_set):
        raise _no_data(args.manifest_dir)

    manager = CheckpointManager(
        args.work_dir, resume_hash(payload["aligner"], n_mels, symbol_set), keep=cfg.keep_checkpoints
    )
    checkpoint = manager.latest()
    device = choose_device(cfg.gpus if args.gpus is None else args.gpus)
    with tracked(
        STAGE,
        payload,
        dataset=args.manifest_dir.resolve().parent.name,
        manifest_dir=args.manifest_dir,
        tags={"symbols": symbols, "device": str(device)},
        run_id=checkpoint.run_id if checkpoint else None,
    ) as run_log:
        result = fit(
            cfg,
            train_set,
            val_set,
            n_symbols=len(symbol_table),
            n_mels=n_mels,
            manager=manager,
            checkpoint=checkpoint,
            device=device,
            metrics=run_log,
            run_id=run_log.run_id,
            log_every=log_every,
        )
        save_aligner(
            args.model,
            result.model,
            step=result.step,
            epoch=result.epoch,
            symbols=symbols,
            symbol_set=symbol_set,
            symbol_table=symbol_table,
            prior_scaling=cfg.prior_scaling,
        )
        metrics = {**result.metrics, "symbols": symbols, "symbol_set": symbol_set}
        write_json(args.metrics, metrics)
        # the final val_* figures are on the curves already (logged at the last epoch's step)
        final = {key: value for key, value in metrics.items() if key.startswith("val_")}
        log_outputs(run_log, model=args.model, metrics=args.metrics)
        log.info("train_aligner: step %s, epoch %s, %s", result.step, result.epoch, final)


def _no_data(manifest_dir: Path) -> Exception:
    from tts_pipeline.errors import UserError

    return UserError(f"train_aligner: the train manifest in {manifest_dir} lists no utterances")
