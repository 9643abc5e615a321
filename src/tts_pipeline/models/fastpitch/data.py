"""How a FastPitch batch is built: per-utterance symbols, durations, per-token pitch and energy, target mel.

Everything comes from the features folder that the ``features`` and ``durations`` stages wrote:

- ``mels/<id>.npy``: float32 ``(n_mels, T)`` log-mel, the target (and the source of energy);
- ``symbols/<id>.npy``: int32 ``(L,)`` symbol ids (0 is the pad id and never a symbol);
- ``durations/<id>.npy``: int32 ``(L,)`` mel frames per symbol, summing to ``T``;
- ``symbol_pitch/<id>.npy``: float32 ``(L,)`` mean voiced pitch of each symbol in Hz, 0 = unvoiced;
- ``pitch_stats.json``: mean and std (Hz) of the voiced training frames, and each speaker's for a
  multi-speaker corpus (:class:`Speakers`);
- ``durations.json``: the symbol table and where the symbols came from (:class:`TextSettings`).

Targets (reference sections 3.2 and 3.5):

- pitch: ``(hz - mean) / std`` per token; an unvoiced token (0 Hz) stays 0, which in normalised
  space is the mean pitch. In a multi-speaker dataset the mean and std are the utterance's own
  speaker's, not the corpus's: 0 is each speaker's own mean, so the pitch predictor and embedding
  learn intonation and the speaker embedding carries register. NVIDIA normalises every speaker with
  one corpus-wide mean and std (their multi-speaker checkpoints keep that: a file without speaker
  names is read with its one ``pitch_mean`` / ``pitch_std``);
- energy: the L2 norm over the mel bins of each log-mel frame, averaged per token over its frames
  (:func:`tts_pipeline.alignment.symbol_mean`, the average that per-token pitch uses), then
  ``log(1 + average)``.

Every utterance's files are checked when the dataset is built (lengths agree, durations sum to the
mel's frames), and all problems are reported together, each naming the utterance and the file.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch.utils.data import Dataset

from tts_pipeline.alignment import symbol_mean
from tts_pipeline.data.feature_layout import DURATIONS, MELS, SYMBOL_KINDS, SYMBOL_PITCH, SYMBOLS, FeatureLayout
from tts_pipeline.data.manifest_record import ManifestRecord
from tts_pipeline.errors import UserError
from tts_pipeline.models.mel_batch import MelBatchCounts

if TYPE_CHECKING:
    from tts_pipeline.models.fastpitch import FastPitchInputs

FEATURE_KINDS = (MELS, *SYMBOL_KINDS)
MAX_PROBLEMS_SHOWN = 20


# --------------------------------------------------------------------------------------------------
# what the features folder records about the whole corpus
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PitchStats:
    """Mean and standard deviation (Hz) of the voiced training frames; normalises pitch."""

    mean: float
    std: float

    def __post_init__(self) -> None:
        if not (self.mean > 0 and self.std > 0):
            raise UserError(f"pitch statistics: expected a positive mean and std, got {self.mean} / {self.std}")

    @classmethod
    def read(cls, path: str | Path) -> PitchStats:
        """Read ``pitch_stats.json`` (the ``features`` stage's ``mean`` / ``std``)."""
        try:
            payload = json.loads(Path(path).read_text(encoding="utf-8"))
            return cls(mean=float(payload["mean"]), std=float(payload["std"]))
        except FileNotFoundError:
            raise UserError(f"pitch statistics not found: {path} (run the features stage)") from None
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise UserError(f"{path}: not a pitch statistics file with 'mean' and 'std' ({error})") from None

    def normalise(self, hz: np.ndarray) -> np.ndarray:
        """``(hz - mean) / std`` where ``hz > 0``; 0 (unvoiced) stays 0. Float32, same shape."""
        hz = np.asarray(hz, dtype=np.float32)
        return np.where(hz > 0, (hz - self.mean) / self.std, 0.0).astype(np.float32)

    def to_hz(self, normalised: np.ndarray) -> np.ndarray:
        """Inverse of :meth:`normalise` for voiced values (every value is mapped back)."""
        return (np.asarray(normalised, dtype=np.float32) * self.std + self.mean).astype(np.float32)


@dataclass(frozen=True)
class Speaker:
    """One speaker of a multi-speaker model: its name and the pitch statistics its pitch is normalised
    with; its id is its place in :class:`Speakers`."""

    name: str
    pitch: PitchStats


@dataclass(frozen=True)
class Speakers:
    """The speakers a FastPitch trains on, in id order (names sorted, ids ``0 .. n - 1``), each with its
    own pitch statistics (module docstring: why per speaker).

    Attributes:
        entries: One :class:`Speaker` per id.
    """

    entries: tuple[Speaker, ...]

    def __post_init__(self) -> None:
        names = [speaker.name for speaker in self.entries]
        if not names or names != sorted(set(names)):
            raise ValueError(f"speakers: expected distinct names in sorted order (their ids), got {names}")

    def __len__(self) -> int:
        return len(self.entries)

    @property
    def names(self) -> tuple[str, ...]:
        """Names in id order."""
        return tuple(speaker.name for speaker in self.entries)

    @property
    def pitch(self) -> dict[str, PitchStats]:
        """``{name: pitch statistics}`` in id order."""
        return {speaker.name: speaker.pitch for speaker in self.entries}

    def id_of(self, name: str) -> int | None:
        """The id of speaker ``name``, or None if it is not one of them."""
        return self.names.index(name) if name in self.names else None

    @classmethod
    def read(cls, path: str | Path) -> Speakers | None:
        """The speakers of the ``features`` stage's ``pitch_stats.json`` (its ``speakers`` section), or None
        for a single-speaker corpus (no such section). UserError naming the file and the speaker when an
        entry is not ``{"mean", "std"}`` with positive values."""
        try:
            payload = json.loads(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise UserError(f"pitch statistics not found: {path} (run the features stage)") from None
        except (OSError, ValueError) as error:
            raise UserError(f"{path}: not a pitch statistics file ({error})") from None
        section = payload.get("speakers") if isinstance(payload, dict) else None
        if not section:
            return None
        entries = []
        for name in sorted(section):
            try:
                stats = PitchStats(mean=float(section[name]["mean"]), std=float(section[name]["std"]))
            except (KeyError, TypeError, ValueError) as error:
                raise UserError(f"{path}: speaker {name!r}: expected 'mean' and 'std' in Hz ({error})") from None
            except UserError as error:
                raise UserError(f"{path}: speaker {name!r}: {error}") from None
            entries.append(Speaker(name, stats))
        return cls(tuple(entries))

    def as_list(self) -> list[dict[str, Any]]:
        """``[{"name", "pitch_mean", "pitch_std"}, ...]`` in id order: what a model file records."""
        return [
            {"name": speaker.name, "pitch_mean": speaker.pitch.mean, "pitch_std": speaker.pitch.std}
            for speaker in self.entries
        ]

    @classmethod
    def from_list(cls, payload: Any, where: str) -> Speakers:
        """Inverse of :meth:`as_list`; UserError naming ``where`` (a model file) when it is not such a list."""
        try:
            entries = tuple(
                Speaker(str(item["name"]), PitchStats(float(item["pitch_mean"]), float(item["pitch_std"])))
                for item in payload
            )
            return cls(entries)
        except (KeyError, TypeError, ValueError) as error:
            raise UserError(
                f"{where}: 'speakers' is not a list of {{name, pitch_mean, pitch_std}} in id order ({error})"
            ) from None


@dataclass(frozen=True)
class TextSettings:
    """How text becomes the model's input ids; recorded in the FastPitch model file for inference.

    Attributes:
        symbols: The symbol table; an id indexes it, 0 is the pad.
        source: Where durations came from: ``"aligner"``, ``"tacotron2"`` or ``"textgrid"``.
        symbols_kind: ``"characters"`` or ``"arpabet"`` (cleaned text encoded by
            :func:`tts_pipeline.text.encode`), or ``"textgrid"`` (phone labels of a TextGrid tier,
            which new text cannot produce without an external aligner/phonemiser).
        symbol_set: The symbol set of ``characters`` / ``arpabet`` (e.g. ``english_basic``).
        cleaners: The text cleaners the training text went through (``text.cleaners``).
        pause_symbol: The silence symbol of TextGrid phones.
        unknown_symbol: The symbol unseen TextGrid phones map to.
    """

    symbols: tuple[str, ...]
    source: str
    symbols_kind: str
    symbol_set: str | None = None
    cleaners: str | None = None
    pause_symbol: str | None = None
    unknown_symbol: str | None = None

    @classmethod
    def from_durations_index(cls, path: str | Path, cleaners: str | None) -> TextSettings:
        """Read the symbol table and its origin from the ``durations`` stage's ``durations.json``."""
        try:
            index = json.loads(Path(path).read_text(encoding="utf-8"))
            symbols = tuple(str(symbol) for symbol in index["symbols"])
            source, kind = str(index["source"]), str(index["symbols_kind"])
        except FileNotFoundError:
            raise UserError(f"durations index not found: {path} (run the durations stage)") from None
        except (OSError, ValueError, KeyError, TypeError) as error:
            expected = "'symbols', 'source' and 'symbols_kind'"
            raise UserError(f"{path}: not a durations index with {expected} ({error})") from None
        if len(symbols) < 2 or int(index.get("pad_id", 0)) != 0:
            raise UserError(f"{path}: expected a symbol table with the pad at id 0 and at least one symbol")
        return cls(
            symbols=symbols,
            source=source,
            symbols_kind=kind,
            symbol_set=index.get("symbol_set"),
            cleaners=cleaners,
            pause_symbol=index.get("pause_symbol"),
            unknown_symbol=index.get("unknown_symbol"),
        )

    @classmethod
    def from_dict(cls, payload: Mapping[str, Any]) -> TextSettings:
        return cls(**{**payload, "symbols": tuple(payload["symbols"])})

    def as_dict(self) -> dict[str, Any]:
        """Plain values (a model file stores them; ``weights_only`` loading reads them back)."""
        return {
            "symbols": list(self.symbols),
            "source": self.source,
            "symbols_kind": self.symbols_kind,
            "symbol_set": self.symbol_set,
            "cleaners": self.cleaners,
            "pause_symbol": self.pause_symbol,
            "unknown_symbol": self.unknown_symbol,
        }


def token_energy(mel: np.ndarray, durations: np.ndarray) -> np.ndarray:
    """Per-token energy target ``log(1 + mean over the token's frames of ||mel[:, t]||_2)``.

    Args:
        mel: ``(n_mels, T)`` log-mel.
        durations: ``(L,)`` frames per token, summing to ``T``.

    Returns:
        ``(L,)`` float32; a zero-length token gets ``log(1 + 0) = 0``.
    """
    frame_energy = np.linalg.norm(np.asarray(mel, dtype=np.float64), axis=0)
    return np.log1p(symbol_mean(frame_energy, durations, what="mel frames")).astype(np.float32)


# --------------------------------------------------------------------------------------------------
# items
# --------------------------------------------------------------------------------------------------


@dataclass
class FastPitchItem:
    """One utterance.

    Attributes:
        id: Utterance id.
        tokens: ``(L,)`` int64 symbol ids (>= 1).
        durations: ``(L,)`` int64 frames per token, summing to ``T``.
        pitch: ``(L,)`` float32 normalised per-token pitch (0 = unvoiced).
        energy: ``(L,)`` float32 ``log(1 + e)`` per token, or None without energy conditioning.
        mel: ``(n_mels, T)`` float32 target log-mel.
        speaker: The speaker id (its pitch statistics normalised ``pitch``), or None in a dataset
            without speakers.
    """

    id: str
    tokens: torch.Tensor
    durations: torch.Tensor
    pitch: torch.Tensor
    energy: torch.Tensor | None
    mel: torch.Tensor
    speaker: int | None = None


@dataclass
class _Entry:
    """What is kept in memory per utterance after the checks: its id, symbols, durations, frames, speaker id."""

    id: str
    tokens: np.ndarray
    durations: np.ndarray
    n_frames: int
    speaker: int | None = None


def feature_path(features_dir: Path, kind: str, utterance_id: str) -> Path:
    """``<features_dir>/<kind>/<id>.npy`` for a kind of :data:`FEATURE_KINDS`."""
    return FeatureLayout(features_dir).path(kind, utterance_id)


class FastPitchDataset(Dataset[FastPitchItem]):
    """Utterances of a manifest with their FastPitch inputs and targets (module docstring).

    Args:
        records: Manifest records (their ``id``, and their ``speaker`` with ``speakers``).
        features_dir: The features folder (``mels/``, ``symbols/``, ``durations/``, ``symbol_pitch/``).
        pitch_stats: Normalisation of per-token pitch (of every utterance, without ``speakers``).
        n_mels: Expected mel channels.
        n_symbols: Size of the symbol table; ids must lie in ``[1, n_symbols)``. None = unchecked.
        with_energy: Compute per-token energy (FastPitch's energy conditioning).
        speakers: A multi-speaker model's speakers: each item carries its speaker's id, and its pitch is
            normalised with that speaker's statistics. None: no speaker ids, ``pitch_stats`` for all
            (a record's ``speaker`` is then not read).

    Raises:
        UserError: listing every utterance whose files are missing, unreadable or disagree, or (with
            ``speakers``) whose speaker is missing or not one of them.
    """

    def __init__(
        self,
        records: Sequence[ManifestRecord],
        features_dir: str | Path,
        pitch_stats: PitchStats,
        n_mels: int,
        *,
        n_symbols: int | None = None,
        with_energy: bool = True,
        speakers: Speakers | None = None,
    ) -> None:
        self.features_dir = Path(features_dir)
        self.pitch_stats = pitch_stats
        self.n_mels = int(n_mels)
        self.n_symbols = n_symbols
        self.with_energy = with_energy
        self.speakers = speakers
        self.entries: list[_Entry] = []
        problems: list[str] = []
        for record in records:
            speaker = self._speaker_id(record, problems)
            entry = self._check(record.id, problems)
            if entry is not None and (speakers is None or speaker is not None):
                entry.speaker = speaker
                self.entries.append(entry)
        if problems:
            shown = "\n  ".join(problems[:MAX_PROBLEMS_SHOWN])
            more = len(problems) - MAX_PROBLEMS_SHOWN
            tail = f"\n  ... and {more} more" if more > 0 else ""
            raise UserError(f"FastPitch data in {self.features_dir}: {len(problems)} problem(s):\n  {shown}{tail}")

    def path(self, kind: str, utterance_id: str) -> Path:
        return feature_path(self.features_dir, kind, utterance_id)

    def _speaker_id(self, record: ManifestRecord, problems: list[str]) -> int | None:
        """The record's speaker id (None without ``speakers``); a missing or unknown speaker is a problem."""
        if self.speakers is None:
            return None
        known = ", ".join(self.speakers.names)
        if record.speaker is None:
            problems.append(f"utterance {record.id}: its manifest record names no speaker; expected one of {known}")
            return None
        speaker = self.speakers.id_of(record.speaker)
        if speaker is None:
            problems.append(f"utterance {record.id}: speaker {record.speaker!r} is not one of the speakers ({known})")
        return speaker

    def pitch_stats_of(self, speaker: int | None) -> PitchStats:
        """The pitch statistics an item of speaker id ``speaker`` is normalised with."""
        if self.speakers is None or speaker is None:
            return self.pitch_stats
        return self.speakers.entries[speaker].pitch

    @property
    def speaker_ids(self) -> list[int | None]:
        """Each utterance's speaker id, in dataset order (None without speakers)."""
        return [entry.speaker for entry in self.entries]

    def _load(self, kind: str, utterance_id: str, **options: Any) -> np.ndarray:
        path = self.path(kind, utterance_id)
        try:
            return np.load(path, **options)
        except FileNotFoundError:
            raise UserError(f"utterance {utterance_id}: {path} is missing") from None
        except (OSError, ValueError) as error:
            raise UserError(f"utterance {utterance_id}: {path} does not load ({error})") from None

    def _check(self, utterance_id: str, problems: list[str]) -> _Entry | None:
        """Load the small per-utterance arrays and the mel's shape; record what is wrong."""
        try:
            shape = self._load(MELS, utterance_id, mmap_mode="r").shape
            tokens = self._load(SYMBOLS, utterance_id)
            durations = self._load(DURATIONS, utterance_id)
            pitch_shape = self._load(SYMBOL_PITCH, utterance_id, mmap_mode="r").shape
        except UserError as error:
            problems.append(str(error))
            return None
        where = f"utterance {utterance_id}"
        if len(shape) != 2 or shape[0] != self.n_mels:
            mel_path = self.path(MELS, utterance_id)
            problems.append(f"{where}: {mel_path} has shape {shape}, expected ({self.n_mels}, T)")
            return None
        n_frames = int(shape[1])
        if tokens.ndim != 1 or tokens.size == 0 or durations.shape != tokens.shape:
            problems.append(
                f"{where}: {tokens.size if tokens.ndim == 1 else tokens.shape} symbols in "
                f"{self.path('symbols', utterance_id)} but {durations.shape} durations in "
                f"{self.path('durations', utterance_id)}; rerun the durations stage"
            )
            return None
        if pitch_shape != tokens.shape:
            problems.append(
                f"{where}: {self.path('symbol_pitch', utterance_id)} has shape {pitch_shape}, expected "
                f"{tokens.shape} (one value per symbol); rerun the durations stage"
            )
            return None
        if (durations < 0).any() or int(durations.sum()) != n_frames:
            problems.append(
                f"{where}: durations in {self.path('durations', utterance_id)} sum to {int(durations.sum())} "
                f"but its mel has T = {n_frames} frames; rerun the durations stage"
            )
            return None
        high = self.n_symbols if self.n_symbols is not None else np.iinfo(np.int64).max
        if tokens.min() < 1 or tokens.max() >= high:
            problems.append(
                f"{where}: symbol ids in {self.path('symbols', utterance_id)} range over "
                f"[{tokens.min()}, {tokens.max()}], expected [1, {high - 1}] (0 is the pad)"
            )
            return None
        return _Entry(utterance_id, tokens.astype(np.int64), durations.astype(np.int64), n_frames)

    def __len__(self) -> int:
        return len(self.entries)

    @property
    def ids(self) -> list[str]:
        return [entry.id for entry in self.entries]

    @property
    def mel_lengths(self) -> list[int]:
        """``T`` of each utterance, in dataset order."""
        return [entry.n_frames for entry in self.entries]

    def __getitem__(self, index: int) -> FastPitchItem:
        entry = self.entries[index]
        mel = self._load(MELS, entry.id).astype(np.float32, copy=False)
        if mel.shape != (self.n_mels, entry.n_frames):
            # Checked when the dataset was built; a file replaced since then is caught here.
            raise UserError(
                f"utterance {entry.id}: {self.path('mels', entry.id)} changed to shape {mel.shape} during training"
            )
        pitch_hz = self._load(SYMBOL_PITCH, entry.id)
        energy = torch.from_numpy(token_energy(mel, entry.durations)) if self.with_energy else None
        return FastPitchItem(
            id=entry.id,
            tokens=torch.from_numpy(entry.tokens),
            durations=torch.from_numpy(entry.durations),
            pitch=torch.from_numpy(self.pitch_stats_of(entry.speaker).normalise(pitch_hz)),
            energy=energy,
            mel=torch.from_numpy(np.ascontiguousarray(mel)),
            speaker=entry.speaker,
        )


# --------------------------------------------------------------------------------------------------
# batches
# --------------------------------------------------------------------------------------------------


_BATCH_TENSORS = ("tokens", "token_lengths", "durations", "pitch", "energy", "mels", "mel_lengths", "speaker")


@dataclass
class FastPitchBatch(MelBatchCounts):
    """Padded utterances. Padding is 0 everywhere: pad token, zero duration, zero pitch/energy and an
    all-zero mel frame (the mel loss treats target zeros as padding, reference section 3.4).

    Attributes:
        ids: ``B`` utterance ids.
        tokens: ``(B, L)`` int64.
        token_lengths: ``(B,)`` int64.
        durations: ``(B, L)`` int64.
        pitch: ``(B, L)`` float32, normalised.
        energy: ``(B, L)`` float32 ``log(1 + e)``, or None.
        mels: ``(B, n_mels, T)`` float32 target log-mels.
        mel_lengths: ``(B,)`` int64, equal to ``durations.sum(1)``.
        speaker: ``(B,)`` int64 speaker ids, or None for items without speakers (a single-speaker model's
            batches: the model then takes speaker 0 without a check on the ids).
    """

    ids: list[str]
    tokens: torch.Tensor
    token_lengths: torch.Tensor
    durations: torch.Tensor
    pitch: torch.Tensor
    energy: torch.Tensor | None
    mels: torch.Tensor
    mel_lengths: torch.Tensor
    speaker: torch.Tensor | None = None

    def _map(self, fn: Any) -> FastPitchBatch:
        moved = {name: None if getattr(self, name) is None else fn(getattr(self, name)) for name in _BATCH_TENSORS}
        return FastPitchBatch(ids=list(self.ids), **moved)

    def to(self, device: torch.device | str, non_blocking: bool = False) -> FastPitchBatch:
        return self._map(lambda tensor: tensor.to(device, non_blocking=non_blocking))

    def pin_memory(self) -> FastPitchBatch:
        """Called by a DataLoader with ``pin_memory=True``."""
        return self._map(lambda tensor: tensor.pin_memory())

    def inputs(self) -> FastPitchInputs:
        """The model's teacher-forcing inputs."""
        from tts_pipeline.models.fastpitch import FastPitchInputs

        return FastPitchInputs(
            tokens=self.tokens,
            token_lengths=self.token_lengths,
            durations=self.durations,
            pitch=self.pitch,
            energy=self.energy,
            speaker=self.speaker,
        )


def _pad(tensors: Sequence[torch.Tensor], dtype: torch.dtype) -> torch.Tensor:
    """Right-pad 1-D tensors with zeros into ``(B, max length)``."""
    out = torch.zeros(len(tensors), max(int(t.shape[-1]) for t in tensors), dtype=dtype)
    for row, tensor in enumerate(tensors):
        out[row, : tensor.shape[-1]] = tensor
    return out


def collate(items: Sequence[FastPitchItem]) -> FastPitchBatch:
    """Pad items into a :class:`FastPitchBatch` (a module-level function, so worker processes pickle it).

    ValueError when some items carry a speaker id and others do not (items of two datasets mixed)."""
    if not items:
        raise ValueError("collate: no items")
    with_energy = items[0].energy is not None
    with_speaker = [item.speaker is not None for item in items]
    if any(with_speaker) and not all(with_speaker):
        raise ValueError(f"collate: items {[item.id for item in items]} mix speaker ids and none")
    n_mels = int(items[0].mel.shape[0])
    mel_lengths = torch.tensor([int(item.mel.shape[1]) for item in items], dtype=torch.int64)
    mels = torch.zeros(len(items), n_mels, int(mel_lengths.max()), dtype=torch.float32)
    for row, item in enumerate(items):
        mels[row, :, : item.mel.shape[1]] = item.mel
    return FastPitchBatch(
        ids=[item.id for item in items],
        tokens=_pad([item.tokens for item in items], torch.int64),
        token_lengths=torch.tensor([int(item.tokens.shape[0]) for item in items], dtype=torch.int64),
        durations=_pad([item.durations for item in items], torch.int64),
        pitch=_pad([item.pitch for item in items], torch.float32),
        energy=_pad([item.energy for item in items], torch.float32) if with_energy else None,  # type: ignore[misc]
        mels=mels,
        mel_lengths=mel_lengths,
        speaker=torch.tensor([item.speaker for item in items], dtype=torch.int64) if all(with_speaker) else None,
    )
