"""``metadata.csv`` of an LJSpeech-layout corpus, and the transcripts' cleaning and symbol check.

``metadata.csv`` holds ``id|raw text|normalized text`` lines (no header, pipe-separated, unquoted);
the clips are ``wavs/<id>.wav``. One bad line is reported as a :class:`~.problems.Problem` and the
rest still parse.

A multi-speaker corpus adds the speaker's name as a 4th field on every line,
``id|raw text|normalized text|speaker`` (:mod:`tts_pipeline.data.speakers`). A bad speaker name is a
UserError naming the file and line: a speaker is not one utterance, and skipping its lines under
``data.on_invalid: skip`` would quietly drop a voice. A line of the other kind (3 fields in a corpus
with speakers, 4 in one without) is a malformed line like any other.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tts_pipeline.config import TextConfig
from tts_pipeline.data.problems import Problem, Reason, shorten
from tts_pipeline.data.speakers import speaker_name_problem
from tts_pipeline.errors import UserError

METADATA_NAME = "metadata.csv"
WAV_DIR_NAME = "wavs"


@dataclass(frozen=True)
class MetadataRow:
    """One well-formed metadata line. ``line`` is 1-based; ``speaker`` the 4th field, None without one."""

    id: str
    line: int
    raw_text: str
    normalized_text: str
    speaker: str | None = None

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

    Accepts 2 fields (id|text), 3 (id|text|normalized text) or 4 (id|text|normalized text|speaker);
    strips a UTF-8 byte-order mark and CR line ends. An id on several lines is rejected on all of them:
    which transcript is right cannot be known.

    A corpus names the speaker on every line or on none. When some lines name one and others do not,
    the fewer kind is reported as malformed lines (a stray ``|`` in a transcript of a single-speaker
    corpus makes a 4th field; a multi-speaker corpus's line without its speaker joins no speaker), so
    ``data.on_invalid`` decides, as for any bad line.

    Raises UserError naming the file and line of each bad speaker name (a 4th field that is empty or
    not a safe identifier).
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
    candidates = _drop_the_other_kind(candidates, metadata.problems, file)
    metadata.parsed_ids = {row.id for row in candidates}
    duplicated = {utterance_id: lines for utterance_id, lines in lines_by_id.items() if len(lines) > 1}
    for utterance_id, lines in duplicated.items():
        where = ", ".join(str(line) for line in lines)
        metadata.problems.append(
            Problem(utterance_id, file, Reason.DUPLICATE_ID, f"the id appears on lines {where}")
        )
    metadata.rows = [row for row in candidates if row.id not in duplicated]
    _check_speaker_names(file, candidates)
    return metadata


def _drop_the_other_kind(rows: list[MetadataRow], problems: list[Problem], file: str) -> list[MetadataRow]:
    """The rows of the corpus's kind (with a speaker, or without: the more numerous, and without on a tie);
    each row of the other kind becomes a malformed-line problem instead."""
    named = [row for row in rows if row.speaker is not None]
    unnamed = [row for row in rows if row.speaker is None]
    if not named or not unnamed:
        return rows
    if len(named) > len(unnamed):
        for row in unnamed:
            detail = (
                f"line {row.line}: no speaker (a 4th field), but {len(named)} other lines name theirs "
                "(id|text|normalized text|speaker); every line of a multi-speaker corpus names its speaker"
            )
            problems.append(Problem(row.id, file, Reason.MALFORMED_LINE, detail))
        return named
    for row in named:
        detail = (
            f"line {row.line}: a 4th field ({shorten(row.speaker or '')!r}, read as a speaker name) on a line of "
            f"a corpus whose {len(unnamed)} other lines have 3 fields (id|text|normalized text); a '|' inside "
            "the text?"
        )
        problems.append(Problem(row.id, file, Reason.MALFORMED_LINE, detail))
    return unnamed


def _check_speaker_names(file: str, rows: list[MetadataRow]) -> None:
    """UserError listing every bad speaker name as ``file:line``."""
    bad = [
        f"{file}:{row.line}: {problem}"
        for row in rows
        if row.speaker is not None and (problem := speaker_name_problem(row.speaker)) is not None
    ]
    if bad:
        shown = "\n  ".join(bad[:20]) + (f"\n  ... and {len(bad) - 20} more" if len(bad) > 20 else "")
        raise UserError(
            f"{file}: {len(bad)} bad speaker name(s) in the 4th field (expected letters, digits, '_' or '-'; "
            f"leave the field out on every line for a single-speaker corpus):\n  {shown}"
        )


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
            f"UTF-8 (line: {shorten(shown)!r})"
        )
        return None, Problem(claimed, file, Reason.NON_UTF8_TEXT, detail), claimed
    fields = text.split("|")
    bad_id = id_problem(fields[0])
    claimed = fields[0] if bad_id is None else None
    if len(fields) not in (2, 3, 4):
        detail = (
            f"line {number}: expected 3 pipe-separated fields (id|text|normalized text) or 4 with the "
            f"speaker, found {len(fields)} (line: {shorten(text)!r})"
        )
        return None, Problem(claimed, file, Reason.MALFORMED_LINE, detail), claimed
    if bad_id is not None:
        return None, Problem(None, file, Reason.INVALID_ID, f"line {number}: {bad_id}"), None
    normalized = fields[2].strip() if len(fields) >= 3 else ""
    # The name is checked by read_metadata, which reports every bad one at once.
    speaker = fields[3].strip() if len(fields) == 4 else None
    row = MetadataRow(
        id=fields[0], line=number, raw_text=fields[1].strip(), normalized_text=normalized, speaker=speaker
    )
    return row, None, claimed


# --------------------------------------------------------------------------------------------------
# text
# --------------------------------------------------------------------------------------------------


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


def clean_transcript(
    row: MetadataRow, transcript: str, text: TextConfig, front_end: TextFrontEnd, file: str
) -> tuple[str | None, list[Problem]]:
    """Clean ``transcript`` with the configured cleaners; return (cleaned text or None, problems)."""
    if not transcript.strip():
        detail = f"line {row.line}: both text columns are empty"
        return None, [Problem(row.id, file, Reason.EMPTY_TEXT, detail)]
    cleaned = front_end.normalize(transcript, text.cleaners)
    if not cleaned.strip():
        detail = f"line {row.line}: the text is empty after {text.cleaners} (was {shorten(transcript)!r})"
        return None, [Problem(row.id, file, Reason.EMPTY_TEXT, detail)]
    unknown = list(dict.fromkeys(front_end.unknown_characters(cleaned, text.symbol_set)))
    if unknown:
        listed = ", ".join(f"{ch!r} (U+{ord(ch):04X})" for ch in unknown)
        detail = (
            f"line {row.line}: characters outside symbol set {text.symbol_set} after "
            f"{text.cleaners}: {listed} (cleaned text: {shorten(cleaned)!r})"
        )
        return None, [Problem(row.id, file, Reason.UNKNOWN_CHARACTERS, detail)]
    return cleaned, []
