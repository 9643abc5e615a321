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

Warm start (``hifigan.init_from``, passed as ``--warm-start``; base training only): training starts from
that generator's weights (and the discriminators of a trainer checkpoint) instead of a random init,
after checking its audio settings and shape against the config, with fresh optimisers at
``hifigan.learning_rate``, fresh schedulers and a fresh step counter, for ``hifigan.epochs``. The file's
SHA-256 is part of the resume hash and tags the MLflow run (``init_from_sha256``).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tts_pipeline.stages.common import add_stage_arguments, load_stage_section
from tts_pipeline.stages.training_stage import TrainingRun, TrainingStage, add_gpus_argument, run_training

if TYPE_CHECKING:
    from tts_pipeline.config import AudioConfig, HiFiGANConfig
    from tts_pipeline.data.manifest_record import ManifestRecord
    from tts_pipeline.training.hifigan import InitWeights
    from tts_pipeline.training.loop import TrainingResult

STAGE = "train_hifigan"
FINE_TUNE_STAGE = "finetune_hifigan"  # the same command with --init-from, tracked under its rule's name


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_stage_arguments(parser, "--manifest-dir", "--work-dir", "--model", "--metrics")
    add_gpus_argument(parser, "0 = train on the CPU; default hifigan.gpus (processes come from torchrun, one per GPU)")
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
        "--warm-start",
        type=Path,
        default=None,
        help="base training: start from this generator's weights, optimisers fresh; default hifigan.init_from",
    )
    parser.add_argument(
        "--state", type=Path, default=None, help="also write the final checkpoint here (what fine-tuning starts from)"
    )
    parser.add_argument(
        "--pitch-features",
        type=Path,
        default=None,
        help="hifigan.source harmonic: the features index; the pitch head and excitation train on its pitch/",
    )


