"""Teacher-forced FastPitch mels for HiFi-GAN fine-tuning (reference section 4), one per utterance.

Loads the FastPitch model file in eval mode (no dropout) and runs its training forward with the ground
truth durations, per-token pitch and energy at pace 1 on every utterance of the train, val and test
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
import time
from pathlib import Path

from tts_pipeline.stages.common import add_stage_arguments, load_stage_section, tracked

log = logging.getLogger(__name__)

STAGE = "extract_fastpitch_mels"
SPLITS = ("train", "val", "test")


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

    from tts_pipeline.data.download import sha256_of
    from tts_pipeline.data.feature_layout import FeatureLayout
    from tts_pipeline.data.manifest import manifest_path, read_manifest
    from tts_pipeline.errors import UserError
    from tts_pipeline.features.fastpitch_mels import extract_mels, mel_mse, prepare_out_dir
    from tts_pipeline.files import write_json
    from tts_pipeline.models.fastpitch.data import FastPitchDataset, TextSettings
    from tts_pipeline.models.fastpitch.model_file import load_fastpitch
    from tts_pipeline.training.distributed import distributed_session

    payload = load_stage_section(args, "extract_fastpitch_mels")
    batch_size = int(payload["fastpitch.extract_batch_size"])
    if batch_size < 1:
        raise UserError(f"fastpitch.extract_batch_size: expected >= 1, got {batch_size}")
    gpus = int(payload["fastpitch.gpus"]) if args.gpus is None else args.gpus
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    from tts_pipeline.config import AudioConfig, TextConfig, parse_section

    # The sections describe a foreign checkpoint (NVIDIA's records no text or audio settings).
    audio = parse_section(AudioConfig, payload["audio"], "audio")
    text = parse_section(TextConfig, payload["text"], "text")
    model, info = load_fastpitch(args.model, text=text, audio=audio)
    index_path = FeatureLayout(args.features_dir).durations_index
    if index_path.is_file():
        table = TextSettings.from_durations_index(index_path, info.text.cleaners).symbols
        if table != info.symbols:
            raise UserError(
                f"{args.model}: trained on a symbol table of {len(info.symbols)} symbols that differs from "
                f"{index_path} ({len(table)}); retrain FastPitch on these durations"
            )
    records = [
        {**record, "split": split}
        for split in SPLITS
        for record in read_manifest(manifest_path(args.manifest_dir, split))
    ]
    if not records:
        raise UserError(f"{STAGE}: the manifests in {args.manifest_dir} list no utterances")
    energy = bool(info.model_config.get("energy_conditioning", False))
    dataset = FastPitchDataset(
        records,
        args.features_dir,
        info.pitch,
        info.audio.n_mel_channels,
        n_symbols=len(info.symbols),
        with_energy=energy,
    )
    model_hash = sha256_of(args.model)

    with distributed_session(gpus, what="fastpitch.gpus") as context:
        if context.is_main:
            args.index.unlink(missing_ok=True)  # the index marks a finished run; this one is not yet
            prepare_out_dir(args.out_dir, model_hash, args.model, set(dataset.ids))
        context.barrier()
        model = model.to(context.device).eval()
        mine = context.shard(len(dataset))
        with tracked(STAGE, payload, dataset=args.manifest_dir.resolve().parent.name) as run_log:
            started = time.perf_counter()
            shard = extract_mels(model, dataset, mine, args.out_dir, batch_size, context.device, args.workers)
            context.barrier()
            seconds = time.perf_counter() - started  # the slowest rank's: the job's wall time
            val_indices = [index for index in mine if records[index]["split"] == "val"]
            squared_error, elements = mel_mse(dataset, val_indices, args.out_dir)
            figures = context.sum_floats(
                [shard.n_computed, shard.n_reused, shard.frames_computed, squared_error, elements, len(val_indices)]
            )
            n_computed, n_reused, frames_computed, squared_error, elements, n_val = figures
            if context.is_main:
                hop_s = info.audio.hop_length / info.audio.sampling_rate
                frames = sum(dataset.mel_lengths)
                hours = frames * hop_s / 3600
                hours_computed = frames_computed * hop_s / 3600
                index = {
                    "model": str(args.model),
                    "model_sha256": model_hash,
                    "model_step": info.step,
                    "count": len(dataset),
                    "splits": {split: sum(r["split"] == split for r in records) for split in SPLITS},
                    "n_computed": int(n_computed),
                    "n_reused": int(n_reused),
                    "frames": frames,
                    "audio_seconds": hours * 3600,
                    "audio_hours": hours,
                    "audio_hours_computed": hours_computed,
                    "seconds": seconds,
                    "seconds_per_hour_of_audio": seconds / hours_computed if hours_computed > 0 else None,
                    "world_size": context.world_size,
                    "device": str(context.device),
                    "batch_size": batch_size,
                    "n_val": int(n_val),
                    "val_mel_mse": squared_error / elements if elements else None,
                    "n_mels": info.audio.n_mel_channels,
                    "dtype": "float32",
                }
                write_json(args.index, index)
                run_log.log_metrics(
                    {key: float(value) for key, value in index.items() if isinstance(value, int | float)}
                )
                run_log.log_artifact(args.index)
                log.info(
                    "%s: %d mels (%d computed, %d kept) in %.1f s on %s x %d, val mel MSE %s",
                    STAGE,
                    len(dataset),
                    n_computed,
                    n_reused,
                    seconds,
                    context.device,
                    context.world_size,
                    "n/a" if index["val_mel_mse"] is None else f"{index['val_mel_mse']:.4f}",
                )
        context.barrier()
