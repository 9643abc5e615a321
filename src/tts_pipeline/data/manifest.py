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
``n_samples``, ``sample_rate``, ``duration_s`` and ``source_wav``; and ``validation.json``.
"""

from __future__ import annotations

import logging
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

import numpy as np
import soundfile as sf

from tts_pipeline import files
from tts_pipeline.config import DataConfig, TextConfig
from tts_pipeline.data.ljspeech_split import TRANSCRIPT_CONTINUATIONS, fix_transcript
from tts_pipeline.data.splits import SPLIT_NAMES, split_ids
from tts_pipeline.errors import UserError

logger = logging.getLogger(__name__)

METADATA_NAME = "metadata.csv"
WAV_DIR_NAME = "wavs"
VALIDATION_NAME = "validation.json"


class Reason(StrEnum):
    """Why an utterance (or a metadata line) was rejected; the values appear in validation.json."""

    MALFORMED_LINE = "malformed_line"  # wrong number of pipe-separated fields
    INVALID_ID = "invalid_id"  # an id that cannot name a file (path separators, spaces, ...)
    NON_UTF8_TEXT = "non_utf8_text"
    DUPLICATE_ID = "duplicate_id"
    EMPTY_TEXT = "empty_text"
    UNKNOWN_CHARACTERS = "unknown_characters"  # outside the symbol set after cleaning
    MISSING_WAV = "missing_wav"  # metadata row without wavs/<id>.wav
    WAV_WITHOUT_METADATA = "wav_without_metadata"
    UNREADABLE_AUDIO = "unreadable_audio"
    EMPTY_AUDIO = "empty_audio"
    WRONG_SAMPLE_RATE = "wrong_sample_rate"
    MULTICHANNEL = "multichannel"
    CLIPPED = "clipped"
    TOO_SHORT = "too_short"
    TOO_LONG = "too_long"


@dataclass(frozen=True)
class Problem:
    """One thing wrong with one utterance. ``id`` is None for a line whose id cannot be read."""

    id: str | None
    file: str
    reason: Reason
    detail: str

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "file": self.file, "reason": self.reason.value, "detail": self.detail}


class ManifestError(UserError):
    """The corpus cannot be turned into a manifest. ``validation`` holds the report when one exists."""

    def __init__(self, message: str, validation: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.validation = validation


@dataclass(frozen=True)
class TextFrontEnd:
    """The two text functions the manifest needs; injectable so tests can use simple stand-ins.

    ``normalize(text, cleaners) -> str`` applies the named cleaners; ``unknown_characters(text,
    symbol_set) -> list[str]`` lists characters of ``text`` that the symbol set lacks.
    """

    normalize: Callable[[str, str], str]
    unknown_characters: Callable[[str, str], list[str]]

    @classmethod
    def default(cls) -> TextFrontEnd:
        # Imported here so that this module does not drag the text package in at import time.
        from tts_pipeline.text import normalize_text, unknown_characters

        return cls(normalize=normalize_text, unknown_characters=unknown_characters)


# --------------------------------------------------------------------------------------------------
# metadata.csv
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MetadataRow:
    """One well-formed metadata line. ``line`` is 1-based."""

    id: str
    line: int
    raw_text: str
    normalized_text: str

    @property
    def transcript(self) -> str:
        """The normalized (third) column when present and non-empty, else the raw (second) one."""
        return self.normalized_text if self.normalized_text.strip() else self.raw_text


@dataclass
class Metadata:
    """What ``metadata.csv`` holds.

    ``rows`` are the usable lines (duplicated ids removed); ``problems`` the bad lines;
    ``parsed_ids`` the ids of well-formed lines, duplicates included (each needs a wav);
    ``claimed_ids`` every id named on some line, even a bad one, so that its wav is still checked
    and is not reported as lacking a metadata row; ``n_rows`` counts the non-blank lines.
    """

    path: Path
    rows: list[MetadataRow] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    parsed_ids: set[str] = field(default_factory=set)
    claimed_ids: set[str] = field(default_factory=set)
    n_rows: int = 0


def id_problem(utterance_id: str) -> str | None:
    """Why ``utterance_id`` cannot be used as a file name (``wavs/<id>.wav``), or None if it can."""
    if not utterance_id:
        return "the id is empty"
    if utterance_id != utterance_id.strip() or any(ch.isspace() for ch in utterance_id):
        return f"the id {utterance_id!r} contains whitespace"
    if any(ch in "/\\" for ch in utterance_id) or utterance_id.startswith("."):
        return f"the id {utterance_id!r} is not a plain file name (no '/', '\\' or leading '.')"
    if any(not ch.isprintable() for ch in utterance_id):
        return f"the id {utterance_id!r} contains control characters"
    return None


def read_metadata(path: Path) -> Metadata:
    """Parse ``metadata.csv`` line by line, as bytes, so one bad line is reported and the rest parse.

    Accepts 2 fields (id|text) or 3 (id|text|normalized text); strips a UTF-8 byte-order mark and
    CR line ends. An id on several lines is rejected on all of them: which transcript is right
    cannot be known.
    """
    metadata = Metadata(path=path)
    file = str(path)
    lines_by_id: dict[str, list[int]] = defaultdict(list)
    candidates: list[MetadataRow] = []
    data = path.read_bytes().removeprefix(b"\xef\xbb\xbf")
    for number, raw in enumerate(data.splitlines(), start=1):
        if not raw.strip():
            continue
        metadata.n_rows += 1
        row, problem, claimed = _parse_line(raw, number, file)
        if claimed is not None:
            metadata.claimed_ids.add(claimed)
            lines_by_id[claimed].append(number)
        if problem is not None:
            metadata.problems.append(problem)
        if row is not None:
            candidates.append(row)
            metadata.parsed_ids.add(row.id)
    duplicated = {utterance_id: lines for utterance_id, lines in lines_by_id.items() if len(lines) > 1}
    for utterance_id, lines in duplicated.items():
        where = ", ".join(str(line) for line in lines)
        metadata.problems.append(
            Problem(utterance_id, file, Reason.DUPLICATE_ID, f"the id appears on lines {where}")
        )
    metadata.rows = [row for row in candidates if row.id not in duplicated]
    return metadata


def _parse_line(raw: bytes, number: int, file: str) -> tuple[MetadataRow | None, Problem | None, str | None]:
    """Parse one line: (row or None, problem or None, the id it names if that id is usable)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        guess = raw.split(b"|", 1)[0].decode("utf-8", errors="backslashreplace")
        claimed = guess if id_problem(guess) is None else None
        shown = raw.decode("utf-8", errors="backslashreplace")
        detail = (
            f"line {number}: byte 0x{raw[error.start]:02x} at column {error.start + 1} is not valid "
            f"UTF-8 (line: {_shorten(shown)!r})"
        )
        return None, Problem(claimed, file, Reason.NON_UTF8_TEXT, detail), claimed
    fields = text.split("|")
    bad_id = id_problem(fields[0])
    claimed = fields[0] if bad_id is None else None
    if len(fields) not in (2, 3):
        detail = (
            f"line {number}: expected 3 pipe-separated fields (id|text|normalized text), "
            f"found {len(fields)} (line: {_shorten(text)!r})"
        )
        return None, Problem(claimed, file, Reason.MALFORMED_LINE, detail), claimed
    if bad_id is not None:
        return None, Problem(None, file, Reason.INVALID_ID, f"line {number}: {bad_id}"), None
    normalized = fields[2].strip() if len(fields) == 3 else ""
    row = MetadataRow(id=fields[0], line=number, raw_text=fields[1].strip(), normalized_text=normalized)
    return row, None, claimed


