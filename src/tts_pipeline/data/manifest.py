"""The manifest: every utterance of a corpus validated, then split into train / val / test.

Input is an LJSpeech-layout folder: ``metadata.csv`` (``id|raw text|normalized text``, no header,
pipe-separated, unquoted) and ``wavs/<id>.wav``. Every problem found is reported with the utterance
id, the file and a machine-readable reason (:class:`Reason`) plus a human detail. The policy
``data.on_invalid`` decides what happens next: ``error`` stops with the whole list, ``skip`` leaves
the bad utterances out and records each one in ``validation.json``.

Typical use (the ``manifest`` stage)::

    result = build_manifest(corpus_dir, cfg.data, cfg.text, cfg.audio.sampling_rate,
                            resample_dir=exp_dir / "data" / "resampled", workers=4)
    write_manifest(result, exp_dir / "data")

Outputs (see :func:`write_manifest`): ``manifest.{train,val,test}.jsonl``, one record per utterance
sorted by id, with ``id``, ``wav``, ``text`` (cleaned: what the models train on), ``raw_text``,
``n_samples``, ``sample_rate``, ``duration_s`` and ``source_wav``, and ``speaker`` when the corpus
names speakers (the 4th field of ``metadata.csv``; the split is then balanced per speaker,
:mod:`tts_pipeline.data.splits`)
(:class:`~tts_pipeline.data.manifest_record.ManifestRecord`; :func:`read_manifest` reads them back);
and ``validation.json`` (with ``split.speakers``: utterances per speaker and split, for such a corpus).
"""


from __future__ import annotations

import logging
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tts_pipeline import files
from tts_pipeline.config import DataConfig, TextConfig
from tts_pipeline.data.audio_checks import (
    AudioInfo,
    AudioRules,
    check_all_audio,
    find_wavs_without_metadata,
    outside_corpus,
)
from tts_pipeline.data.ljspeech_split import TRANSCRIPT_CONTINUATIONS, fix_transcript
from tts_pipeline.data.manifest_record import ManifestRecord
from tts_pipeline.data.metadata import (
    METADATA_NAME,
    WAV_DIR_NAME,
    Metadata,
    TextFrontEnd,
    clean_transcript,
    read_metadata,
)
from tts_pipeline.data.problems import Problem, Reason, format_problems
from tts_pipeline.data.splits import SPLIT_NAMES, speaker_sizes, split_ids
from tts_pipeline.errors import UserError

logger = logging.getLogger(__name__)

VALIDATION_NAME = "validation.json"


