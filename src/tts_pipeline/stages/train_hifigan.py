"""Train the HiFi-GAN vocoder on audio segments (NVIDIA's recipe), one process per GPU or on the CPU.

Reads the train/val manifests; writes ``model.pt`` (generator weights with weight norm, generator
config, step, audio section; :func:`tts_pipeline.models.hifigan.model_file.load_generator` rebuilds it) and
``metrics.json``. Launch with ``torchrun --standalone --nproc_per_node=N -m tts_pipeline train_hifigan
...`` for N GPUs (``tts-pipeline lease-gpus --count N --stage -- train_hifigan ...`` does that inside a
GPU lease), or as a plain command on the CPU. Resumable: checkpoints go to ``--work-dir`` every
``hifigan.checkpoint_every_n_epochs`` epochs and when training stops; a rerun continues from the
newest one (in the same MLflow run) unless the settings that shape training changed.

``--state`` also writes a copy of the final training checkpoint (generator, discriminators, optimisers):
what fine-tuning starts from, kept beside the model so that it is a declared output.

Fine-tuning mode: ``--init-from`` (a checkpoint file or folder of this stage, or a model file) starts
from those weights with the learning rate multiplied once by ``hifigan.fine_tune_lr_factor`` and
trains for ``hifigan.fine_tune_epochs``; ``--mels-dir`` makes the generator input the ``<id>.npy`` mels
of that folder instead of mels computed from the audio.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import Any

from tts_pipeline.stages.common import (
    add_stage_arguments,
    load_stage_section,
    log_every_n_steps,
    log_outputs,
    tracked,
    training_summary,
)

log = logging.getLogger(__name__)

STAGE = "train_hifigan"
FINE_TUNE_STAGE = "finetune_hifigan"  # the same command with --init-from, tracked under its rule's name


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_stage_arguments(parser, "--manifest-dir", "--work-dir", "--model", "--metrics")
    parser.add_argument(
        "--gpus",
        type=int,
        default=None,
        help="0 = train on the CPU; default hifigan.gpus (processes come from torchrun, one per GPU)",
    )
    parser.add_argument(
        "--init-from",
        type=Path,
        default=None,
        help="fine-tune: start from this checkpoint (file or folder) or model file, lr x fine_tune_lr_factor",
    )
    parser.add_argument(
        "--init-discriminators",
        type=lambda text: Path(text) if text else None,
        default=None,
        help="fine-tune: MPD and MSD from this NVIDIA (hifigan_discrim_checkpoint_*.pt) or jik876 (do_*) file, "
        "with --init-from its generator file ('' = none)",
    )
    parser.add_argument(
        "--mels-dir", type=Path, default=None, help="fine-tune: generator input mels <id>.npy from this folder"
    )
    parser.add_argument(
        "--state", type=Path, default=None, help="also write the final checkpoint here (what fine-tuning starts from)"
    )


def run(args: argparse.Namespace) -> None:
    from tts_pipeline.config import AudioConfig, HiFiGANConfig, parse_section
    from tts_pipeline.config.rules import check_hifigan_fits_audio, require
    from tts_pipeline.data.manifest import manifest_path, read_manifest
    from tts_pipeline.files import copy_file, write_json
    from tts_pipeline.models.hifigan.data import AudioSegments, MelAudioSegments
    from tts_pipeline.models.hifigan.model_file import save_generator
    from tts_pipeline.training import hifigan as trainer
    from tts_pipeline.training.checkpoint import CheckpointManager
    from tts_pipeline.training.distributed import distributed_session
    from tts_pipeline.training.engine import find_resume_checkpoint

    payload = load_stage_section(args, "train_hifigan")
    cfg: HiFiGANConfig = parse_section(HiFiGANConfig, payload["hifigan"], "hifigan")
    audio: AudioConfig = parse_section(AudioConfig, payload["audio"], "audio")
    # the full config checks this too; a stage run by hand with its own JSON must not skip it
    require(check_hifigan_fits_audio, cfg, audio)
    if args.init_from is not None:
        cfg = cfg.model_copy(update={"epochs": cfg.fine_tune_epochs})
    log_every = log_every_n_steps()
    gpus = cfg.gpus if args.gpus is None else args.gpus

    with distributed_session(gpus, what="hifigan.gpus") as context:
        if not context.is_main:
            # Every rank computes the same figures; one copy of the progress lines is enough.
            logging.getLogger("tts_pipeline").setLevel(logging.WARNING)
        train_records = read_manifest(manifest_path(args.manifest_dir, "train"))
        val_records = read_manifest(manifest_path(args.manifest_dir, "val"))
        if not train_records:
            raise _error(f"train_hifigan: the train manifest in {args.manifest_dir} lists no utterances")

        def segments(records: list[dict[str, Any]], **options: Any) -> Any:
            if args.mels_dir is not None:
                return MelAudioSegments(records, audio, cfg.segment_size, args.mels_dir, **options)
            return AudioSegments(records, audio, cfg.segment_size, **options)

        train_set = segments(train_records)
        val_set = (
            segments(val_records, fixed_segments_seed=cfg.seed, repeats=cfg.validation_repeats) if val_records else None
        )
        manager = CheckpointManager(
            args.work_dir,
            trainer.resume_hash(payload["hifigan"], payload["audio"], init_from=args.init_from, mels_dir=args.mels_dir),
            keep=cfg.keep_checkpoints,
        )
        checkpoint = find_resume_checkpoint(manager, context)
        init = None
        if args.init_from is not None and checkpoint is None:
            # the parsed section, defaults filled in: a hand-written --section may name only a few keys
            sizes = cfg.model_dump(mode="json")
            init = trainer.load_init(args.init_from, args.init_discriminators, audio=audio, section=sizes)

        tags = {
            "device": str(context.device),
            "world_size": str(context.world_size),
            "mode": "fine-tune" if args.init_from or args.mels_dir else "base",
        }
        with tracked(
            FINE_TUNE_STAGE if args.init_from is not None else STAGE,
            payload,
            dataset=args.manifest_dir.resolve().parent.name,
            manifest_dir=args.manifest_dir,
            tags=tags,
            run_id=checkpoint.run_id if checkpoint else None,
        ) as run_log:
            clips = []
            if context.is_main and run_log.active and cfg.n_samples > 0:
                clips = trainer.load_sample_clips(val_records, audio, cfg.n_samples, args.mels_dir)
            result = trainer.fit(
                cfg,
                audio,
                train_set,
                val_set,
                manager=manager,
                context=context,
                checkpoint=checkpoint,
                init=init,
                sink=run_log,
                run_id=run_log.run_id,
                log_every=log_every,
                sample_clips=clips,
            )
            if context.is_main:
                save_generator(
                    args.model,
                    result.generator,
                    audio,
                    step=result.step,
                    epoch=result.epoch,
                    learning_rate=result.learning_rate,
                    fine_tuned_from=result.metrics.get("fine_tuned_from"),
                )
                if args.state is not None:
                    copy_file(manager.paths()[-1], args.state)
                write_json(args.metrics, result.metrics)
                # the final val_* figures are on the curves already (logged by validation at this step)
                log_outputs(run_log, model=args.model, metrics=args.metrics)
                log.info("%s", training_summary(STAGE, result.step, result.epoch, result.metrics, loss="val_loss_mel"))
        context.barrier()



def _error(message: str) -> Exception:
    from tts_pipeline.errors import UserError

    return UserError(message)
