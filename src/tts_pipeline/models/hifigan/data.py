"""How a HiFi-GAN batch is built: fixed-length audio segments, with their mels when fine-tuning.

- :class:`AudioSegments` (base training): a random ``segment_size``-sample crop of each clip. The
  input mel is not computed here: the trainer computes it on the device from the segment with
  :class:`tts_pipeline.audio.MelSpectrogram`, the one mel function.
- :class:`MelAudioSegments` (fine-tuning): a random run of ``segment_size // hop`` frames of a
  FastPitch mel (``<mels_dir>/<id>.npy``, ``(n_mels, T)``, ``T = n_samples // hop``) and the audio
  samples ``[start * hop, (start + frames) * hop)`` of the same clip, so mel frame ``i`` of the item
  is centred on audio sample ``hop * i + hop / 2`` of the item, as in the one mel function.

Audio is ``load_wav`` (``x / 32768``, no peak normalisation; see :mod:`tts_pipeline.audio`). Clips
shorter than a segment are zero-padded at the end; their mel is padded with the log-mel of silence.

Where crops come from (a numpy ``Generator`` either way):

- Training (``fixed_segments_seed=None``): one RNG per process and epoch, seeded with
  ``(torch.initial_seed(), epoch)``. In a DataLoader worker ``torch.initial_seed()`` is the worker's
  seed (the loader's base seed, drawn from the main process's torch RNG at each epoch unless workers
  are persistent, plus the worker id), so workers draw different crops; without workers it is the
  process's torch seed, and the trainer's :meth:`set_epoch` makes each epoch's crops differ and
  reproducible (seed torch per rank, e.g. ``seed + rank``, so DDP ranks differ too). With persistent
  workers ``set_epoch`` does not reach the workers' copies; their RNG simply continues across epochs.
- Validation (``fixed_segments_seed`` set): item ``i``'s crop comes from an RNG seeded with
  ``(fixed_segments_seed, i)`` alone, so validation segments are identical on every run, whatever
  the workers, batch or order.

``repeats`` lists the clips that many times (validation uses each clip ``validation_repeats`` times,
each repeat with its own fixed crop).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.utils.data import Dataset

from tts_pipeline.audio import LOG_FLOOR, load_wav
from tts_pipeline.config import AudioConfig
from tts_pipeline.config.rules import check_segment_size
from tts_pipeline.data.manifest_record import ManifestRecord
from tts_pipeline.errors import UserError

# The log-mel of silence (every bin at the clamp floor): what padded frames of a mel hold, matching
# the zero samples padded onto the audio.
SILENCE_LOG_MEL = math.log(LOG_FLOOR)


class _Segments(Dataset[dict[str, Any]]):
    """Shared record handling, RNG policy and audio loading (see the module docstring)."""

    def __init__(
        self,
        records: Sequence[ManifestRecord],
        audio: AudioConfig,
        segment_size: int,
        *,
        fixed_segments_seed: int | None = None,
        repeats: int = 1,
        pitch_dir: str | Path | None = None,
    ) -> None:
        if not records:
            raise UserError("HiFi-GAN dataset: no utterances (is the manifest empty?)")
        check_segment_size(segment_size, audio.hop_length)
        if repeats < 1:
            raise ValueError(f"repeats: expected >= 1, got {repeats}")
        self.records = list(records)
        self.audio = audio
        self.segment_size = int(segment_size)
        self.fixed_segments_seed = fixed_segments_seed
        self.repeats = int(repeats)
        self.pitch_dir = Path(pitch_dir) if pitch_dir is not None else None
        self.epoch = 0
        self._rng: np.random.Generator | None = None
        self._rng_key: tuple[int, int] | None = None

    def __len__(self) -> int:
        return len(self.records) * self.repeats

    def set_epoch(self, epoch: int) -> None:
        """Start the crop stream of ``epoch`` (training only; no effect on fixed validation crops)."""
        self.epoch = int(epoch)

    def _item(self, index: int) -> tuple[int, ManifestRecord]:
        """``index`` made non-negative, and its record."""
        if not -len(self) <= index < len(self):
            raise IndexError(f"index {index} out of range for {len(self)} items")
        index %= len(self)
        return index, self.records[index % len(self.records)]

    def _rng_for(self, index: int) -> np.random.Generator:
        """The RNG that draws item ``index``'s crop (``index`` non-negative)."""
        if self.fixed_segments_seed is not None:
            return np.random.default_rng([int(self.fixed_segments_seed), index])
        key = (torch.initial_seed(), self.epoch)
        if self._rng is None or self._rng_key != key:
            self._rng = np.random.default_rng([key[0], key[1]])
            self._rng_key = key
        return self._rng

    def _load(self, record: ManifestRecord) -> np.ndarray:
        """The clip as float32 ``(N,)``; its length must be the manifest's ``n_samples``."""
        samples = load_wav(record.wav, self.audio.sampling_rate, self.audio.max_wav_value)
        if samples.size != record.n_samples:
            raise UserError(
                f"utterance {record.id}: {record.wav} has {samples.size} samples but the manifest says "
                f"{record.n_samples} (stale manifest?)"
            )
        return samples

    def _pitch(self, record: ManifestRecord, start_frame: int) -> dict[str, torch.Tensor]:
        """``{"f0": (segment_size // hop,) float32}``, the pitch features (Hz, 0 = unvoiced) of the crop's
        frames from ``start_frame`` (0 past the clip's end), or ``{}`` without a ``pitch_dir``."""
        if self.pitch_dir is None:
            return {}
        path = self.pitch_dir / f"{record.id}.npy"
        frames = self.segment_size // self.audio.hop_length
        try:
            track = np.load(path, mmap_mode="r")
        except (OSError, ValueError) as error:
            raise UserError(f"utterance {record.id}: pitch features {path} do not load ({error})") from error
        if track.ndim != 1:
            raise UserError(f"utterance {record.id}: {path} has shape {track.shape}, expected (n_frames,) F0 in Hz")
        crop = np.zeros(frames, dtype=np.float32)
        piece = np.asarray(track[start_frame : start_frame + frames], dtype=np.float32)
        crop[: piece.size] = piece
        return {"f0": torch.from_numpy(crop)}


