"""Praat TextGrids: a small writer (long format) and a reader for interval tiers.

The demo corpus writes its ground-truth word and phone timings as TextGrids, and forced aligners
such as the Montreal Forced Aligner (MFA) write theirs the same way, so one reader serves both.

A tier is a list of :class:`Interval` (times in seconds) that tiles the whole file, ``[xmin, xmax]``,
without gaps; silences are intervals with an empty label, as MFA writes them. :func:`tile` turns a
sparse list of labelled segments into such a tiling.

The reader does not care about layout: Praat's text format is a stream of values (quoted strings,
numbers and flags such as ``<exists>``) decorated, in the long format, with names (``xmin =``,
``intervals [3]:``). It keeps the values and checks their structure, so long and short TextGrids,
UTF-8 or UTF-16, read the same.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tts_pipeline import files
from tts_pipeline.errors import UserError


class TextGridError(UserError):
    """A TextGrid that cannot be read; the message names the file and what is wrong."""


@dataclass(frozen=True, slots=True)
class Interval:
    """One labelled stretch of time, in seconds; an empty label is silence."""

    start: float
    end: float
    label: str


# --------------------------------------------------------------------------------------------------
# writing
# --------------------------------------------------------------------------------------------------


def tile(segments: Sequence[Interval], xmin: float, xmax: float) -> list[Interval]:
    """Fill the gaps between ``segments`` with empty intervals so that they tile ``[xmin, xmax]``.

    ``segments`` must be in time order, non-overlapping, of positive length and inside the range.
    Adjacent empty intervals are merged into one, as aligners write silences.
    """
    tiled: list[Interval] = []
    cursor = xmin
    for segment in segments:
        if segment.start < cursor or segment.end <= segment.start or segment.end > xmax:
            raise ValueError(f"segment {segment} overlaps the previous one, is empty or leaves [{xmin}, {xmax}]")
        if segment.start > cursor:
            _append(tiled, Interval(cursor, segment.start, ""))
        _append(tiled, segment)
        cursor = segment.end
    if cursor < xmax or not tiled:
        _append(tiled, Interval(cursor, xmax, ""))
    return tiled


def _append(tiled: list[Interval], interval: Interval) -> None:
    """Append, merging an empty interval into an empty predecessor."""
    if tiled and not interval.label and not tiled[-1].label:
        tiled[-1] = Interval(tiled[-1].start, interval.end, "")
    else:
        tiled.append(interval)


def format_textgrid(tiers: Mapping[str, Sequence[Interval]], xmin: float, xmax: float) -> str:
    """Praat long-format text of interval tiers (in mapping order) spanning ``[xmin, xmax]``."""
    lines = [
        'File type = "ooTextFile"',
        'Object class = "TextGrid"',
        "",
        f"xmin = {_number(xmin)}",
        f"xmax = {_number(xmax)}",
        "tiers? <exists>",
        f"size = {len(tiers)}",
        "item []:",
    ]
    for tier_number, (name, intervals) in enumerate(tiers.items(), start=1):
        lines += [
            f"    item [{tier_number}]:",
            '        class = "IntervalTier"',
            f"        name = {_string(name)}",
            f"        xmin = {_number(xmin)}",
            f"        xmax = {_number(xmax)}",
            f"        intervals: size = {len(intervals)}",
        ]
        for number, interval in enumerate(intervals, start=1):
            lines += [
                f"        intervals [{number}]:",
                f"            xmin = {_number(interval.start)}",
                f"            xmax = {_number(interval.end)}",
                f"            text = {_string(interval.label)}",
            ]
    return "\n".join(lines) + "\n"


def write_textgrid(path: str | Path, tiers: Mapping[str, Sequence[Interval]], xmin: float, xmax: float) -> None:
    """Write interval tiers as a long-format TextGrid (UTF-8), atomically.

    Each tier must already tile ``[xmin, xmax]`` (see :func:`tile`); Praat and aligners expect it.
    """
    for name, intervals in tiers.items():
        _check_tiling(intervals, xmin, xmax, f"tier '{name}'")
    files.write_text(path, format_textgrid(tiers, xmin, xmax))


def _check_tiling(intervals: Sequence[Interval], xmin: float, xmax: float, what: str) -> None:
    if not intervals:
        raise ValueError(f"{what}: no intervals")
    cursor = xmin
    for interval in intervals:
        if interval.start != cursor or interval.end <= interval.start:
            raise ValueError(f"{what}: interval {interval} does not continue at {cursor} with positive length")
        cursor = interval.end
    if cursor != xmax:
        raise ValueError(f"{what}: ends at {cursor}, expected {xmax}")


def _number(value: float) -> str:
    # repr is the shortest text that reads back as the same float: tiers stay exactly contiguous.
    return repr(float(value))


def _string(text: str) -> str:
    # Praat escapes a double quote inside a string by doubling it.
    return '"' + text.replace('"', '""') + '"'


# --------------------------------------------------------------------------------------------------
# reading
# --------------------------------------------------------------------------------------------------

# Values are quoted strings ("" is an escaped quote), flags (<exists>) and numbers. Anything else
# (names, "=", "[3]:" indices) is decoration; the index pattern comes first so "[3]" is not a number.
_TOKEN = re.compile(
    r'(?P<string>"(?:[^"]|"")*")'
    r"|(?P<flag><[A-Za-z]+>)"
    r"|(?P<index>\[[^\]\s]*\]:?)"
    r"|(?P<number>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)(?=\s|$)"
    r'|(?P<other>[^\s"]+)'
)


def _decode(raw: bytes) -> str:
    # Praat saves TextGrids with non-ASCII labels as UTF-16 (with a byte-order mark); MFA uses UTF-8.
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return raw.decode("utf-16")
    return raw.decode("utf-8-sig")


def _values(text: str) -> Iterator[str | float]:
    """The value tokens of a Praat text file: strings (unquoted), flags (with <>) and floats."""
    for match in _TOKEN.finditer(text):
        kind = match.lastgroup
        token = match.group()
        if kind == "string":
            yield token[1:-1].replace('""', '"')
        elif kind == "flag":
            yield token
        elif kind == "number":
            yield float(token)


class _Reader:
    """Takes values off the token stream, checking each one's kind."""

    def __init__(self, values: Iterator[str | float], path: Path) -> None:
        self._values = values
        self._path = path

    def error(self, message: str) -> TextGridError:
        return TextGridError(f"{self._path}: not a readable TextGrid: {message}")

    def _next(self, expected: str) -> str | float:
        try:
            return next(self._values)
        except StopIteration:
            raise self.error(f"file ends where {expected} was expected") from None

    def string(self, expected: str) -> str:
        value = self._next(expected)
        if not isinstance(value, str) or value.startswith("<"):
            raise self.error(f"expected {expected} (a quoted string), found {value!r}")
        return value

    def number(self, expected: str) -> float:
        value = self._next(expected)
        if not isinstance(value, float):
            raise self.error(f"expected {expected} (a number), found {value!r}")
        return value

    def count(self, expected: str) -> int:
        value = self.number(expected)
        if value < 0 or value != int(value):
            raise self.error(f"expected {expected} (a count), found {value!r}")
        return int(value)

    def flag(self, expected: str) -> str:
        value = self._next(expected)
        if not isinstance(value, str) or not value.startswith("<"):
            raise self.error(f"expected {expected} (<exists> or <absent>), found {value!r}")
        return value


