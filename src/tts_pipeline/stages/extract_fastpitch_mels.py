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
import hashlib
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tts_pipeline.stages.common import add_section_argument, load_section, tracked

log = logging.getLogger(__name__)

STAGE = "extract_fastpitch_mels"
SECTION_KEYS = ("fastpitch.extract_batch_size", "fastpitch.gpus")
MARKER_NAME = "model.json"
DURATIONS_INDEX_NAME = "durations.json"
SPLITS = ("train", "val", "test")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_section_argument(parser)
    parser.add_argument("--model", type=Path, required=True, help="the FastPitch model.pt")
    parser.add_argument(
        "--features-dir", type=Path, required=True, help="features folder: mels/, durations/, symbols/, symbol_pitch/"
    )
    parser.add_argument("--manifest-dir", type=Path, required=True, help="folder of manifest.{train,val,test}.jsonl")
    parser.add_argument("--out-dir", type=Path, required=True, help="where <id>.npy go (R/fastpitch_mels)")
    parser.add_argument("--index", type=Path, required=True, help="index.json to write last")
    parser.add_argument(
        "--gpus", type=int, default=None, help="0 = the CPU; default fastpitch.gpus (processes come from torchrun)"
    )
    parser.add_argument("--threads", type=int, default=0, help="CPU threads of this process; 0 = torch's default")
    parser.add_argument("--workers", type=int, default=0, help="data-loader worker processes per process")


def file_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes (the identity of a model file)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def prepare_out_dir(out_dir: Path, model_hash: str, model_path: Path, keep_ids: set[str]) -> int:
    """Make ``out_dir`` hold only arrays of the model ``model_hash``; returns how many arrays it removed.

    A marker of another model (or arrays without a marker) means the arrays are a stranger's: they are
    deleted, then the marker of this model is written before any new array. Temporary files of a killed
    run and arrays of utterances no longer in the manifests are removed too.
    """
    import json

    from tts_pipeline.files import write_json

    out_dir.mkdir(parents=True, exist_ok=True)
    marker = out_dir / MARKER_NAME
    try:
        recorded = json.loads(marker.read_text(encoding="utf-8")).get("model_sha256")
    except (OSError, ValueError, AttributeError):
        recorded = None
    removed = 0
    for path in out_dir.iterdir():
        stale = path.suffix == ".npy" and (recorded != model_hash or path.stem not in keep_ids)
        if stale or (path.name.startswith(".") and path.name.endswith(".tmp")):
            path.unlink(missing_ok=True)
            removed += path.suffix == ".npy"
    if recorded != model_hash:
        if removed:
            log.warning("%s: %d mels of another model (%s) removed; extracting afresh", out_dir, removed, recorded)
        write_json(marker, {"model": str(model_path), "model_sha256": model_hash})
    return removed


def _has_shape(path: Path, shape: tuple[int, int]) -> bool:
    try:
        array = np.load(path, mmap_mode="r")
    except (OSError, ValueError):
        return False
    return tuple(array.shape) == shape and array.dtype == np.float32


@dataclass
class ShardResult:
    """What one process did: utterances computed / kept, their frames, seconds computing."""

    n_computed: int = 0
    n_reused: int = 0
    frames_computed: int = 0
    seconds: float = 0.0


def extract(
    model: Any,
    dataset: Any,
    indices: Sequence[int],
    out_dir: Path,
    batch_size: int,
    device: Any,
    workers: int = 0,
) -> ShardResult:
    """Teacher-forced mels of ``dataset[indices]`` into ``out_dir``, skipping finished files.

    Batches hold utterances of similar length (little padding); each output is cropped to its
    utterance's ``T`` and checked against the ground-truth mel's frame count.
    """
    import torch
    from torch.utils.data import DataLoader

    from tts_pipeline.errors import UserError
    from tts_pipeline.files import save_npy, sync
    from tts_pipeline.models.fastpitch.data import collate

    lengths = dataset.mel_lengths
    n_mels = dataset.n_mels
    result = ShardResult()
    todo = []
    for index in indices:
        if _has_shape(out_dir / f"{dataset.ids[index]}.npy", (n_mels, lengths[index])):
            result.n_reused += 1
        else:
            todo.append(index)
    todo.sort(key=lambda index: (lengths[index], dataset.ids[index]))
    batches = [todo[start : start + batch_size] for start in range(0, len(todo), batch_size)]
    loader = DataLoader(dataset, batch_sampler=batches, collate_fn=collate, num_workers=workers)
    started = time.perf_counter()
    with torch.no_grad():
        for batch in loader:
            batch = batch.to(device)
            output = model(batch.inputs(), mel_max_len=int(batch.mels.shape[-1]))
            mels = output.mel.float().cpu().numpy()
            for row, utterance_id in enumerate(batch.ids):
                expected = int(batch.mel_lengths[row])
                produced = int(output.mel_lengths[row])
                if produced != expected:
                    raise UserError(
                        f"utterance {utterance_id}: FastPitch produced {produced} frames but its ground-truth mel "
                        f"{dataset.path('mels', utterance_id)} has {expected}"
                    )
                mel = np.ascontiguousarray(mels[row, :, :expected], dtype=np.float32)
                # fsync once at the end: a killed job still leaves whole files only.
                save_npy(out_dir / f"{utterance_id}.npy", mel, fsync=False)
                result.n_computed += 1
                result.frames_computed += expected
    sync()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    result.seconds = time.perf_counter() - started
    return result


def mel_mse(dataset: Any, indices: Sequence[int], out_dir: Path) -> tuple[float, int]:
    """Sum of squared errors between the written mels and the ground truth over ``indices``, and the
    number of elements (the teacher-forced validation mel MSE is their ratio)."""
    total, count = 0.0, 0
    for index in indices:
        utterance_id = dataset.ids[index]
        produced = np.load(out_dir / f"{utterance_id}.npy").astype(np.float64)
        truth = np.load(dataset.path("mels", utterance_id)).astype(np.float64)
        total += float(np.square(produced - truth).sum())
        count += truth.size
    return total, count


def run(args: argparse.Namespace) -> None:
    import torch

    from tts_pipeline.data.manifest import manifest_path, read_manifest
    from tts_pipeline.errors import UserError
    from tts_pipeline.files import write_json
    from tts_pipeline.models.fastpitch.data import FastPitchDataset, TextSettings
    from tts_pipeline.models.fastpitch.model_file import load_fastpitch
    from tts_pipeline.training.distributed import distributed_session

    payload = load_section(args, *SECTION_KEYS)
    batch_size = int(payload["fastpitch.extract_batch_size"])
    if batch_size < 1:
        raise UserError(f"fastpitch.extract_batch_size: expected >= 1, got {batch_size}")
    gpus = int(payload["fastpitch.gpus"]) if args.gpus is None else args.gpus
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    model, info = load_fastpitch(args.model)
    index_path = args.features_dir / DURATIONS_INDEX_NAME
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
    model_hash = file_sha256(args.model)

    with distributed_session(gpus, what="fastpitch.gpus") as context:
        if context.is_main:
            args.index.unlink(missing_ok=True)  # the index marks a finished run; this one is not yet
            prepare_out_dir(args.out_dir, model_hash, args.model, set(dataset.ids))
        context.barrier()
        model = model.to(context.device).eval()
        mine = context.shard(len(dataset))
        with tracked(STAGE, payload, dataset=args.manifest_dir.resolve().parent.name) as run_log:
            started = time.perf_counter()
            shard = extract(model, dataset, mine, args.out_dir, batch_size, context.device, args.workers)
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