def _shorten(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --------------------------------------------------------------------------------------------------
# text
# --------------------------------------------------------------------------------------------------


def clean_transcript(
    row: MetadataRow, transcript: str, text: TextConfig, front_end: TextFrontEnd, file: str
) -> tuple[str | None, list[Problem]]:
    """Clean ``transcript`` with the configured cleaners; return (cleaned text or None, problems)."""
    if not transcript.strip():
        detail = f"line {row.line}: both text columns are empty"
        return None, [Problem(row.id, file, Reason.EMPTY_TEXT, detail)]
    cleaned = front_end.normalize(transcript, text.cleaners)
    if not cleaned.strip():
        detail = f"line {row.line}: the text is empty after {text.cleaners} (was {_shorten(transcript)!r})"
        return None, [Problem(row.id, file, Reason.EMPTY_TEXT, detail)]
    unknown = list(dict.fromkeys(front_end.unknown_characters(cleaned, text.symbol_set)))
    if unknown:
        listed = ", ".join(f"{ch!r} (U+{ord(ch):04X})" for ch in unknown)
        detail = (
            f"line {row.line}: characters outside symbol set {text.symbol_set} after "
            f"{text.cleaners}: {listed} (cleaned text: {_shorten(cleaned)!r})"
        )
        return None, [Problem(row.id, file, Reason.UNKNOWN_CHARACTERS, detail)]
    return cleaned, []


# --------------------------------------------------------------------------------------------------
# audio
# --------------------------------------------------------------------------------------------------


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


def check_audio(utterance_id: str, path: Path, rules: AudioRules) -> tuple[AudioInfo | None, list[Problem]]:
    """Read one clip and check it; resample it if allowed and needed.

    Returns (info, []) for a usable clip, else (None, every problem found). Reads the samples, not
    just the header, because clipping can only be measured on the data.
    """
    file = str(path)
    try:
        samples, rate = sf.read(path, dtype="float32", always_2d=True)  # (N, channels), full scale = 1
    except (sf.LibsndfileError, RuntimeError, OSError) as error:
        return None, [Problem(utterance_id, file, Reason.UNREADABLE_AUDIO, f"soundfile cannot read it: {error}")]
    n_frames, n_channels = samples.shape
    if n_frames == 0:
        return None, [Problem(utterance_id, file, Reason.EMPTY_AUDIO, "the file holds 0 samples")]
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


# --------------------------------------------------------------------------------------------------
# the manifest
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ManifestResult:
    """Records per split (sorted by id) and the validation report written to validation.json."""

    splits: dict[str, list[dict[str, Any]]]
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
        SplitError: the valid utterances cannot be split as configured.
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
    audio, audio_problems = _check_wavs(metadata, wav_dir, rules, workers)
    problems = metadata.problems + text_problems + audio_problems
    problems.extend(find_wavs_without_metadata(wav_dir, metadata.claimed_ids))

    rejected = _reasons_by_id(problems)
    valid = sorted(key for key in transcripts if key in audio and key not in rejected)
    validation = _validation_report(corpus_dir, metadata, data, problems, valid, audio, wav_dir)
    _apply_policy(problems, valid, data, metadata, validation)

    split = split_ids(valid, data.split, rejected={key: ", ".join(value) for key, value in rejected.items()})
    validation["transcript_fixes"] = sorted(set(TRANSCRIPT_CONTINUATIONS) & set(valid)) if ljspeech else []
    validation["split"] = {"scheme": data.split.scheme, "sizes": split.sizes, "discarded": split.discarded}
    splits = {
        name: [_record(utterance_id, transcripts[utterance_id], audio[utterance_id]) for utterance_id in ids]
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
    metadata: Metadata, wav_dir: Path, rules: AudioRules, workers: int
) -> tuple[dict[str, AudioInfo], list[Problem]]:
    """Check the wav of every id metadata names: ({id: usable clip}, problems)."""
    problems: list[Problem] = []
    to_check: list[tuple[str, Path]] = []
    for utterance_id in sorted(metadata.claimed_ids):
        path = wav_dir / f"{utterance_id}.wav"
        if path.is_file():
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


def _record(utterance_id: str, transcript: tuple[str, str], info: AudioInfo) -> dict[str, Any]:
    raw_text, cleaned = transcript
    return {
        "id": utterance_id,
        "wav": info.wav,
        "text": cleaned,
        "raw_text": raw_text,
        "n_samples": info.n_samples,
        "sample_rate": info.sample_rate,
        "duration_s": round(info.duration_s, 6),
        "source_wav": info.source_wav,
    }


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


def format_problems(problems: Iterable[Problem]) -> str:
    """Every problem, grouped by reason with a count: ``<id>  <file>  <detail>`` per line."""
    by_reason: dict[str, list[Problem]] = defaultdict(list)
    for problem in problems:
        by_reason[problem.reason.value].append(problem)
    lines = []
    for reason in sorted(by_reason):
        group = sorted(by_reason[reason], key=lambda p: (p.id or "", p.detail))
        lines.append(f"  {reason} ({len(group)}):")
        lines.extend(f"    {p.id or '<no id>'}  {p.file}  {p.detail}" for p in group)
    return "\n".join(lines)


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
        files.write_jsonl(written[name], result.splits[name])
    written["validation"] = out_dir / VALIDATION_NAME
    files.write_json(written["validation"], result.validation)
    return written


def read_manifest(path: str | Path) -> list[dict[str, Any]]:
    """Records of one manifest file, in file order (sorted by id)."""
    return files.read_jsonl(path)
