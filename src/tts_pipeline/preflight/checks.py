"""The checks: each setting against the training data it will meet and the memory and time it implies.

- ``<section>.segment_size`` (HiFi-GAN, WaveGlow): at most the longest training clip;
- ``<section>.batch_size`` / ``global_batch_size`` of every training in the DAG: at most the training
  clips, and a batch whose activations alone (:mod:`.memory`, a lower bound) exceed
  :data:`MEMORY_CEILING` is refused;
- ``benchmark.batch_sizes`` and ``inference.batch_size``: the same memory bound on synthesis;
- ``<section>.epochs`` / ``max_steps`` (and ``hifigan.fine_tune_epochs``): a warning with the time they
  imply (:mod:`.training_time`) when it exceeds :data:`~.training_time.WARN_SECONDS`;
- ``fastpitch.init_from`` / ``hifigan.init_from`` (and ``fastpitch.freeze``): the warm-start file exists,
  loads and fits the config (:mod:`.warm_start`).

Only the trainings in the DAG are checked: a section the config does not train with (Tacotron 2 under
``durations.source: aligner``, a pretrained model's) may hold anything.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from tts_pipeline.preflight import memory
from tts_pipeline.preflight.findings import Finding
from tts_pipeline.preflight.training_data import TrainingData, training_data
from tts_pipeline.preflight.training_time import WARN_SECONDS, training_steps, training_time
from tts_pipeline.preflight.warm_start import check_warm_starts
from tts_pipeline.sizes import describe_bytes

MEMORY_CEILING = 256 * 1024**3
"""Bytes one process may use at most: more than any single accelerator holds today (the largest have
141-192 GB) and than most machines offer one job. A batch estimated above it cannot run anywhere."""

# training rule -> (its config section, the key that counts its epochs)
TRAININGS: dict[str, tuple[str, str]] = {
    "train_aligner": ("aligner", "epochs"),
    "train_tacotron2": ("tacotron2", "epochs"),
    "train_hifigan": ("hifigan", "epochs"),
    "train_fastpitch": ("fastpitch", "epochs"),
    "finetune_hifigan": ("hifigan", "fine_tune_epochs"),
    "train_waveglow": ("waveglow", "epochs"),
}

# The benchmark's phrase when its file cannot be read here: NVIDIA's sentence of 128 characters.
DEFAULT_BENCHMARK_CHARACTERS = 128


def check_settings(
    config: Any,
    *,
    manifest: str | Path,
    trainings: Mapping[str, str],
    benchmark_phrases: str | Path | None = None,
    durations_index: str | Path | None = None,
) -> list[Finding]:
    """Every finding about ``config``.

    Args:
        config: The validated :class:`~tts_pipeline.config.PipelineConfig`.
        manifest: The training manifest (``R/data/manifest.train.jsonl``), read when it exists.
        trainings: The training rules of the DAG -> their ``metrics.json`` (where the last run's speed is).
        benchmark_phrases: The benchmark's phrase file, read for its longest phrase when it exists.
        durations_index: The durations' index (``R/features/durations.json``): a warm-started FastPitch's
            symbols are checked against its TextGrid phones when it exists.
    """
    data = training_data(config, manifest)
    sections = sorted({TRAININGS[rule][0] for rule in trainings if rule in TRAININGS})
    findings = [*_held_out_everything(config, data)]
    for section in sections:
        segment = list(_segment_size(config, section, data))
        count = list(_batch_count(config, section, data))
        findings += segment + count
        if not segment and not count:
            # the memory estimate rests on the segment and is moot for a batch the data cannot fill
            findings += _batch_memory(config, section, data)
    findings += _benchmark_batches(config, benchmark_phrases)
    findings += _inference_batch(config)
    for rule, metrics in trainings.items():
        if rule in TRAININGS:
            findings += _training_time(config, rule, metrics, data)
    findings += check_warm_starts(config, durations_index=durations_index)
    return findings


def _held_out_everything(config: Any, data: TrainingData) -> Iterator[Finding]:
    if data.n_train == 0 and not data.exact and config.data.split.scheme == "random":
        split = config.data.split
        yield Finding(
            "data.split",
            f"val_size ({split.val_size}) + test_size ({split.test_size}) leave no training clip of the "
            f"corpus ({data.source}); expected them to leave some",
        )


def _data_words(data: TrainingData) -> str:
    return f"in {data.source}" if data.exact else f"at most, from {data.source}"


# --------------------------------------------------------------------------------------------------
# segments and batches


def _segment_size(config: Any, section: str, data: TrainingData) -> Iterator[Finding]:
    settings = getattr(config, section)
    if not hasattr(settings, "segment_size"):
        return
    rate, hop = config.audio.sampling_rate, config.audio.hop_length
    segment, longest = settings.segment_size, data.longest_samples
    if segment <= longest:
        return
    most = longest // hop * hop
    if data.exact:
        why = f"the longest training clip has {longest:,} samples ({longest / rate:.3g} s, {data.source})"
    else:
        why = f"no clip may be longer than data.max_duration_s ({config.data.max_duration_s:g} s = {longest:,} samples)"
    yield Finding(
        f"{section}.segment_size",
        f"{segment:,} samples ({segment / rate:.3g} s) is longer than any training clip: {why}, so every "
        f"segment would be mostly padding; expected a multiple of audio.hop_length ({hop}) of at most {most:,}",
    )


def _batch_count(config: Any, section: str, data: TrainingData) -> Iterator[Finding]:
    settings = getattr(config, section)
    global_batch = getattr(settings, "global_batch_size", None)
    n_train = data.n_train
    if not n_train:
        return
    if settings.batch_size > n_train:
        key, value = "batch_size", settings.batch_size
    elif global_batch is not None and global_batch > n_train:
        key, value = "global_batch_size", global_batch
    else:
        return
    yield Finding(
        f"{section}.{key}",
        f"{value:,} is more than the training clips ({n_train:,}, {_data_words(data)}): a step needs "
        f"a batch of distinct clips; expected at most {n_train:,}",
    )


def _batch_memory(config: Any, section: str, data: TrainingData) -> Iterator[Finding]:
    settings = getattr(config, section)
    item = _training_item(config, section, data)
    needed = settings.batch_size * item
    if needed > MEMORY_CEILING:
        yield Finding(
            f"{section}.batch_size",
            f"a batch of {settings.batch_size:,} needs at least {describe_bytes(needed)} for its activations "
            f"({describe_bytes(item)} per item, an estimate that leaves out weights, optimiser state "
            f"and workspace), more than one process can have ({describe_bytes(MEMORY_CEILING)}); "
            f"expected at most {max(1, MEMORY_CEILING // item):,}",
        )


def _training_item(config: Any, section: str, data: TrainingData) -> int:
    """Bytes one item of ``section``'s training batch needs at least (:mod:`.memory`)."""
    settings, audio = getattr(config, section), config.audio
    frames = memory.frames_of(data.longest_samples, audio.hop_length)
    characters = memory.characters_of(frames, audio.sampling_rate, audio.hop_length)
    if section == "hifigan":
        return memory.hifigan_training_item(settings, settings.segment_size, audio.hop_length)
    if section == "waveglow":
        return memory.waveglow_training_item(settings, settings.segment_size)
    if section == "fastpitch":
        return memory.fastpitch_training_item(settings, frames)
    if section == "tacotron2":
        return memory.tacotron2_training_item(settings, frames, characters)
    return memory.aligner_training_item(settings, frames, characters, audio.n_mel_channels)


# --------------------------------------------------------------------------------------------------
# synthesis batches


def _benchmark_batches(config: Any, phrases: str | Path | None) -> Iterator[Finding]:
    characters = _longest_phrase(phrases) or DEFAULT_BENCHMARK_CHARACTERS
    audio = config.audio
    frames = memory.frames_of_text(characters, audio.sampling_rate, audio.hop_length)
    item = memory.synthesis_item(config.fastpitch, config.hifigan, frames, audio.hop_length)
    too_big = [size for size in config.benchmark.batch_sizes if size * item > MEMORY_CEILING]
    if too_big:
        largest = max(too_big)
        yield Finding(
            "benchmark.batch_sizes",
            f"{largest:,} copies of the {characters}-character benchmark phrase need at least "
            f"{describe_bytes(largest * item)} to synthesise ({describe_bytes(item)} each, an "
            f"estimate of about {frames:,} frames through FastPitch and HiFi-GAN), more than one process can "
            f"have ({describe_bytes(MEMORY_CEILING)}); expected sizes of at most {MEMORY_CEILING // item:,}",
        )


def _inference_batch(config: Any) -> Iterator[Finding]:
    from tts_pipeline.inference.chunking import MAX_PIECE_SYMBOLS

    audio, size = config.audio, config.inference.batch_size
    frames = memory.frames_of_text(MAX_PIECE_SYMBOLS, audio.sampling_rate, audio.hop_length)
    item = memory.synthesis_item(config.fastpitch, config.hifigan, frames, audio.hop_length)
    if size * item > MEMORY_CEILING:
        yield Finding(
            "inference.batch_size",
            f"{size:,} phrases of up to {MAX_PIECE_SYMBOLS} symbols (longer ones are split) may need "
            f"{describe_bytes(size * item)} to synthesise at once, more than one process can have "
            f"({describe_bytes(MEMORY_CEILING)}); expected at most {MEMORY_CEILING // item:,}",
        )


def _longest_phrase(path: str | Path | None) -> int | None:
    """Characters of the longest text in a ``name|text`` phrase file, or None when it cannot be read."""
    if path is None:
        return None
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    texts = [line.partition("|")[2].strip() for line in lines if "|" in line and not line.startswith("#")]
    return max((len(text) for text in texts), default=None) or None


# --------------------------------------------------------------------------------------------------
# training time


def _training_time(config: Any, rule: str, metrics: str, data: TrainingData) -> Iterator[Finding]:
    section, epochs_key = TRAININGS[rule]
    settings = getattr(config, section)
    epochs = getattr(settings, epochs_key)
    global_batch = getattr(settings, "global_batch_size", None)
    n_train = data.n_train
    if not n_train:
        per_epoch, how = 1, "at least 1 step per epoch (the training clips are not known yet)"
    elif global_batch is None:
        per_epoch = math.ceil(n_train / settings.batch_size)
        how = f"{per_epoch:,} steps per epoch ({n_train:,} training clips / batch {settings.batch_size})"
    else:
        per_epoch = max(1, n_train // global_batch)
        how = f"{per_epoch:,} steps per epoch ({n_train:,} training clips / global batch {global_batch})"
    steps = training_steps(epochs, per_epoch, settings.max_steps)
    time = training_time(steps, metrics)
    if time.seconds <= WARN_SECONDS:
        return
    if settings.max_steps is not None and steps == settings.max_steps:
        key, what = "max_steps", f"{steps:,} optimiser steps"
    else:
        key, what = epochs_key, f"{epochs:,} epochs x {how} = {steps:,} optimiser steps"
    yield Finding(
        f"{section}.{key}",
        f"{rule}: {what}; {time.describe()}. This is an estimate; to train for less, lower "
        f"{section}.{epochs_key} or set {section}.max_steps",
        severity="warning",
    )