class ManifestError(UserError):
    """The corpus cannot be turned into a manifest. ``validation`` holds the report when one exists."""

    def __init__(self, message: str, validation: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.validation = validation


@dataclass(frozen=True)
class ManifestResult:
    """Records per split (sorted by id) and the validation report written to validation.json."""

    splits: dict[str, list[ManifestRecord]]
    validation: dict[str, Any]


def build_manifest(
    corpus_dir: str | Path,
    data: DataConfig,
    text: TextConfig,
    sample_rate: int,
    *,
    resample_dir: str | Path,
    workers: int = 1,
    front_end: TextFrontEnd | None = None,
) -> ManifestResult:
    """Validate every utterance of an LJSpeech-layout corpus and split the valid ones.

    Args:
        corpus_dir: folder with ``metadata.csv`` and ``wavs/``.
        data: validation policy, limits and split settings.
        text: cleaners and symbol set applied to the transcripts.
        sample_rate: the rate every clip must have (``audio.sampling_rate``).
        resample_dir: where 16-bit copies of clips at another rate go when ``data.resample`` is true
            (created only if something is resampled).
        workers: threads reading audio.
        front_end: text functions; defaults to ``tts_pipeline.text``.

    Raises:
        ManifestError: missing metadata.csv; any problem under ``on_invalid: error``; no valid
            utterance at all (under either policy). The message lists every problem by reason.
        SplitError: the valid utterances cannot be split as configured (also: a speaker of a
            multi-speaker corpus would have no training utterance).
        UserError: a bad speaker name in the 4th field of ``metadata.csv``, or a speaker on some lines only.
    """
    corpus_dir = Path(corpus_dir)
    metadata_path = corpus_dir / METADATA_NAME
    wav_dir = corpus_dir / WAV_DIR_NAME
    if not metadata_path.is_file():
        raise ManifestError(
            f"{metadata_path}: not found; expected an LJSpeech-layout corpus "
            f"({METADATA_NAME} with id|text|normalized text lines, and {WAV_DIR_NAME}/<id>.wav)"
        )
    front_end = front_end or TextFrontEnd.default()
    metadata = read_metadata(metadata_path)
    ljspeech = data.split.scheme == "ljspeech"
    transcripts, text_problems = _clean_all(metadata, fix_transcript if ljspeech else None, text, front_end)
    rules = AudioRules.from_config(data, sample_rate, Path(resample_dir))
    audio, audio_problems = _check_wavs(metadata, corpus_dir, rules, workers)
    problems = metadata.problems + text_problems + audio_problems
    problems.extend(find_wavs_without_metadata(wav_dir, metadata.claimed_ids))

    rejected = _reasons_by_id(problems)
    valid = sorted(key for key in transcripts if key in audio and key not in rejected)
    validation = _validation_report(corpus_dir, metadata, data, problems, valid, audio, wav_dir)
    _apply_policy(problems, valid, data, metadata, validation)

    speaker_of = {row.id: row.speaker for row in metadata.rows if row.speaker is not None}
    speakers = {utterance_id: speaker_of[utterance_id] for utterance_id in valid} if speaker_of else None
    reasons = {key: ", ".join(value) for key, value in rejected.items()}
    split = split_ids(valid, data.split, rejected=reasons, speakers=speakers)
    validation["transcript_fixes"] = sorted(set(TRANSCRIPT_CONTINUATIONS) & set(valid)) if ljspeech else []
    validation["split"] = {"scheme": data.split.scheme, "sizes": split.sizes, "discarded": split.discarded}
    if speakers:
        validation["split"]["speakers"] = speaker_sizes(split, speakers)
    splits = {
        name: [
            _record(utterance_id, transcripts[utterance_id], audio[utterance_id], speaker_of.get(utterance_id))
            for utterance_id in ids
        ]
        for name, ids in split.splits.items()
    }
    logger.info(
        "manifest: %d of %d utterances valid; %s",
        len(valid), metadata.n_rows, ", ".join(f"{name} {size}" for name, size in split.sizes.items()),
    )
    return ManifestResult(splits=splits, validation=validation)


def _clean_all(
    metadata: Metadata,
    fix: Callable[[str, str], str] | None,
    text: TextConfig,
    front_end: TextFrontEnd,
) -> tuple[dict[str, tuple[str, str]], list[Problem]]:
    """Clean every row's transcript (after ``fix(id, transcript)``): ({id: (transcript, cleaned)}, problems)."""
    transcripts: dict[str, tuple[str, str]] = {}
    problems: list[Problem] = []
    for row in metadata.rows:
        transcript = fix(row.id, row.transcript) if fix else row.transcript
        cleaned, found = clean_transcript(row, transcript, text, front_end, str(metadata.path))
        problems.extend(found)
        if cleaned is not None:
            transcripts[row.id] = (transcript, cleaned)
    return transcripts, problems


def _check_wavs(
    metadata: Metadata, corpus_dir: Path, rules: AudioRules, workers: int
) -> tuple[dict[str, AudioInfo], list[Problem]]:
    """Check the wav of every id metadata names: ({id: usable clip}, problems)."""
    problems: list[Problem] = []
    to_check: list[tuple[str, Path]] = []
    for utterance_id in sorted(metadata.claimed_ids):
        path = corpus_dir / WAV_DIR_NAME / f"{utterance_id}.wav"
        if path.is_file():
            outside = outside_corpus(utterance_id, path, corpus_dir)
            if outside is not None:
                problems.append(outside)
            else:
                to_check.append((utterance_id, path))
        elif utterance_id in metadata.parsed_ids:
            # A bad line's id may be garbage: only a well-formed line promises a wav.
            detail = f"{METADATA_NAME} lists the id but there is no such file"
            problems.append(Problem(utterance_id, str(path), Reason.MISSING_WAV, detail))
    audio: dict[str, AudioInfo] = {}
    for utterance_id, (info, found) in check_all_audio(to_check, rules, workers).items():
        problems.extend(found)
        if info is not None:
            audio[utterance_id] = info
    return audio, problems


def _record(utterance_id: str, transcript: tuple[str, str], info: AudioInfo, speaker: str | None) -> ManifestRecord:
    raw_text, cleaned = transcript
    return ManifestRecord(
        id=utterance_id,
        wav=info.wav,
        text=cleaned,
        raw_text=raw_text,
        n_samples=info.n_samples,
        sample_rate=info.sample_rate,
        duration_s=round(info.duration_s, 6),
        source_wav=info.source_wav,
        speaker=speaker,
    )


def _reasons_by_id(problems: Iterable[Problem]) -> dict[str, list[str]]:
    reasons: dict[str, list[str]] = defaultdict(list)
    for problem in problems:
        if problem.id is not None and problem.reason.value not in reasons[problem.id]:
            reasons[problem.id].append(problem.reason.value)
    return dict(reasons)


def _validation_report(
    corpus_dir: Path,
    metadata: Metadata,
    data: DataConfig,
    problems: list[Problem],
    valid: list[str],
    audio: Mapping[str, AudioInfo],
    wav_dir: Path,
) -> dict[str, Any]:
    ordered = sorted(problems, key=lambda p: (p.id or "", p.reason.value, p.file, p.detail))
    rejected_ids = {p.id for p in problems if p.id is not None}
    anonymous = sum(1 for p in problems if p.id is None)
    return {
        "corpus_dir": str(corpus_dir),
        "metadata": str(metadata.path),
        "on_invalid": data.on_invalid,
        "n_rows": metadata.n_rows,
        "n_wavs": sum(1 for _ in wav_dir.glob("*.wav")) if wav_dir.is_dir() else 0,
        "n_valid": len(valid),
        "n_rejected": len(rejected_ids) + anonymous,
        "n_resampled": sum(1 for utterance_id in valid if audio[utterance_id].wav != audio[utterance_id].source_wav),
        "counts_by_reason": dict(sorted(Counter(p.reason.value for p in problems).items())),
        "rejections": [p.as_dict() for p in ordered],
    }


def _apply_policy(
    problems: list[Problem], valid: list[str], data: DataConfig, metadata: Metadata, validation: dict[str, Any]
) -> None:
    """Raise under ``on_invalid: error`` if anything is wrong, and always if nothing is valid."""
    if not valid:
        raise ManifestError(
            f"{metadata.path}: no valid utterance among {metadata.n_rows} metadata rows, so there is "
            f"nothing to train on (data.on_invalid: {data.on_invalid} cannot help).\n" + format_problems(problems),
            validation,
        )
    if problems and data.on_invalid == "error":
        raise ManifestError(
            f"{metadata.path}: {validation['n_rejected']} invalid utterance(s) or line(s) "
            "(data.on_invalid is 'error'; fix them, or set data.on_invalid: skip to leave them out).\n"
            + format_problems(problems),
            validation,
        )
    if problems:
        counts = ", ".join(f"{reason} {count}" for reason, count in validation["counts_by_reason"].items())
        logger.warning("skipping %d invalid utterance(s) or line(s): %s", validation["n_rejected"], counts)


# --------------------------------------------------------------------------------------------------
# files
# --------------------------------------------------------------------------------------------------


def manifest_path(out_dir: str | Path, split: str) -> Path:
    """``<out_dir>/manifest.<split>.jsonl``."""
    if split not in SPLIT_NAMES:
        raise ValueError(f"split: expected one of {', '.join(SPLIT_NAMES)}, got {split!r}")
    return Path(out_dir) / f"manifest.{split}.jsonl"


def write_manifest(result: ManifestResult, out_dir: str | Path) -> dict[str, Path]:
    """Write ``manifest.{train,val,test}.jsonl`` and ``validation.json`` atomically; return the paths."""
    out_dir = Path(out_dir)
    written: dict[str, Path] = {}
    for name in SPLIT_NAMES:
        written[name] = manifest_path(out_dir, name)
        files.write_jsonl(written[name], [record.to_json() for record in result.splits[name]])
    written["validation"] = out_dir / VALIDATION_NAME
    files.write_json(written["validation"], result.validation)
    return written


def read_manifest(path: str | Path) -> list[ManifestRecord]:
    """Records of one manifest file, in file order (sorted by id).

    UserError naming the file and line for a record that lacks a required field or has one of the
    wrong type (:meth:`ManifestRecord.from_json`); ValueError for a line that is not JSON.
    """
    return [ManifestRecord.from_json(value, f"{path}:{number}") for number, value in files.read_jsonl_lines(path)]