def read_textgrid(path: str | Path) -> dict[str, list[Interval]]:
    """Read a Praat TextGrid (long or short text format) into ``{tier name: intervals}``.

    Interval tiers give their intervals in file order; point tiers (``TextTier``) give one
    zero-length interval per point (``start == end``). Raises :class:`TextGridError`, naming the
    file, when it is missing, not text, not a TextGrid, truncated, or has overlapping, unordered or
    out-of-range intervals, or two tiers with one name.
    """
    path = Path(path)
    try:
        text = _decode(path.read_bytes())
    except FileNotFoundError:
        raise TextGridError(f"{path}: TextGrid file not found") from None
    except UnicodeDecodeError as error:
        raise TextGridError(f"{path}: not a readable TextGrid: not UTF-8 or UTF-16 text ({error.reason})") from None
    reader = _Reader(_values(text), path)

    file_type = reader.string("the file type 'ooTextFile'")
    object_class = reader.string("the object class 'TextGrid'")
    if file_type != "ooTextFile" or object_class != "TextGrid":
        raise reader.error(f"header says {file_type!r} / {object_class!r}, expected 'ooTextFile' / 'TextGrid'")
    xmin = reader.number("xmin")
    xmax = reader.number("xmax")
    if xmax < xmin:
        raise reader.error(f"xmax {xmax} is before xmin {xmin}")
    if reader.flag("'tiers? <exists>'") != "<exists>":
        return {}
    n_tiers = reader.count("the number of tiers")

    tiers: dict[str, list[Interval]] = {}
    for _ in range(n_tiers):
        name, intervals = _read_tier(reader, xmin, xmax)
        if name in tiers:
            raise reader.error(f"two tiers are named {name!r}")
        tiers[name] = intervals
    return tiers


def _read_tier(reader: _Reader, xmin: float, xmax: float) -> tuple[str, list[Interval]]:
    tier_class = reader.string("a tier class")
    name = reader.string("a tier name")
    tier_min = reader.number(f"xmin of tier {name!r}")
    tier_max = reader.number(f"xmax of tier {name!r}")
    n_items = reader.count(f"the size of tier {name!r}")
    # Tolerate rounding in the last digits that some writers leave between tier and file bounds.
    low, high = min(xmin, tier_min) - 1e-6, max(xmax, tier_max) + 1e-6
    intervals: list[Interval] = []
    if tier_class == "IntervalTier":
        for number in range(1, n_items + 1):
            where = f"interval {number} of tier {name!r}"
            start = reader.number(f"xmin of {where}")
            end = reader.number(f"xmax of {where}")
            label = reader.string(f"text of {where}")
            if end < start or start < low or end > high or (intervals and start < intervals[-1].end - 1e-6):
                raise reader.error(f"{where} [{start}, {end}] is reversed, overlaps or leaves [{xmin}, {xmax}]")
            intervals.append(Interval(start, end, label))
    elif tier_class == "TextTier":
        for number in range(1, n_items + 1):
            where = f"point {number} of tier {name!r}"
            time = reader.number(f"time of {where}")
            label = reader.string(f"mark of {where}")
            if time < low or time > high or (intervals and time < intervals[-1].start):
                raise reader.error(f"{where} at {time} is out of order or leaves [{xmin}, {xmax}]")
            intervals.append(Interval(time, time, label))
    else:
        raise reader.error(f"tier {name!r} has class {tier_class!r}, expected 'IntervalTier' or 'TextTier'")
    return name, intervals
