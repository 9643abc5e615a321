"""The corpus's clips: what a usable clip looks like (:class:`AudioRules`), checks, resampled copies.

Every clip is read whole (clipping can only be measured on the samples) and checked for channels,
sample rate, duration and clipping; with ``data.resample`` a clip at another rate gets a 16-bit mono
copy at the configured rate.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soundfile as sf

from tts_pipeline import files
from tts_pipeline.config import DataConfig
from tts_pipeline.data.metadata import METADATA_NAME
from tts_pipeline.data.problems import Problem, Reason

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class AudioRules:
    """What a usable clip looks like, and where resampled copies go."""

    sample_rate: int
    resample: bool
    resample_dir: Path | None
    min_duration_s: float
    max_duration_s: float
    clip_level: float
    max_clipped_fraction: float

    @classmethod
    def from_config(cls, data: DataConfig, sample_rate: int, resample_dir: Path | None) -> AudioRules:
        return cls(
            sample_rate=sample_rate,
            resample=data.resample,
            resample_dir=resample_dir,
            min_duration_s=data.min_duration_s,
            max_duration_s=data.max_duration_s,
            clip_level=data.clip_level,
            max_clipped_fraction=data.max_clipped_fraction,
        )


@dataclass(frozen=True)
class AudioInfo:
    """A usable clip. ``wav`` is the file to train on: the corpus file or its resampled copy."""

    wav: str
    source_wav: str
    n_samples: int
    sample_rate: int
    source_sample_rate: int

    @property
    def duration_s(self) -> float:
        return self.n_samples / self.sample_rate


def outside_corpus(utterance_id: str, path: Path, corpus_dir: Path) -> Problem | None:
    """A problem when ``path`` is a link to a file outside the corpus folder, else None.

    Such a file can change or vanish without the corpus changing. A ``wavs/`` folder that is itself a
    link (the clips kept on another disk) is fine: its files are inside it.
    """
    target = path.resolve()
    if any(target.is_relative_to(home) for home in (corpus_dir.resolve(), path.parent.resolve())):
        return None
    detail = f"a link to '{target}', outside the corpus folder '{corpus_dir}'; copy the file into the corpus"
    return Problem(utterance_id, str(path), Reason.OUTSIDE_CORPUS, detail)


def check_audio(utterance_id: str, path: Path, rules: AudioRules) -> tuple[AudioInfo | None, list[Problem]]:
    """Read one clip and check it; resample it if allowed and needed.

    Returns (info, []) for a usable clip, else (None, every problem found). Reads the samples, not
    just the header, because clipping can only be measured on the data.
    """
    file = str(path)
    if path.is_file() and path.stat().st_size == 0:
        return None, [Problem(utterance_id, file, Reason.EMPTY_AUDIO, "the file is empty (0 bytes)")]
    try:
        samples, rate = sf.read(path, dtype="float32", always_2d=True)  # (N, channels), full scale = 1
    except (sf.LibsndfileError, RuntimeError, OSError) as error:
        return None, [Problem(utterance_id, file, Reason.UNREADABLE_AUDIO, f"soundfile cannot read it: {error}")]
    n_frames, n_channels = samples.shape
    if n_frames == 0:
        return None, [Problem(utterance_id, file, Reason.EMPTY_AUDIO, "the file holds 0 samples")]
    # NaN / Inf samples would pass every other check (comparisons with NaN are false) and become NaN
    # mels, then a non-finite training loss that names neither the cause nor the utterance.
    non_finite = samples.size - np.count_nonzero(np.isfinite(samples))
    if non_finite:
        detail = f"{non_finite} of {samples.size} samples are NaN or infinite"
        return None, [Problem(utterance_id, file, Reason.NON_FINITE_AUDIO, detail)]
    problems = [
        Problem(utterance_id, file, reason, detail)
        for reason, detail in _signal_problems(samples, rate, rules)
    ]
    if problems:
        return None, problems
    if rate == rules.sample_rate:
        return AudioInfo(file, file, n_frames, rate, rate), []
    return _resample(utterance_id, path, samples, rate, rules), []


def _signal_problems(samples: np.ndarray, rate: int, rules: AudioRules) -> list[tuple[Reason, str]]:
    """Channel count, sample rate, duration and clipping problems of ``samples`` (N, channels)."""
    found: list[tuple[Reason, str]] = []
    n_frames, n_channels = samples.shape
    if n_channels != 1:
        found.append((Reason.MULTICHANNEL, f"{n_channels} channels; expected mono"))
    if rate != rules.sample_rate and not rules.resample:
        found.append((
            Reason.WRONG_SAMPLE_RATE,
            f"{rate} Hz; expected {rules.sample_rate} Hz (set data.resample: true to resample instead)",
        ))
    duration = n_frames / rate
    if duration < rules.min_duration_s:
        found.append((Reason.TOO_SHORT, f"{duration:.3f} s; data.min_duration_s is {rules.min_duration_s:g} s"))
    if duration > rules.max_duration_s:
        found.append((Reason.TOO_LONG, f"{duration:.3f} s; data.max_duration_s is {rules.max_duration_s:g} s"))
    clipped = np.count_nonzero(np.abs(samples) >= rules.clip_level) / samples.size
    if clipped > rules.max_clipped_fraction:
        found.append((
            Reason.CLIPPED,
            f"{clipped:.3%} of samples at or above {rules.clip_level:g} of full scale; "
            f"data.max_clipped_fraction is {rules.max_clipped_fraction:.3%}",
        ))
    return found


def _resample(utterance_id: str, path: Path, samples: np.ndarray, rate: int, rules: AudioRules) -> AudioInfo:
    """Write a 16-bit mono copy of ``samples`` (N, 1) at the configured rate into ``resample_dir``."""
    import soxr  # librosa's own resampler; only needed when something is resampled

    if rules.resample_dir is None:
        raise ValueError("resample_dir is required when data.resample is true")
    resampled = soxr.resample(samples[:, 0], rate, rules.sample_rate, quality="HQ")
    # Explicit rounding and saturation: libsndfile would wrap out-of-range floats around instead.
    pcm = np.clip(np.rint(resampled * 32768.0), -32768, 32767).astype(np.int16)
    target = rules.resample_dir / f"{utterance_id}.wav"
    with files.atomic_path(target) as tmp:
        sf.write(tmp, pcm, rules.sample_rate, subtype="PCM_16", format="WAV")
    return AudioInfo(str(target), str(path), len(pcm), rules.sample_rate, rate)


def check_all_audio(
    items: Iterable[tuple[str, Path]], rules: AudioRules, workers: int = 1
) -> dict[str, tuple[AudioInfo | None, list[Problem]]]:
    """:func:`check_audio` for every (id, path), on ``workers`` threads (1 = in this thread).

    Threads suffice: libsndfile, NumPy and soxr release the GIL for the heavy parts.
    """
    items = list(items)
    started = time.perf_counter()
    if workers <= 1:
        outcomes = [check_audio(utterance_id, path, rules) for utterance_id, path in items]
    else:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            outcomes = list(pool.map(lambda item: check_audio(item[0], item[1], rules), items))
    logger.info("checked %d clips in %.1f s on %d worker(s)", len(items), time.perf_counter() - started, workers)
    return {utterance_id: outcome for (utterance_id, _), outcome in zip(items, outcomes, strict=True)}


def find_wavs_without_metadata(wav_dir: Path, claimed_ids: set[str]) -> list[Problem]:
    """``wavs/*.wav`` files whose id no metadata line names."""
    if not wav_dir.is_dir():
        return []
    return [
        Problem(path.stem, str(path), Reason.WAV_WITHOUT_METADATA, f"no line of {METADATA_NAME} has this id")
        for path in sorted(wav_dir.glob("*.wav"))
        if path.stem not in claimed_ids and not path.name.startswith(".")
    ]
