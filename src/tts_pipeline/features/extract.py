"""Mels and pitch for many utterances: a process pool, restartable, one ``.npy`` pair per utterance.

For each utterance ``<id>`` it writes (atomically) ``<out_dir>/mels/<id>.npy`` float32 ``(n_mels, T)``
and ``<out_dir>/pitch/<id>.npy`` float32 ``(T,)``, ``T = n_samples // hop`` (the folder's
:class:`~tts_pipeline.data.feature_layout.FeatureLayout`).

Restarting: the per-utterance folders are not workflow outputs, so a killed run keeps what it
finished, and every file that exists is whole (atomic writes). A rerun reuses an existing pair when
(1) ``<out_dir>/.state.json`` says the folders were made with the same audio and pitch settings, the
same extraction code and the same library versions (otherwise both folders are emptied first), and
(2) both files are newer than the wav and have the expected frame count. Leftover temporary files
and arrays of utterances that are no longer in the manifests are removed.

Typical use (the ``features`` stage)::

    result = extract_all(utterances, out_dir, cfg.audio, cfg.pitch, workers=8)
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import multiprocessing
import os
import shutil
import sys
import time
from collections import Counter, deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from tts_pipeline import files
from tts_pipeline.config import AudioConfig, PitchConfig
from tts_pipeline.data.feature_layout import FRAME_KINDS, FeatureLayout
from tts_pipeline.data.manifest_record import ManifestRecord
from tts_pipeline.errors import UserError

log = logging.getLogger(__name__)

# Modules whose code decides the arrays' values, and libraries whose version does.
_VALUE_MODULES = ("tts_pipeline.audio", "tts_pipeline.features.pitch", "tts_pipeline.features.extract")
_VALUE_LIBRARIES = ("torch", "librosa", "praat-parselmouth", "numpy")

# Utterances per pool task: enough to amortise the per-task set-up, few enough to balance the load.
_MAX_CHUNK = 32


class FeatureLengthError(RuntimeError):
    """Mel and pitch frame counts disagree with each other or with ``n_samples // hop`` (a bug)."""


@dataclass(frozen=True)
class Utterance:
    """One manifest record, as extraction needs it."""

    id: str
    split: str
    wav: str
    n_samples: int

    @classmethod
    def from_record(cls, record: ManifestRecord, split: str) -> Utterance:
        return cls(id=record.id, split=split, wav=record.wav, n_samples=record.n_samples)


class Features(NamedTuple):
    """The arrays of one utterance: log-mel float32 ``(n_mels, T)`` and pitch float32 ``(T,)`` in Hz."""

    mel: np.ndarray
    pitch: np.ndarray


class UtteranceSummary(NamedTuple):
    """What the index and the statistics need from one utterance, without reloading its arrays."""

    id: str
    n_frames: int
    n_voiced: int
    voiced_sum: float
    voiced_sum_sq: float
    computed: bool  # False: an existing file pair was reused


@dataclass(frozen=True)
class ExtractionResult:
    """Summaries in the order utterances were given, plus counts and timing."""

    summaries: list[UtteranceSummary]
    n_computed: int
    n_reused: int
    wiped: bool
    seconds: float


# --------------------------------------------------------------------------------------------------
# one utterance
# --------------------------------------------------------------------------------------------------


class FeatureExtractor:
    """Mel and pitch of one clip with the pipeline's single mel function and the configured pitch method.

    Build one per process (it holds the mel filterbank) and call :meth:`extract` per clip.
    ``praat_rate``: see :func:`tts_pipeline.features.pitch.praat_pitch` (``analysis_rate``).
    """

    def __init__(self, audio_cfg: AudioConfig, pitch_cfg: PitchConfig, praat_rate: int | None = None) -> None:
        from tts_pipeline.audio import MelSpectrogram

        self.audio_cfg = audio_cfg
        self.pitch_cfg = pitch_cfg
        self.praat_rate = praat_rate
        self.mel_fn = MelSpectrogram(audio_cfg)

    def mel(self, audio: np.ndarray) -> np.ndarray:
        """float32 ``(N,)`` -> float32 ``(n_mels, N // hop)``."""
        import torch

        with torch.inference_mode():
            return self.mel_fn(torch.from_numpy(np.ascontiguousarray(audio, dtype=np.float32))).numpy()

    def pitch(self, audio: np.ndarray) -> np.ndarray:
        """float32 ``(N,)`` -> float32 ``(N // hop,)`` Hz, 0 = unvoiced."""
        from tts_pipeline.features.pitch import extract_pitch

        return extract_pitch(audio, self.pitch_cfg, self.audio_cfg, praat_rate=self.praat_rate)

    def extract(self, audio: np.ndarray) -> Features:
        return Features(self.mel(audio), self.pitch(audio))


