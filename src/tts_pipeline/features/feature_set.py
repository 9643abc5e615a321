"""The features of a whole corpus around :func:`~tts_pipeline.features.extract.extract_all`: which
utterances the manifests list, the training split's pitch statistics, and the index written last.

Per utterance the arrays are ``mels/<id>.npy`` float32 ``(n_mels, T)`` and ``pitch/<id>.npy`` float32
``(T,)`` (:mod:`tts_pipeline.features.extract`). Per corpus:

- ``pitch_stats.json``: mean and std (Hz) of the voiced frames of the training split, which FastPitch
  normalises pitch with, and what they were measured over; for a multi-speaker corpus (manifest records
  with ``speaker``) also ``speakers``: ``{name: {"mean", "std", "n_voiced_frames", "n_utterances"}}``
  over each speaker's training utterances, names sorted, with which FastPitch normalises each
  utterance's pitch by its own speaker (a voice an octave above another would otherwise sit at +2 std
  throughout, and the pitch predictor would spend itself learning who speaks);
- ``features.jsonl``: one ``{id, split, n_frames, n_voiced}`` line per utterance, in manifest order.
  It is written last, after the arrays are synced, so its presence means the folder is complete.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tts_pipeline import files
from tts_pipeline.config import PitchConfig
from tts_pipeline.data.manifest_record import ManifestRecord
from tts_pipeline.data.speakers import corpus_speakers
from tts_pipeline.errors import UserError
from tts_pipeline.features.extract import ExtractionResult, Utterance
from tts_pipeline.features.pitch import PitchMoments

SPLITS = ("train", "val", "test")
STATS_SPLIT = "train"  # the split pitch statistics are measured on


@dataclass(frozen=True)
class ManifestUtterances:
    """What the manifests list, as extraction needs it and as read.

    Attributes:
        utterances: Every utterance of :data:`SPLITS`, split by split in manifest order.
        records_by_split: The manifest records of each split.
        speakers: ``{id: speaker}`` of every utterance of a multi-speaker corpus; ``{}`` for one speaker.
    """

    utterances: list[Utterance]
    records_by_split: dict[str, list[ManifestRecord]]
    speakers: dict[str, str] = field(default_factory=dict)


def read_manifest_utterances(manifest_dir: Path, sampling_rate: int) -> ManifestUtterances:
    """Every utterance of ``manifest.{train,val,test}.jsonl`` in ``manifest_dir``.

    UserError naming the file when a manifest is missing, a record lacks a field extraction needs
    (:func:`~tts_pipeline.data.manifest.read_manifest` names the line), a record's ``sample_rate``
    (when given) is not ``sampling_rate``, or the training split is empty (no pitch statistics without it).
    """
    from tts_pipeline.data.manifest import manifest_path, read_manifest

    utterances: list[Utterance] = []
    records_by_split: dict[str, list[ManifestRecord]] = {}
    for split in SPLITS:
        path = manifest_path(manifest_dir, split)
        if not path.is_file():
            raise UserError(f"--manifest-dir: {path} not found (the manifest stage writes it)")
        records_by_split[split] = read_manifest(path)
        for record in records_by_split[split]:
            utterances.append(Utterance.from_record(record, split))
            if record.sample_rate is not None and record.sample_rate != sampling_rate:
                raise UserError(
                    f"{path}: utterance {record.id} is at {record.sample_rate} Hz, expected "
                    f"audio.sampling_rate = {sampling_rate}"
                )
    if not any(u.split == STATS_SPLIT for u in utterances):
        raise UserError(f"{manifest_path(manifest_dir, STATS_SPLIT)}: no training utterances for pitch statistics")
    speaker_of = {record.id: record.speaker for records in records_by_split.values() for record in records}
    corpus_speakers(speaker_of, f"--manifest-dir {manifest_dir}")  # refuses manifests that mix the two kinds
    speakers = {utterance_id: speaker for utterance_id, speaker in speaker_of.items() if speaker is not None}
    return ManifestUtterances(utterances, records_by_split, speakers)


@dataclass(frozen=True)
class PitchStatistics:
    """The training split's pitch statistics and what the run's figures need besides.

    Attributes:
        stats: The ``pitch_stats.json`` record: ``mean``, ``std`` (Hz), ``n_voiced_frames``,
            ``n_frames``, ``n_utterances``, ``split`` and the pitch method and range.
        train_frames: Frames of the training split, voiced or not.
        computed_samples: Audio samples of the utterances this run computed (not reused).
    """

    stats: dict[str, Any]
    train_frames: int
    computed_samples: int


def pitch_statistics(
    utterances: Sequence[Utterance],
    result: ExtractionResult,
    pitch_cfg: PitchConfig,
    speakers: Mapping[str, str] | None = None,
) -> PitchStatistics:
    """Pitch statistics of the training split from the per-utterance summaries of ``result`` (in the
    order of ``utterances``); with ``speakers`` (``{id: speaker}`` of every utterance) also each
    speaker's, under ``"speakers"``. UserError when the split has no voiced frame, or a speaker has none
    in it (naming the speaker)."""
    moments, train_frames, computed_samples = PitchMoments(), 0, 0
    by_speaker: dict[str, PitchMoments] = {name: PitchMoments() for name in sorted(set((speakers or {}).values()))}
    utterances_of: dict[str, int] = dict.fromkeys(by_speaker, 0)
    for utterance, summary in zip(utterances, result.summaries, strict=True):
        if utterance.split == STATS_SPLIT:
            these = PitchMoments(summary.n_voiced, summary.voiced_sum, summary.voiced_sum_sq)
            moments = moments + these
            train_frames += summary.n_frames
            if speakers:
                name = speakers[utterance.id]
                by_speaker[name] = by_speaker[name] + these
                utterances_of[name] += 1
        computed_samples += utterance.n_samples if summary.computed else 0
    stats = {
        **moments.stats(),
        "n_frames": train_frames,
        "n_utterances": sum(u.split == STATS_SPLIT for u in utterances),
        "split": STATS_SPLIT,
        "method": pitch_cfg.method,
        "floor_hz": pitch_cfg.floor_hz,
        "ceiling_hz": pitch_cfg.ceiling_hz,
    }
    if stats["n_voiced_frames"] == 0:
        raise UserError(
            f"no voiced frame in the {STATS_SPLIT} split: pitch statistics are undefined "
            f"(check pitch.floor_hz / ceiling_hz / voicing_threshold against the audio)"
        )
    if speakers:
        silent = [name for name, found in by_speaker.items() if found.n_voiced == 0]
        if silent:
            raise UserError(
                f"speaker(s) {', '.join(silent)}: no voiced frame in the {STATS_SPLIT} split "
                f"({', '.join(f'{name} {utterances_of[name]} utterance(s)' for name in silent)}), so their pitch "
                "statistics are undefined; every speaker needs training utterances (the manifest stage's split "
                "keeps some) whose pitch pitch.floor_hz / ceiling_hz / voicing_threshold can find"
            )
        stats["speakers"] = {
            name: {**found.stats(), "n_utterances": utterances_of[name]} for name, found in by_speaker.items()
        }
    return PitchStatistics(stats, train_frames, computed_samples)


def write_index(
    index_path: Path,
    pitch_stats_path: Path,
    utterances: Sequence[Utterance],
    result: ExtractionResult,
    stats: dict[str, Any],
) -> None:
    """Sync the arrays, then write ``pitch_stats.json`` and, last, ``features.jsonl``."""
    files.sync()  # the arrays were written without fsync; make them durable before the index says so
    files.write_json(pitch_stats_path, stats)
    files.write_jsonl(
        index_path,
        (
            {"id": s.id, "split": u.split, "n_frames": s.n_frames, "n_voiced": s.n_voiced}
            for u, s in zip(utterances, result.summaries, strict=True)
        ),
    )
