"""Teacher-forced FastPitch mels for HiFi-GAN fine-tuning (reference section 4), one per utterance.

Loads the FastPitch model file in eval mode (no dropout) and runs its training forward with the ground
truth durations, per-token pitch and energy (and, for a model of named speakers, each utterance's
speaker id and its speaker's pitch normalisation) at pace 1 on every utterance of the train, val and test
manifests, in batches of ``fastpitch.extract_batch_size``. Each output ``<out-dir>/<id>.npy`` is float32
``(n_mels, T)`` cropped to the utterance's length, and ``T`` must equal the frame count of
``<features-dir>/mels/<id>.npy`` (the durations sum to it), so HiFi-GAN pairs it with the audio
exactly as it pairs the ground-truth mel.

Sharded: under ``torchrun`` each rank takes its share of the utterances (every ``world``-th) on its
GPU; on the CPU one process uses ``--threads`` threads. Resumable: ``<out-dir>/model.json`` records the
hash of the model file that the arrays in the folder come from (written before any array); a rerun
with the same model keeps every array of the right shape and computes the rest, a different model
starts the folder afresh. ``--index`` is written last (count, frames, hours of audio, wall time,
seconds per hour of audio, and the teacher-forced validation mel MSE against the ground truth).
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from tts_pipeline.stages.common import add_stage_arguments, load_stage_section, tracked

log = logging.getLogger(__name__)

STAGE = "extract_fastpitch_mels"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_stage_arguments(parser, "--manifest-dir")
    parser.add_argument("--model", type=Path, required=True, help="the FastPitch model.pt")
    parser.add_argument(
        "--features-dir", type=Path, required=True, help="features folder: mels/, durations/, symbols/, symbol_pitch/"
    )
    parser.add_argument("--out-dir", type=Path, required=True, help="where <id>.npy go (R/fastpitch_mels)")
    parser.add_argument("--index", type=Path, required=True, help="index.json to write last")
    parser.add_argument(
        "--gpus", type=int, default=None, help="0 = the CPU; default fastpitch.gpus (processes come from torchrun)"
    )
    parser.add_argument("--threads", type=int, default=0, help="CPU threads of this process; 0 = torch's default")
    parser.add_argument("--workers", type=int, default=0, help="data-loader worker processes per process")


def run(args: argparse.Namespace) -> None:
    import torch

    from tts_pipeline.config import AudioConfig, TextConfig, parse_section
    from tts_pipeline.data.download import sha256_of
    from tts_pipeline.errors import UserError
    from tts_pipeline.features.fastpitch_mels import extract_sharded, mels_index, prepare_out_dir
    from tts_pipeline.features.fastpitch_teacher import load_teacher, read_split_records, teacher_forced_dataset
    from tts_pipeline.files import write_json
    from tts_pipeline.training.distributed import distributed_session

    payload = load_stage_section(args, "extract_fastpitch_mels")
    batch_size = int(payload["fastpitch.extract_batch_size"])
    if batch_size < 1:
        raise UserError(f"fastpitch.extract_batch_size: expected >= 1, got {batch_size}")
    gpus = int(payload["fastpitch.gpus"]) if args.gpus is None else args.gpus
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    # The sections describe a foreign checkpoint (NVIDIA's records no text or audio settings).
    audio = parse_section(AudioConfig, payload["audio"], "audio")
    text = parse_section(TextConfig, payload["text"], "text")
    model, info = load_teacher(args.model, args.features_dir, text=text, audio=audio)
    records, splits = read_split_records(args.manifest_dir)
    dataset = teacher_forced_dataset(records, args.features_dir, info, args.model)
    model_hash = sha256_of(args.model)

    with distributed_session(gpus, what="fastpitch.gpus") as context:
        if context.is_main:
            args.index.unlink(missing_ok=True)  # the index marks a finished run; this one is not yet
            prepare_out_dir(args.out_dir, model_hash, args.model, set(dataset.ids))
        context.barrier()
        model = model.to(context.device).eval()
        with tracked(STAGE, payload, dataset=args.manifest_dir.resolve().parent.name) as run_log:
            totals = extract_sharded(model, dataset, splits, context, args.out_dir, batch_size, args.workers)
            if context.is_main:
                index = mels_index(
                    totals,
                    model_path=args.model,
                    model_hash=model_hash,
                    info=info,
                    dataset=dataset,
                    splits=splits,
                    world_size=context.world_size,
                    device=context.device,
                    batch_size=batch_size,
                )
                write_json(args.index, index)
                run_log.log_metrics(
                    {key: float(value) for key, value in index.items() if isinstance(value, int | float)}
                )
                run_log.log_artifact(args.index)
                log.info(
                    "%s: %d mels (%d computed, %d kept) in %.1f s on %s x %d, val mel MSE %s",
                    STAGE,
                    len(dataset),
                    totals.n_computed,
                    totals.n_reused,
                    totals.seconds,
                    context.device,
                    context.world_size,
                    "n/a" if index["val_mel_mse"] is None else f"{index['val_mel_mse']:.4f}",
                )
        context.barrier()
