"""The english_basic symbol set and the text <-> id conversions."""

from __future__ import annotations

import pytest

from tts_pipeline.errors import UserError
from tts_pipeline.text import (
    get_symbols,
    normalize_text,
    sequence_to_text,
    symbol_to_id,
    text_to_sequence,
    unknown_characters,
)

SET = "english_basic"


def test_english_basic_layout_matches_nvidia() -> None:
    symbols = get_symbols(SET)
    assert len(symbols) == 148
    assert len(set(symbols)) == 148
    assert symbols[0] == "_" and symbols[1] == "-"
    assert symbols[2:11] == list("!'(),.:;?")
    assert symbols[11] == " "
    assert symbols[12] == "A" and symbols[37] == "Z"
    assert symbols[38] == "a" and symbols[63] == "z"
    assert symbols[64:72] == ["@AA", "@AA0", "@AA1", "@AA2", "@AE", "@AE0", "@AE1", "@AE2"]
    assert symbols[-1] == "@ZH"
    assert symbols[-3:] == ["@Y", "@Z", "@ZH"]
    assert "@HH" in symbols and "@NG" in symbols and "@ER1" in symbols


def test_symbol_to_id_is_the_inverse_of_the_list() -> None:
    ids = symbol_to_id(SET)
    assert ids[" "] == 11 and ids["_"] == 0 and ids["@AA"] == 64 and ids["@ZH"] == 147
    ids["x"] = 999  # a copy: callers cannot corrupt the table
    assert symbol_to_id(SET)["x"] == 61


def test_unknown_symbol_set_names_the_allowed_ones() -> None:
    with pytest.raises(UserError, match="english_basic"):
        get_symbols("klingon")
    with pytest.raises(UserError, match="klingon"):
        text_to_sequence("hi", "klingon")


def test_graphemes_and_arpabet_to_ids() -> None:
    assert text_to_sequence("Hi, a", SET) == [19, 46, 6, 11, 38]
    assert text_to_sequence("say {HH AH0 L OW1}!", SET) == [
        56, 38, 62, 11, 106, 73, 117, 123, 2,  # @HH=64+42, @AH0=64+9, @L=64+53, @OW1=64+59
    ]


@pytest.mark.parametrize(
    "text",
    ["hello, world!", "it's (maybe) true: yes; no?", "say {HH AH0 L OW1} twice.", "{DH IH1 S} {IH1 Z}", ""],
)
def test_round_trip(text: str) -> None:
    ids = text_to_sequence(text, SET)
    assert sequence_to_text(ids, SET) == text
    assert text_to_sequence(sequence_to_text(ids, SET), SET) == ids


def test_every_id_round_trips() -> None:
    ids = list(range(1, 148))  # all but the pad, which is not text
    assert text_to_sequence(sequence_to_text(ids, SET), SET) == ids


def test_sequence_to_text_rejects_out_of_range_ids() -> None:
    with pytest.raises(UserError, match="148"):
        sequence_to_text([1, 148], SET)


def test_unknown_characters_reports_instead_of_dropping() -> None:
    assert unknown_characters("café", SET) == ["é"]
    assert unknown_characters(normalize_text("café"), SET) == []
    assert unknown_characters(normalize_text("café", "basic_cleaners"), SET) == ["é"]
    assert unknown_characters("room 101 & co_op", SET) == ["&", "0", "1", "_"]
    assert unknown_characters("stray { brace", SET) == ["{"]
    assert unknown_characters("{HH XX1 ah0}", SET) == ["{XX1}"]
    with pytest.raises(UserError, match="é"):
        text_to_sequence("café", SET)