def check_lengths(
    utterance_id: str, n_samples: int, mel: np.ndarray, pitch: np.ndarray, audio_cfg: AudioConfig
) -> None:
    """Raise :class:`FeatureLengthError` naming the utterance unless mel T == pitch T == n_samples // hop."""
    expected = n_samples // audio_cfg.hop_length
    if mel.shape != (audio_cfg.n_mel_channels, expected) or pitch.shape != (expected,):
        raise FeatureLengthError(
            f"utterance {utterance_id}: expected mel ({audio_cfg.n_mel_channels}, {expected}) and pitch "
            f"({expected},) for {n_samples} samples at hop {audio_cfg.hop_length}, got mel {mel.shape} "
            f"and pitch {pitch.shape}"
        )


def _summary(utterance_id: str, pitch: np.ndarray, computed: bool) -> UtteranceSummary:
    voiced = pitch[pitch > 0].astype(np.float64)
    return UtteranceSummary(
        utterance_id, int(pitch.size), int(voiced.size), float(voiced.sum()), float(np.square(voiced).sum()), computed
    )


def _reuse(utterance: Utterance, out_dir: Path, audio_cfg: AudioConfig) -> UtteranceSummary | None:
    """The summary of an existing, fresh and well-shaped file pair, or None if it must be computed."""
    layout = FeatureLayout(out_dir)
    mel_path, pitch_path = layout.mel(utterance.id), layout.pitch(utterance.id)
    try:
        wav_mtime = os.stat(utterance.wav).st_mtime_ns
        if min(os.stat(mel_path).st_mtime_ns, os.stat(pitch_path).st_mtime_ns) < wav_mtime:
            return None
        mel_shape = np.load(mel_path, mmap_mode="r").shape  # header only
        pitch = np.load(pitch_path)
    except (OSError, ValueError):
        return None
    expected = utterance.n_samples // audio_cfg.hop_length
    if mel_shape != (audio_cfg.n_mel_channels, expected) or pitch.shape != (expected,):
        return None
    return _summary(utterance.id, pitch, computed=False)


def _save_all(items: Sequence[tuple[Path, np.ndarray]]) -> None:
    # No fsync per file: the stage calls files.sync() once before writing its index (the marker).
    for path, array in items:
        files.save_npy(path, array, fsync=False)


class ArrayWriter:
    """Writes ``.npy`` files atomically on a background thread, so that a worker computes the next
    utterance while the last one's files are written.

    Use as a context manager; leaving it waits for every write and raises the first error. At most
    ``max_pending`` writes are queued, which bounds the memory held by arrays waiting to be written.
    """

    def __init__(self, max_pending: int = 64) -> None:
        self.max_pending = max_pending
        self._pool: ThreadPoolExecutor | None = None
        self._pending: deque[Future[None]] = deque()

    def __enter__(self) -> ArrayWriter:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="npy-writer")
        return self

    def write(self, *items: tuple[Path, np.ndarray]) -> None:
        """Queue ``(path, array)`` pairs as one task (one thread hand-off per utterance, not per file)."""
        assert self._pool is not None, "ArrayWriter used outside its with-block"
        while len(self._pending) >= self.max_pending:
            self._pending.popleft().result()
        self._pending.append(self._pool.submit(_save_all, items))

    def __exit__(self, *exc_info: object) -> None:
        assert self._pool is not None
        try:
            while self._pending:
                self._pending.popleft().result()
        finally:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