def run(args: argparse.Namespace) -> None:
    from tts_pipeline.config import AudioConfig, HiFiGANConfig, parse_section
    from tts_pipeline.config.rules import check_hifigan_fits_audio, require
    from tts_pipeline.errors import UserError
    from tts_pipeline.files import copy_file
    from tts_pipeline.models.hifigan.data import AudioSegments, MelAudioSegments
    from tts_pipeline.models.hifigan.model_file import save_generator
    from tts_pipeline.training import hifigan as trainer
    from tts_pipeline.training.warm_start import file_digest

    # Base training's slice of the config leaves the fine-tuning settings out (changing them must not
    # rerun it); fine-tuning reads its own rule's slice, which has them.
    payload = load_stage_section(args, FINE_TUNE_STAGE if args.init_from is not None else STAGE)
    cfg: HiFiGANConfig = parse_section(HiFiGANConfig, payload["hifigan"], "hifigan")
    audio: AudioConfig = parse_section(AudioConfig, payload["audio"], "audio")
    # the full config checks this too; a stage run by hand with its own JSON must not skip it
    require(check_hifigan_fits_audio, cfg, audio)
    if args.init_from is not None:
        if args.warm_start is not None:
            raise UserError("--warm-start starts base training; fine-tuning (--init-from) starts from its own file")
        cfg = cfg.model_copy(update={"epochs": cfg.fine_tune_epochs})
    warm_from = args.warm_start
    if warm_from is None and args.init_from is None and cfg.init_from is not None:
        warm_from = Path(cfg.init_from)  # fine-tuning continues a base run, which made any warm start its own
    warm_digest = file_digest(warm_from, "hifigan.init_from") if warm_from is not None else None

    pitch_dir = _pitch_dir(args.pitch_features, cfg)

    def segments(records: list[ManifestRecord], **options: Any) -> Any:
        if args.mels_dir is not None:
            return MelAudioSegments(records, audio, cfg.segment_size, args.mels_dir, pitch_dir=pitch_dir, **options)
        return AudioSegments(records, audio, cfg.segment_size, pitch_dir=pitch_dir, **options)

    def datasets(train: list[ManifestRecord], val: list[ManifestRecord]) -> tuple[Any, Any]:
        train_set = segments(train)
        return train_set, segments(val, fixed_segments_seed=cfg.seed, repeats=cfg.validation_repeats) if val else None

    def starting_weights(run: TrainingRun) -> dict[str, Any]:
        """Fine-tuning's or a warm start's starting weights, unless the run resumes (its checkpoint wins)."""
        if run.io.checkpoint is not None:
            return {"init": None, "warm_start": None}
        if warm_from is not None:
            return {"init": None, "warm_start": _warm_start(warm_from, cfg, audio)}
        if args.init_from is None:
            return {"init": None, "warm_start": None}
        # the parsed section, defaults filled in: a hand-written --section may name only a few keys
        sizes = cfg.model_dump(mode="json")
        init = trainer.load_init(args.init_from, args.init_discriminators, audio=audio, section=sizes)
        return {"init": init, "warm_start": None}

    def fit(run: TrainingRun, train_set: Any, val_set: Any, init: Any, warm_start: Any) -> TrainingResult:
        clips = []
        if run.io.context.is_main and run.io.sink.active and cfg.n_samples > 0:
            clips = trainer.load_sample_clips(run.records["val"], audio, cfg.n_samples, args.mels_dir)
        return trainer.fit(cfg, audio, train_set, val_set, run.io, init=init, warm_start=warm_start, sample_clips=clips)

    def save(result: TrainingResult, run: TrainingRun) -> None:
        save_generator(
            args.model,
            result.model,
            audio,
            step=result.step,
            epoch=result.epoch,
            learning_rate=result.learning_rate,
            fine_tuned_from=result.metrics.get("fine_tuned_from"),
            warm_started_from=result.metrics.get("warm_started_from"),
        )
        if args.state is not None:
            copy_file(run.io.manager.paths()[-1], args.state)

    run_training(
        args,
        payload,
        TrainingStage(
            name=STAGE,
            section="hifigan",
            settings=cfg,
            resume_hash=trainer.resume_hash(
                payload["hifigan"],
                payload["audio"],
                init_from=args.init_from,
                mels_dir=args.mels_dir,
                init_digest=warm_digest,
            ),
            datasets=datasets,
            fit=fit,
            save=save,
            tags=_tags(args, warm_digest),
            tracked_as=FINE_TUNE_STAGE if args.init_from is not None else None,
            prepare=starting_weights,
            summary_loss="val_loss_mel",
        ),
    )


def _pitch_dir(features_index: Path | None, cfg: HiFiGANConfig) -> Path | None:
    """The pitch folder beside ``features_index``; UserError when a harmonic source has none (or a
    generator without a source is given one)."""
    from tts_pipeline.data.feature_layout import PITCH, FeatureLayout
    from tts_pipeline.errors import UserError

    if cfg.source == "none":
        if features_index is not None:
            raise UserError("--pitch-features: only a generator with hifigan.source: harmonic reads pitch")
        return None
    if features_index is None:
        raise UserError("hifigan.source: harmonic trains on the pitch features: pass --pitch-features <features index>")
    folder = FeatureLayout(features_index.parent).folder(PITCH)
    if not folder.is_dir():
        raise UserError(f"--pitch-features: no pitch folder {folder} beside {features_index}")
    return folder


def _tags(args: argparse.Namespace, warm_digest: str | None) -> dict[str, str]:
    """The run's ``mode`` (base, warm-start or fine-tune) and, for a warm start, its file's SHA-256."""
    if args.init_from or args.mels_dir:
        return {"mode": "fine-tune"}
    if warm_digest is None:
        return {"mode": "base"}
    return {"mode": "warm-start", "init_from_sha256": warm_digest}


def _warm_start(path: Path, cfg: HiFiGANConfig, audio: AudioConfig) -> InitWeights:
    """Read the generator a warm start begins from and check it against the config; UserError naming
    ``hifigan.init_from`` when it does not fit."""
    from tts_pipeline.training.hifigan import warm_start
    from tts_pipeline.training.warm_start import refuse

    init = warm_start.read_init(path, audio=audio, section=cfg)
    refuse(warm_start.KEY, warm_start.mismatches(init, section=cfg, audio=audio))
    return init
