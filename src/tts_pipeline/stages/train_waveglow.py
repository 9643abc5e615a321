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

STAGE = "train_waveglow"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_stage_arguments(parser, "--manifest-dir", "--work-dir", "--model", "--metrics")
    parser.add_argument(
        "--gpus",
        type=int,
        default=None,
        help="0 = train on the CPU; default waveglow.gpus (processes come from torchrun, one per GPU)",
    )


def run(args: argparse.Namespace) -> None:
    from tts_pipeline.config import AudioConfig, WaveGlowSection, parse_section
    from tts_pipeline.config.rules import require
    from tts_pipeline.config.waveglow_section import check_waveglow_fits_audio
    from tts_pipeline.data.manifest import manifest_path, read_manifest
    from tts_pipeline.errors import UserError
    from tts_pipeline.files import write_json
    from tts_pipeline.models.hifigan.data import AudioSegments
    from tts_pipeline.models.waveglow.model_file import save_waveglow
    from tts_pipeline.training import waveglow as trainer
    from tts_pipeline.training.checkpoint import CheckpointManager
    from tts_pipeline.training.distributed import distributed_session
    from tts_pipeline.training.engine import find_resume_checkpoint

    payload = load_stage_section(args, STAGE)
    cfg: WaveGlowSection = parse_section(WaveGlowSection, payload["waveglow"], "waveglow")
    audio: AudioConfig = parse_section(AudioConfig, payload["audio"], "audio")
    # the full config checks this only when WaveGlow is in the DAG; a stage run by hand must not skip it
    require(check_waveglow_fits_audio, cfg, audio)
    gpus = cfg.gpus if args.gpus is None else args.gpus

    with distributed_session(gpus, what="waveglow.gpus") as context:
        if not context.is_main:
            logging.getLogger("tts_pipeline").setLevel(logging.WARNING)
        train_records = read_manifest(manifest_path(args.manifest_dir, "train"))
        val_records = read_manifest(manifest_path(args.manifest_dir, "val"))
        if not train_records:
            raise UserError(f"train_waveglow: the train manifest in {args.manifest_dir} lists no utterances")
        train_set = AudioSegments(train_records, audio, cfg.segment_size)
        val_set = None
        if val_records:
            val_set = AudioSegments(val_records, audio, cfg.segment_size, fixed_segments_seed=cfg.seed)
        manager = CheckpointManager(
            args.work_dir, trainer.resume_hash(payload["waveglow"], payload["audio"]), keep=cfg.keep_checkpoints
        )
        checkpoint = find_resume_checkpoint(manager, context)
        tags = {"device": str(context.device), "world_size": str(context.world_size)}
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
                audio,
                train_set,
                val_set,
                manager=manager,
                context=context,
                checkpoint=checkpoint,
                sink=run_log,
                run_id=run_log.run_id,
                log_every=log_every_n_steps(),
            )
            if context.is_main:
                save_waveglow(args.model, result.model, step=result.step, epoch=result.epoch, audio=audio)
                write_json(args.metrics, result.metrics)
                log_outputs(run_log, model=args.model, metrics=args.metrics)
                log.info("%s", training_summary(STAGE, result.step, result.epoch, result.metrics, rate="samples_per_s"))
        context.barrier()