def compute_utterance(
    extractor: FeatureExtractor, utterance: Utterance, out_dir: Path, writer: ArrayWriter
) -> UtteranceSummary:
    """Read the wav, compute its mel and pitch, check their lengths and hand both to ``writer``."""
    from tts_pipeline.audio import load_wav

    cfg = extractor.audio_cfg
    audio = load_wav(utterance.wav, cfg.sampling_rate, cfg.max_wav_value)
    if audio.size != utterance.n_samples:
        raise UserError(
            f"utterance {utterance.id}: {utterance.wav} has {audio.size} samples but the manifest says "
            f"{utterance.n_samples}; the corpus changed after the manifest was made (rerun the manifest stage)"
        )
    mel, pitch = extractor.extract(audio)
    check_lengths(utterance.id, utterance.n_samples, mel, pitch, cfg)
    # Second line of defence behind the manifest's non-finite check: a NaN here would reach training
    # as a non-finite loss that names no utterance.
    for name, array in (("mel", mel), ("pitch", pitch)):
        if not np.isfinite(array).all():
            raise UserError(
                f"utterance {utterance.id}: its {name} holds NaN or infinite values ({utterance.wav}); "
                "check the audio (the manifest stage rejects NaN / Inf samples as non_finite_audio)"
            )
    layout = FeatureLayout(out_dir)
    writer.write(
        (layout.mel(utterance.id), mel.astype(np.float32, copy=False)),
        (layout.pitch(utterance.id), pitch.astype(np.float32, copy=False)),
    )
    return _summary(utterance.id, pitch, computed=True)


# --------------------------------------------------------------------------------------------------
# many utterances
# --------------------------------------------------------------------------------------------------


@contextlib.contextmanager
def single_threaded_torch() -> Iterator[None]:
    """One intra-op thread while extracting: clips are small, and the pool supplies the parallelism."""
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def _init_worker() -> None:
    import torch

    torch.set_num_threads(1)


def _process_chunk(
    audio_json: str, pitch_json: str, praat_rate: int | None, utterances: Sequence[Utterance], out_dir: str
) -> list[UtteranceSummary]:
    """A pool task: configs travel as JSON (small, and the same everywhere)."""
    extractor = FeatureExtractor(
        AudioConfig.model_validate_json(audio_json), PitchConfig.model_validate_json(pitch_json), praat_rate
    )
    with ArrayWriter() as writer:
        return [compute_utterance(extractor, utterance, Path(out_dir), writer) for utterance in utterances]


def settings_record(audio_cfg: AudioConfig, pitch_cfg: PitchConfig, praat_rate: int | None = None) -> dict[str, Any]:
    """What the arrays depend on: both config sections, a hash of the extraction code, library versions."""
    import importlib.util

    code = hashlib.sha256()
    for module in _VALUE_MODULES:
        spec = importlib.util.find_spec(module)
        assert spec is not None and spec.origin, module
        code.update(module.encode() + b"\0" + Path(spec.origin).read_bytes() + b"\0")
    versions = {}
    for name in _VALUE_LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    record = {
        "audio": audio_cfg.model_dump(mode="json"),
        "pitch": pitch_cfg.model_dump(mode="json"),
        "praat_rate": praat_rate,
        "code": code.hexdigest()[:16],
        "libraries": versions,
    }
    record["fingerprint"] = hashlib.sha256(json.dumps(record, sort_keys=True).encode()).hexdigest()[:16]
    return record


def prepare_out_dir(out_dir: Path, settings: dict[str, Any], keep_ids: set[str]) -> bool:
    """Make the folders ready for a (re)run; return True if earlier arrays were wiped.

    Different settings (or no state file) empty both folders before the new state is written, so a
    file in them is always one made with the recorded settings. Temporary files of a killed run and
    arrays of utterances no longer listed are removed.
    """
    layout = FeatureLayout(out_dir)
    state_path = layout.extraction_state
    try:
        previous = json.loads(state_path.read_text(encoding="utf-8")).get("fingerprint")
    except (OSError, ValueError, AttributeError):
        previous = None
    folders = [layout.folder(kind) for kind in FRAME_KINDS]
    wiped = previous != settings["fingerprint"] and any(folder.exists() for folder in folders)
    if previous != settings["fingerprint"]:
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True)
    files.write_json(state_path, settings)
    for folder in folders:
        for path in folder.iterdir():
            if path.name.startswith(".") and path.name.endswith(".tmp"):
                path.unlink(missing_ok=True)
            elif path.suffix == ".npy" and path.stem not in keep_ids:
                path.unlink(missing_ok=True)
    return wiped