def _fit(samples: np.ndarray, length: int) -> np.ndarray:
    """``samples`` cut or zero-padded at the end to exactly ``length``."""
    if samples.size >= length:
        return samples[:length]
    return np.pad(samples, (0, length - samples.size))


class AudioSegments(_Segments):
    """Base training: a ``segment_size``-sample crop of each clip.

    Args:
        records: Manifest records (``id``, ``wav``, ``n_samples``).
        audio: The audio section (sampling rate, hop, ``max_wav_value``).
        segment_size: Samples per item (a multiple of the hop).
        fixed_segments_seed: Seed of fixed per-item crops (validation); None = fresh crops (training).
        repeats: How many times the records are listed.
        pitch_dir: Folder of the pitch features ``<id>.npy`` (``hifigan.source: harmonic``): items then
            hold ``"f0"`` too, ``(segment_size // hop,)`` Hz of the crop's frames.

    Items: ``{"id": str, "audio": float32 (segment_size,)}``; the start sample is uniform in
    ``[0, N - segment_size)`` (0 when the clip is not longer than a segment).
    """

    def __getitem__(self, index: int) -> dict[str, Any]:
        index, record = self._item(index)
        samples = self._load(record)
        start = 0
        if samples.size > self.segment_size:
            start = int(self._rng_for(index).integers(0, samples.size - self.segment_size))
        segment = _fit(samples[start : start + self.segment_size], self.segment_size)
        # the crop's mel frame j is centred on sample start + j * hop: the nearest feature frame's pitch
        pitch = self._pitch(record, round(start / self.audio.hop_length))
        return {"id": record.id, "audio": torch.from_numpy(np.ascontiguousarray(segment, dtype=np.float32)), **pitch}


