"""Phrase files: the sentences to synthesise and the names of their output files.

Three formats, chosen by the file extension:

- anything but ``.tsv``: one ``name|text`` per line, UTF-8; blank lines and lines starting with
  ``#`` are skipped; the text is everything after the first ``|``::

      # name|text
      weather|The weather tomorrow looks bright and calm.

- ``.tsv`` (NVIDIA's inference files, reference 5.1): a header row, tab-separated, with the columns
  ``output`` and ``text`` and optionally ``mel`` (a ground-truth mel path, kept as written). A
  ``.wav`` ending of ``output`` is dropped, since the name is a stem.

- ``.jsonl``: a manifest of this pipeline (``R/data/manifest.val.jsonl``): ``id`` names, ``text``
  is spoken, ``mel`` is empty. ``inference.phrases: null`` synthesises the first validation
  utterances this way, the way NVIDIA's devset10 does for LJSpeech.

A name becomes ``<name>.wav``, so it must be unique within the file (ignoring case) and safe as a
file name: letters, digits, ``_``, ``-`` and ``.``, starting with a letter or digit, at most 100
characters. A text needs a letter or digit: punctuation alone (``...``, ``?!``) is refused, not spoken
as a second of noise. Every error names the file and the line.
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass
from pathlib import Path

from tts_pipeline.errors import UserError

NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")
TSV_COLUMNS = ("output", "text")


@dataclass(frozen=True)
class Phrase:
    """One sentence to synthesise.

    Attributes:
        name: Output stem (``<name>.wav``).
        text: The raw text, as written (the synthesiser cleans it).
        line: 1-based line of the file it came from (for error messages).
        mel: The ``mel`` column of a ``.tsv`` file, if any (ground-truth mel of the same sentence).
    """

    name: str
    text: str
    line: int
    mel: str | None = None


def read_phrases(path: str | Path, limit: int | None = None) -> list[Phrase]:
    """Read a phrase file (format by extension, see the module docstring), in file order.

    Raises UserError naming the file and line for: a missing or non-UTF-8 file, a line without ``|``,
    an empty name or text, a text without a letter or digit (``...``), an unsafe or duplicate name, a
    ``.tsv`` header without ``output``/``text``, a ``.tsv`` row with the wrong number of fields, or a
    file with no phrase at all. ``limit`` keeps the first phrases only.
    """
    path = Path(path)
    try:
        content = path.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        raise UserError(f"phrase file not found: {path}") from None
    except UnicodeDecodeError as error:
        line = path.read_bytes()[: error.start].count(b"\n") + 1
        raise UserError(f"{path}:{line}: not UTF-8 ({error.reason})") from None
    lines = content.splitlines()
    readers = {".tsv": _read_tsv, ".jsonl": _read_manifest}
    phrases = readers.get(path.suffix.lower(), _read_pipe)(path, lines)[:limit]
    if not phrases:
        raise UserError(f"{path}: no phrases (expected name|text lines, or a .tsv with output and text columns)")
    _check_unique(path, phrases)
    return phrases


def _read_pipe(path: Path, lines: list[str]) -> list[Phrase]:
    phrases = []
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        name, bar, text = line.partition("|")
        if not bar:
            raise UserError(f"{path}:{number}: expected name|text, found no '|' in {_shorten(line)!r}")
        phrases.append(_phrase(path, number, name.strip(), text.strip()))
    return phrases


def _read_manifest(path: Path, lines: list[str]) -> list[Phrase]:
    # Only id and text are read, not a whole ManifestRecord: a hand-written phrase file with just
    # those two keys is as good as a manifest, and needs no wav or sample count.
    phrases = []
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
            phrases.append(_phrase(path, number, str(record["id"]), str(record["text"]).strip()))
        except (json.JSONDecodeError, KeyError, TypeError) as error:
            raise UserError(f"{path}:{number}: expected a manifest record with 'id' and 'text' ({error})") from None
    return phrases


def _read_tsv(path: Path, lines: list[str]) -> list[Phrase]:
    rows = list(csv.reader(lines, delimiter="\t", quoting=csv.QUOTE_NONE))
    header_index = next((i for i, row in enumerate(rows) if any(cell.strip() for cell in row)), None)
    if header_index is None:
        return []
    header = [cell.strip() for cell in rows[header_index]]
    missing = [column for column in TSV_COLUMNS if column not in header]
    if missing:
        raise UserError(
            f"{path}:{header_index + 1}: the header must name the columns {list(TSV_COLUMNS)} (and optionally "
            f"'mel'); missing {missing} in {header}"
        )
    columns = {name: header.index(name) for name in (*TSV_COLUMNS, "mel") if name in header}
    phrases = []
    for index in range(header_index + 1, len(rows)):
        row, number = rows[index], index + 1
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise UserError(f"{path}:{number}: expected {len(header)} tab-separated fields {header}, got {len(row)}")
        name = row[columns["output"]].strip().removesuffix(".wav")
        mel = row[columns["mel"]].strip() if "mel" in columns else ""
        phrases.append(_phrase(path, number, name, row[columns["text"]].strip(), mel or None))
    return phrases


def _phrase(path: Path, number: int, name: str, text: str, mel: str | None = None) -> Phrase:
    if not name:
        raise UserError(f"{path}:{number}: the name is empty")
    if not NAME_PATTERN.match(name):
        raise UserError(
            f"{path}:{number}: name {name!r} is not safe as a file name (letters, digits, '_', '-', '.'; "
            "starting with a letter or digit; at most 100 characters)"
        )
    if not text:
        raise UserError(f"{path}:{number}: phrase {name!r} has no text")
    if not any(character.isalnum() for character in text):
        # Nothing to speak: the models would still make about a second of noise from the punctuation.
        raise UserError(
            f"{path}:{number}: phrase {name!r} has no letter or digit to speak, only {_shorten(text)!r}"
        )
    return Phrase(name=name, text=text, line=number, mel=mel)


def _check_unique(path: Path, phrases: list[Phrase]) -> None:
    # Case-insensitively: "Intro" and "intro" would be one file on macOS and Windows.
    first: dict[str, Phrase] = {}
    for phrase in phrases:
        key = phrase.name.casefold()
        if key in first:
            raise UserError(
                f"{path}:{phrase.line}: name {phrase.name!r} is already used on line {first[key].line} "
                f"({first[key].name!r}; each name becomes one <name>.wav, compared ignoring case)"
            )
        first[key] = phrase


def _shorten(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
