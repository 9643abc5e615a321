"""Which texts the front end transliterates, and the warning that names their lines."""

from __future__ import annotations

import pytest

from tts_pipeline.inference import Phrase
from tts_pipeline.inference.scripts import LISTED_LINES, ScriptNote, script_note, transliteration_warning


@pytest.mark.parametrize(
    ("text", "note"),
    [
        ("\u0645\u0631\u062d\u0628\u0627", ScriptNote(("Arabic",), True, 0)),
        ("\u05e9\u05dc\u05d5\u05dd", ScriptNote(("Hebrew",), True, 0)),
        ("\u4f60\u597d", ScriptNote(("CJK",), False, 0)),
        ("\u3053\u3093\u306b\u3061\u306f \u4e16\u754c", ScriptNote(("Hiragana", "CJK"), False, 0)),
        ("\u041f\u0440\u0438\u0432\u0435\u0442", ScriptNote(("Cyrillic",), False, 0)),
        ("Hi \u2067there\u2069 \u200f", ScriptNote((), False, 3)),
        ("Hello there.", None),
        ("The caf\u00e9 and the na\u00efve \u00c5ngstr\u00f6m.", None),  # accented Latin: read as written
        ("\uff21\uff22\uff23", None),  # full-width Latin letters
        ("It costs \u20ac5 \u2014 or \u00bd.", None),  # symbols and punctuation are read, not transliterated
    ],
)
def test_script_notes(text, note):
    assert script_note(text) == note


def test_the_note_reads_as_words():
    assert ScriptNote(("Arabic",), True, 1).describe() == "Arabic; right-to-left; 1 bidi mark dropped"
    assert ScriptNote(("Hiragana", "CJK"), False, 0).describe() == "Hiragana, CJK"


def test_the_warning_names_each_line_and_what_was_read():
    phrases = [
        Phrase("plain", "Hello.", 1),
        Phrase("greeting", "\u4f60\u597d", 3),
        Phrase("marked", "Hi \u200fthere", 7),
    ]
    warning = transliteration_warning("phrases.txt", phrases, reading=lambda text: "ni hao")
    assert warning is not None and warning.startswith("2 phrases of phrases.txt")
    assert "phrases.txt:3 'greeting' (CJK) read as 'ni hao'" in warning
    assert "phrases.txt:7 'marked' (1 bidi mark dropped)" in warning and "phrases.txt:1" not in warning
    assert transliteration_warning("phrases.txt", phrases[:1]) is None


def test_a_long_list_is_cut_and_counted():
    phrases = [Phrase(f"p{n}", "\u05e9\u05dc\u05d5\u05dd", n) for n in range(1, 101)]
    warning = transliteration_warning("many.txt", phrases)
    assert warning is not None and warning.count("many.txt:") == LISTED_LINES
    assert warning.endswith(f"and {100 - LISTED_LINES} more lines")