class MelAudioSegments(_Segments):
    """Fine-tuning: a crop of ``segment_size // hop`` frames of a precomputed mel and the matching audio.

    Args:
        records: Manifest records (``id``, ``wav``, ``n_samples``).
        audio: The audio section.
        segment_size: Samples per item (a multiple of the hop).
        mels_dir: Folder of ``<id>.npy`` float32 ``(n_mels, T)``, ``T = n_samples // hop``.
        fixed_segments_seed: Seed of fixed per-item crops (validation); None = fresh crops (training).
        repeats: How many times the records are listed.
        pitch_dir: As for :class:`AudioSegments` (``"f0"`` of the crop's frames).

    Every mel file's shape is checked when the dataset is built (header only), and all mismatches
    are reported together in one :class:`UserError`.

    Items: ``{"id": str, "audio": float32 (segment_size,), "mel": float32 (n_mels, segment_size // hop)}``;
    the start frame is uniform in ``[0, T - frames)`` (0 when the mel is not longer than a segment).
    """

    def __init__(
        self,
        records: Sequence[ManifestRecord],
        audio: AudioConfig,
        segment_size: int,
        mels_dir: str | Path,
        *,
        fixed_segments_seed: int | None = None,
        repeats: int = 1,
        pitch_dir: str | Path | None = None,
    ) -> None:
        super().__init__(
            records,
            audio,
            segment_size,
            fixed_segments_seed=fixed_segments_seed,
            repeats=repeats,
            pitch_dir=pitch_dir,
        )
        self.mels_dir = Path(mels_dir)
        self.frames = self.segment_size // audio.hop_length
        problems = [problem for record in self.records if (problem := self._check_mel(record))]
        if problems:
            shown = "\n  ".join(problems[:20])
            more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
            raise UserError(f"fine-tuning mels in {self.mels_dir}: {len(problems)} problem(s):\n  {shown}{more}")

    def mel_path(self, utterance_id: str) -> Path:
        return self.mels_dir / f"{utterance_id}.npy"

    def _check_mel(self, record: ManifestRecord) -> str | None:
        path = self.mel_path(record.id)
        expected = (self.audio.n_mel_channels, record.n_samples // self.audio.hop_length)
        try:
            shape = np.load(path, mmap_mode="r").shape
        except FileNotFoundError:
            return f"utterance {record.id}: {path} is missing"
        except (OSError, ValueError) as error:
            return f"utterance {record.id}: {path} does not load ({error})"
        if tuple(shape) != expected:
            return (
                f"utterance {record.id}: {path} has shape {tuple(shape)}, expected {expected} "
                f"(n_mels, n_samples // hop_length)"
            )
        return None

    def __getitem__(self, index: int) -> dict[str, Any]:
        index, record = self._item(index)
        mel = np.load(self.mel_path(record.id), mmap_mode="r")  # only the crop is read
        samples = self._load(record)
        hop, frames = self.audio.hop_length, self.frames
        start = 0
        if mel.shape[1] > frames:
            start = int(self._rng_for(index).integers(0, mel.shape[1] - frames))
        mel_crop = np.array(mel[:, start : start + frames], dtype=np.float32)
        if mel_crop.shape[1] < frames:
            mel_crop = np.pad(mel_crop, ((0, 0), (0, frames - mel_crop.shape[1])), constant_values=SILENCE_LOG_MEL)
        segment = _fit(samples[start * hop : (start + frames) * hop], self.segment_size)
        return {
            "id": record.id,
            "audio": torch.from_numpy(np.ascontiguousarray(segment, dtype=np.float32)),
            "mel": torch.from_numpy(np.ascontiguousarray(mel_crop)),
            **self._pitch(record, start),
        }
