"""Teacher-forced FastPitch mels into a folder of ``<id>.npy``, resumable, one model per folder.

FastPitch's training forward with the ground-truth durations, per-token pitch and energy (pace 1,
eval mode) on a :class:`~tts_pipeline.models.fastpitch.data.FastPitchDataset`; each output is float32
``(n_mels, T)`` cropped to the utterance's ``T``, the frame count of its ground-truth mel. The
folder's ``model.json`` names the model file (by hash) that its arrays come from.

Several processes share the work (:func:`extract_sharded`: every ``world``-th utterance each) and sum
their figures, from which :func:`mels_index` makes the folder's index. The inputs come from
:mod:`tts_pipeline.features.fastpitch_teacher`.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tts_pipeline.errors import UserError
from tts_pipeline.features.fastpitch_teacher import SPLITS
from tts_pipeline.files import save_npy, sync, write_json

log = logging.getLogger(__name__)

MARKER_NAME = "model.json"


def prepare_out_dir(out_dir: Path, model_hash: str, model_path: Path, keep_ids: set[str]) -> int:
    """Make ``out_dir`` hold only arrays of the model ``model_hash``; returns how many arrays it removed.

    A marker of another model (or arrays without a marker) means the arrays are a stranger's: they are
    deleted, then the marker of this model is written before any new array. Temporary files of a killed
    run and arrays of utterances no longer in the manifests are removed too.
    """
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


def extract_mels(
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


@dataclass(frozen=True)
class ExtractionTotals:
    """The whole job's figures, summed over processes (as floats: they crossed the wire as such).

    Attributes:
        n_computed: Utterances whose mel was computed by this run.
        n_reused: Utterances whose finished mel was kept.
        frames_computed: Mel frames computed by this run.
        squared_error: Sum of squared errors of the val mels against their ground truth.
        elements: Elements those errors are over (the val MSE is ``squared_error / elements``).
        n_val: Val utterances.
        seconds: Wall time of the extraction: the slowest process's.
    """

    n_computed: float
    n_reused: float
    frames_computed: float
    squared_error: float
    elements: float
    n_val: float
    seconds: float


def extract_sharded(
    model: Any,
    dataset: Any,
    splits: Sequence[str],
    context: Any,
    out_dir: Path,
    batch_size: int,
    workers: int = 0,
) -> ExtractionTotals:
    """This process's share of the mels (every ``world``-th utterance, :func:`extract_mels`), then
    its share of the val mel error (:func:`mel_mse`), summed over the processes of ``context`` (a
    :class:`~tts_pipeline.training.distributed.DistributedContext`). ``splits[i]`` is the
    split of ``dataset[i]``; ``model`` must be on ``context.device`` in eval mode."""
    mine = context.shard(len(dataset))
    started = time.perf_counter()
    shard = extract_mels(model, dataset, mine, out_dir, batch_size, context.device, workers)
    context.barrier()
    seconds = time.perf_counter() - started  # the slowest rank's: the job's wall time
    val_indices = [index for index in mine if splits[index] == "val"]
    squared_error, elements = mel_mse(dataset, val_indices, out_dir)
    figures = context.sum_floats(
        [shard.n_computed, shard.n_reused, shard.frames_computed, squared_error, elements, len(val_indices)]
    )
    return ExtractionTotals(*figures, seconds=seconds)


def mels_index(
    totals: ExtractionTotals,
    *,
    model_path: Path,
    model_hash: str,
    info: Any,
    dataset: Any,
    splits: Sequence[str],
    world_size: int,
    device: Any,
    batch_size: int,
) -> dict[str, Any]:
    """The folder's ``index.json``: the model, counts per split, frames and hours of audio, wall time,
    seconds per hour of audio computed, and the val mel MSE (None without val utterances).

    ``info`` is the model's :class:`~tts_pipeline.models.fastpitch.model_file.FastPitchInfo`; hours
    count ``hop_length / sampling_rate`` seconds per frame.
    """
    hop_s = info.audio.hop_length / info.audio.sampling_rate
    frames = sum(dataset.mel_lengths)
    hours = frames * hop_s / 3600
    hours_computed = totals.frames_computed * hop_s / 3600
    return {
        "model": str(model_path),
        "model_sha256": model_hash,
        "model_step": info.step,
        "count": len(dataset),
        "splits": {split: splits.count(split) for split in SPLITS},
        "n_computed": int(totals.n_computed),
        "n_reused": int(totals.n_reused),
        "frames": frames,
        "audio_seconds": hours * 3600,
        "audio_hours": hours,
        "audio_hours_computed": hours_computed,
        "seconds": totals.seconds,
        "seconds_per_hour_of_audio": totals.seconds / hours_computed if hours_computed > 0 else None,
        "world_size": world_size,
        "device": str(device),
        "batch_size": batch_size,
        "n_val": int(totals.n_val),
        "val_mel_mse": totals.squared_error / totals.elements if totals.elements else None,
        "n_mels": info.audio.n_mel_channels,
        "dtype": "float32",
    }