def _chunks(items: Sequence[Utterance], workers: int) -> list[Sequence[Utterance]]:
    size = max(1, min(_MAX_CHUNK, len(items) // (workers * 8) or 1))
    return [items[i : i + size] for i in range(0, len(items), size)]


# What a worker imports; the fork server loads it once and forks every worker from that state.
_WORKER_PRELOAD = ["torch", "librosa.filters", "parselmouth", "tts_pipeline.audio", "tts_pipeline.features.pitch"]


def _worker_context() -> multiprocessing.context.BaseContext:
    """A fork server where there is one: workers start as quickly as with fork (the heavy imports
    happen once, in the server), but from a clean process, never from a parent whose OpenMP or
    tracking threads might be mid-operation. Elsewhere, the platform default."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context()
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(_WORKER_PRELOAD)
    return context


def extract_all(
    utterances: Sequence[Utterance],
    out_dir: str | Path,
    audio_cfg: AudioConfig,
    pitch_cfg: PitchConfig,
    *,
    workers: int = 1,
    praat_rate: int | None = None,
    progress: bool = True,
) -> ExtractionResult:
    """Compute (or reuse) the mels and pitch of every utterance with ``workers`` processes.

    ``workers <= 1`` runs in this process. ``praat_rate``: see :class:`FeatureExtractor`. The progress
    bar goes to stderr and only shows on a terminal.
    """
    from tqdm import tqdm

    out_dir = Path(out_dir)
    ids = [utterance.id for utterance in utterances]
    duplicates = sorted(name for name, count in Counter(ids).items() if count > 1)
    if duplicates:
        raise UserError(f"utterance ids listed more than once across the manifests: {duplicates[:10]}")
    start = time.perf_counter()
    wiped = prepare_out_dir(out_dir, settings_record(audio_cfg, pitch_cfg, praat_rate), set(ids))
    if wiped:
        log.info("features: settings or code changed since the last run; recomputing everything")
    # Reuse is decided here, cheaply (stat calls and small reads): workers only get real work, and a
    # rerun with nothing to do never starts them.
    summaries: dict[str, UtteranceSummary] = {}
    todo: list[Utterance] = []
    for utterance in utterances:
        reused = _reuse(utterance, out_dir, audio_cfg)
        if reused is None:
            todo.append(utterance)
        else:
            summaries[utterance.id] = reused
    bar = tqdm(total=len(todo), unit="utt", file=sys.stderr, disable=None if progress else True)
    with bar:
        if todo and (workers <= 1 or len(todo) == 1):
            extractor = FeatureExtractor(audio_cfg, pitch_cfg, praat_rate)
            with single_threaded_torch(), ArrayWriter() as writer:
                for utterance in todo:
                    summaries[utterance.id] = compute_utterance(extractor, utterance, out_dir, writer)
                    bar.update(1)
        elif todo:
            audio_json, pitch_json = audio_cfg.model_dump_json(), pitch_cfg.model_dump_json()
            with ProcessPoolExecutor(workers, mp_context=_worker_context(), initializer=_init_worker) as pool:
                futures = [
                    pool.submit(_process_chunk, audio_json, pitch_json, praat_rate, chunk, str(out_dir))
                    for chunk in _chunks(todo, workers)
                ]
                try:
                    for future in as_completed(futures):
                        for summary in future.result():
                            summaries[summary.id] = summary
                            bar.update(1)
                except BaseException:
                    for future in futures:
                        future.cancel()
                    raise
    ordered = [summaries[utterance.id] for utterance in utterances]
    computed = sum(summary.computed for summary in ordered)
    return ExtractionResult(
        summaries=ordered,
        n_computed=computed,
        n_reused=len(ordered) - computed,
        wiped=wiped,
        seconds=time.perf_counter() - start,
    )
