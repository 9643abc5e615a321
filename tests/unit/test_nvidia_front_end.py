"""english_cleaners_v2 against NVIDIA's own front end, on sentences NVIDIA's code processed.

``tests/fixtures/nvidia_text_front_end.jsonl`` holds, per line: the raw ``text``; NVIDIA's
``cleaned`` text and its character ``ids``; NVIDIA's ``arpabet`` text (p_arpabet = 1.0, their
heteronym list, CMUdict 0.7b) and its ``arpabet_ids``. It was made by running NVIDIA's
``TextProcessing("english_basic", ["english_cleaners_v2"], ...).encode_text`` from
DeepLearningExamples' FastPitch on numbers, times, money, decimals, ordinals, units, roman
numerals, abbreviations, acronyms, heteronyms, e-mail, "No." and non-ASCII punctuation, then on
71 LJSpeech transcripts from NVIDIA's ``filelists/ljs_audio_text.txt``: the 31 where the previous
reading differed from NVIDIA's ("etc.", "Jr.", "Müller", "[Marina]"...) and 40 drawn at random.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tts_pipeline.text import encode, normalize_text
from tts_pipeline.text.nvidia_cleaners import nvidia_cleaned_text

FIXTURE = Path(__file__).parents[1] / "fixtures" / "nvidia_text_front_end.jsonl"
CASES = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]
# NVIDIA keeps these in the cleaned text and skips them when encoding; our cleaner removes them.
_SKIPPED_BY_NVIDIA = re.compile(r"[^A-Za-z!'(),.:;? \-{}]")


def _ids(field: str) -> list[int]:
    return [int(i) for i in field.split()]


def test_fixture_covers_the_listed_kinds_of_text() -> None:
    texts = " ".join(case["text"] for case in CASES)
    for sample in ("221B", "George III", "e-mail", "No. 5", "20kg", "7:30", "$12.78", "3.14", "21st", "read"):
        assert sample in texts
    assert len(CASES) >= 300


@pytest.mark.parametrize("case", CASES, ids=range(len(CASES)))
def test_cleaned_text_matches_nvidia(case: dict[str, str]) -> None:
    assert nvidia_cleaned_text(case["text"]) == case["cleaned"]
    cleaned = normalize_text(case["text"], "english_cleaners_v2")
    assert cleaned == _SKIPPED_BY_NVIDIA.sub("", case["cleaned"])


@pytest.mark.parametrize("case", CASES, ids=range(len(CASES)))
def test_character_ids_match_nvidia(case: dict[str, str]) -> None:
    cleaned = normalize_text(case["text"], "english_cleaners_v2")
    assert encode(cleaned, "characters", "english_basic") == _ids(case["ids"])


@pytest.mark.parametrize("case", CASES, ids=range(len(CASES)))
def test_arpabet_ids_match_nvidia(case: dict[str, str]) -> None:
    cleaned = normalize_text(case["text"], "english_cleaners_v2")
    assert encode(cleaned, "arpabet", "english_basic") == _ids(case["arpabet_ids"])
