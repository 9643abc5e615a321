"""TextGrid writer and reader: round trips, MFA-style files, Praat's other layouts, bad input."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tts_pipeline.data.textgrid import (
    Interval,
    TextGridError,
    format_textgrid,
    read_textgrid,
    tile,
    write_textgrid,
)
from tts_pipeline.errors import UserError

# The shape MFA writes: long format, indented, empty labels for silences, and (added below, so
# that editors cannot strip them) a trailing space after every value.
MFA_LIKE = """File type = "ooTextFile"
Object class = "TextGrid"

xmin = 0
xmax = 1.53
tiers? <exists>
size = 2
item []:
    item [1]:
        class = "IntervalTier"
        name = "words"
        xmin = 0
        xmax = 1.53
        intervals: size = 4
        intervals [1]:
            xmin = 0
            xmax = 0.12
            text = ""
        intervals [2]:
            xmin = 0.12
            xmax = 0.61
            text = "hello"
        intervals [3]:
            xmin = 0.61
            xmax = 1.4
            text = "world"
        intervals [4]:
            xmin = 1.4
            xmax = 1.53
            text = ""
    item [2]:
        class = "IntervalTier"
        name = "phones"
        xmin = 0
        xmax = 1.53
        intervals: size = 3
        intervals [1]:
            xmin = 0
            xmax = 0.12
            text = ""
        intervals [2]:
            xmin = 0.12
            xmax = 0.2
            text = "HH"
        intervals [3]:
            xmin = 0.2
            xmax = 1.53
            text = "AH0"
"""

MFA_LIKE = re.sub(r"(?m)^(.* = .*|item \[\]:)$", r"\1 ", MFA_LIKE)

# The same kind of content in Praat's short format, with a point tier and an escaped quote.
SHORT_FORMAT = '''File type = "ooTextFile"
Object class = "TextGrid"

0
2.5
<exists>
2
"IntervalTier"
"words"
0
2.5
2
0
1.25
"say ""hi"""
1.25
2.5
""
"TextTier"
"events"
0
2.5
1
1e0
"click"
'''


def test_reads_an_mfa_style_long_format_file(tmp_path: Path) -> None:
    assert "xmax = 1.53 \n" in MFA_LIKE
    path = tmp_path / "utt.TextGrid"
    path.write_text(MFA_LIKE, encoding="utf-8")
    tiers = read_textgrid(path)
    assert list(tiers) == ["words", "phones"]
    assert tiers["words"] == [
        Interval(0.0, 0.12, ""),
        Interval(0.12, 0.61, "hello"),
        Interval(0.61, 1.4, "world"),
        Interval(1.4, 1.53, ""),
    ]
    assert [interval.label for interval in tiers["phones"]] == ["", "HH", "AH0"]


def test_reads_short_format_point_tiers_and_escaped_quotes(tmp_path: Path) -> None:
    path = tmp_path / "short.TextGrid"
    path.write_text(SHORT_FORMAT, encoding="utf-8")
    tiers = read_textgrid(path)
    assert tiers["words"] == [Interval(0.0, 1.25, 'say "hi"'), Interval(1.25, 2.5, "")]
    assert tiers["events"] == [Interval(1.0, 1.0, "click")]


def test_reads_utf16_files_as_praat_saves_them(tmp_path: Path) -> None:
    path = tmp_path / "praat.TextGrid"
    path.write_bytes(MFA_LIKE.replace('"world"', '"wörld"').encode("utf-16"))
    assert read_textgrid(path)["words"][2].label == "wörld"


def test_write_then_read_round_trips_exact_times(tmp_path: Path) -> None:
    duration = 12345 / 22050
    segments = [Interval(100 / 22050, 5000 / 22050, 'a "quoted" word'), Interval(5000 / 22050, 9000 / 22050, "x")]
    words = tile(segments, 0.0, duration)
    path = tmp_path / "out.TextGrid"
    write_textgrid(path, {"words": words, "phones": tile([], 0.0, duration)}, 0.0, duration)
    tiers = read_textgrid(path)
    assert tiers["words"] == words
    assert tiers["phones"] == [Interval(0.0, duration, "")]
    assert not list(tmp_path.glob(".*.tmp")), "atomic write left a temporary file"


def test_tile_fills_gaps_and_merges_adjacent_silences() -> None:
    tiled = tile([Interval(0.5, 1.0, "a"), Interval(1.0, 1.5, ""), Interval(2.0, 2.5, "b")], 0.0, 3.0)
    assert tiled == [
        Interval(0.0, 0.5, ""),
        Interval(0.5, 1.0, "a"),
        Interval(1.0, 2.0, ""),
        Interval(2.0, 2.5, "b"),
        Interval(2.5, 3.0, ""),
    ]


@pytest.mark.parametrize(
    "segments",
    [
        [Interval(0.5, 1.0, "a"), Interval(0.9, 1.2, "b")],  # overlap
        [Interval(0.5, 0.5, "a")],  # zero length
        [Interval(0.5, 3.5, "a")],  # past the end
    ],
)
def test_tile_rejects_bad_segments(segments: list[Interval]) -> None:
    with pytest.raises(ValueError):
        tile(segments, 0.0, 3.0)


def test_writer_refuses_tiers_that_do_not_tile(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="words"):
        write_textgrid(tmp_path / "x.TextGrid", {"words": [Interval(0.0, 1.0, "a")]}, 0.0, 2.0)
    assert not (tmp_path / "x.TextGrid").exists()


def test_format_is_long_format_with_named_tiers() -> None:
    text = format_textgrid({"words": [Interval(0.0, 1.0, "a")]}, 0.0, 1.0)
    assert text.startswith('File type = "ooTextFile"\nObject class = "TextGrid"\n')
    assert 'name = "words"' in text and "intervals: size = 1" in text


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("just some words\n", "the file type 'ooTextFile' was expected"),
        (MFA_LIKE.replace('"TextGrid"', '"Pitch"'), "expected 'ooTextFile' / 'TextGrid'"),
        (MFA_LIKE[: MFA_LIKE.index("intervals [3]")], "file ends"),
        (MFA_LIKE.replace("xmin = 0.61", "xmin = 0.5"), "overlaps"),
        (MFA_LIKE.replace('name = "phones"', 'name = "words"'), "two tiers are named 'words'"),
        (MFA_LIKE.replace('"IntervalTier"', '"Blob"'), "tier 'words' has class 'Blob'"),
    ],
)
def test_bad_files_raise_user_errors_naming_the_file(tmp_path: Path, content: str, reason: str) -> None:
    path = tmp_path / "bad.TextGrid"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(TextGridError, match=reason) as caught:
        read_textgrid(path)
    assert str(path) in str(caught.value)
    assert isinstance(caught.value, UserError)


def test_missing_and_binary_files_are_user_errors(tmp_path: Path) -> None:
    with pytest.raises(TextGridError, match="not found"):
        read_textgrid(tmp_path / "absent.TextGrid")
    binary = tmp_path / "binary.TextGrid"
    binary.write_bytes(b"\x00\x9f\x92\x96 not text")
    with pytest.raises(TextGridError, match=str(binary)):
        read_textgrid(binary)
