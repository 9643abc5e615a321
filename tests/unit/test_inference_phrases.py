"""Phrase files: both formats, every error naming the file and line, and the phrase files we ship."""

from __future__ import annotations

import re

import pytest

from tts_pipeline.data.demo_corpus import load_sentences
from tts_pipeline.errors import UserError
from tts_pipeline.inference.phrases import Phrase, read_phrases
from tts_pipeline.text import encode, normalize_text

from ..conftest import REPO

PHRASES_DIR = REPO / "config" / "phrases"
BENCHMARK_SENTENCE = (
    "His disappearance gave color and substance to evil reports already in circulation that the will and "
    "conveyance above referred to"
)


def write(tmp_path, name: str, text: str, encoding: str = "utf-8"):
    path = tmp_path / name
    path.write_bytes(text.encode(encoding))
    return path


def test_pipe_file_skips_blank_lines_and_comments_and_keeps_bars_in_the_text(tmp_path):
    path = write(tmp_path, "p.txt", "\ufeff# a comment\n\nfirst|Hello, world.\n  second | A|B test.  \n")
    assert read_phrases(path) == [
        Phrase(name="first", text="Hello, world.", line=3),
        Phrase(name="second", text="A|B test.", line=4),
    ]


def test_tsv_file_reads_output_and_text_columns_in_any_order(tmp_path):
    content = "mel\toutput\ttext\nmels/LJ001-0001.pt\t001_printing.wav\tPrinting, in the only sense.\n\n"
    content += "mels/LJ001-0002.pt\t002_in_being\tIn being comparatively modern.\n"
    phrases = read_phrases(write(tmp_path, "devset.tsv", content))
    assert [(p.name, p.text, p.line, p.mel) for p in phrases] == [
        ("001_printing", "Printing, in the only sense.", 2, "mels/LJ001-0001.pt"),
        ("002_in_being", "In being comparatively modern.", 4, "mels/LJ001-0002.pt"),
    ]
    plain = read_phrases(write(tmp_path, "bench.tsv", "output\ttext\n01_his\tHis disappearance.\n"))
    assert plain == [Phrase(name="01_his", text="His disappearance.", line=2, mel=None)]


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("p.txt", "ok|Fine.\nno bar here\n", r"p\.txt:2: expected name\|text"),
        ("p.txt", "|No name.\n", r"p\.txt:1: the name is empty"),
        ("p.txt", "../escape|Text.\n", r"p\.txt:1: name '\.\./escape' is not safe"),
        ("p.txt", "two words|Text.\n", r"p\.txt:1: name 'two words' is not safe"),
        ("p.txt", "a|One.\n# x\nA|Two.\n", r"p\.txt:3: name 'A' is already used on line 1"),
        ("p.txt", "a|   \n", r"p\.txt:1: phrase 'a' has no text"),
        ("p.txt", "a|Fine.\nb|...\n", r"p\.txt:2: phrase 'b' has no letter or digit to speak, only '\.\.\.'"),
        ("p.txt", "a|?!\n", r"p\.txt:1: phrase 'a' has no letter or digit"),
        ("p.tsv", "output\ttext\nx\t\u2026 \u2014\n", r"p\.tsv:2: phrase 'x' has no letter or digit"),
        ("p.txt", "# only a comment\n\n", r"p\.txt: no phrases"),
        ("p.tsv", "output\tsentence\nx\tText.\n", r"p\.tsv:1: the header must name the columns"),
        ("p.tsv", "output\ttext\nx\tText.\textra\n", r"p\.tsv:2: expected 2 tab-separated fields"),
    ],
)
def test_bad_phrase_files_are_reported_with_file_and_line(tmp_path, name, content, message):
    with pytest.raises(UserError, match=message):
        read_phrases(write(tmp_path, name, content))


def test_short_texts_with_a_letter_or_digit_are_kept(tmp_path):
    phrases = read_phrases(write(tmp_path, "p.txt", "a|Oh?!\nb|42.\nc|\u00c9t\u00e9...\n"))
    assert [p.text for p in phrases] == ["Oh?!", "42.", "\u00c9t\u00e9..."]


def test_missing_and_non_utf8_files_are_reported(tmp_path):
    with pytest.raises(UserError, match="phrase file not found"):
        read_phrases(tmp_path / "absent.txt")
    with pytest.raises(UserError, match=r"latin\.txt:2: not UTF-8"):
        read_phrases(write(tmp_path, "latin.txt", "a|Fine.\nb|Caf\u00e9.\n", encoding="latin-1"))


def _normalised(text: str) -> str:
    return re.sub(r"[^a-z ]", "", " ".join(text.lower().split()))


def test_demo_phrases_are_held_out_from_the_demo_corpus_and_encodable():
    phrases = read_phrases(PHRASES_DIR / "demo.txt")
    assert len(phrases) >= 8
    lengths = [len(p.text) for p in phrases]
    assert min(lengths) < 20 and max(lengths) > 100  # short and long sentences
    corpus = [_normalised(sentence) for sentence in load_sentences()]
    for phrase in phrases:
        mine = _normalised(phrase.text)
        assert not any(mine in sentence or sentence in mine for sentence in corpus), phrase.name
        cleaned = normalize_text(phrase.text, "english_cleaners_v2")
        for kind in ("characters", "arpabet"):
            assert encode(cleaned, kind, "english_basic")


def test_benchmark_phrase_is_nvidias_128_character_sentence():
    (phrase,) = read_phrases(PHRASES_DIR / "benchmark_128.txt")
    assert phrase.text == BENCHMARK_SENTENCE
    assert len(phrase.text) == 128
