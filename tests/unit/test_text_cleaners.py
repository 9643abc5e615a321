"""english_extended_cleaners and basic_cleaners: what raw text becomes before it reaches a model.

NVIDIA's english_cleaners_v2 is checked against NVIDIA's own output in test_nvidia_front_end.py.
"""

from __future__ import annotations

import re

import pytest

from tts_pipeline.errors import UserError
from tts_pipeline.text import normalize_text, unknown_characters
from tts_pipeline.text.numbers import year

EXTENDED = "english_extended_cleaners"

CASES = [
    # numbers: cardinals, grouped, decimals, ordinals, plurals, negatives, leading zeros
    ("I have 3 cats and 42 dogs.", "i have three cats and forty-two dogs."),
    ("1,000,000 stars", "one million stars"),
    ("pi is 3.14", "pi is three point one four"),
    ("version 2.0.1", "version two point zero point one"),
    ("the 21st and 2nd and 103rd", "the twenty-first and second and one hundred third"),
    ("in the 1990s", "in the nineteen nineties"),
    ("it was -5 outside", "it was minus five outside"),
    ("agent 007", "agent seven"),
    ("No. 5 and #7", "number five and number seven"),
    # years (between 1000 and 3000) and numbers that are not years
    ("in 1999", "in nineteen ninety-nine"),
    ("in 1905 and 1900", "in nineteen oh five and nineteen hundred"),
    ("2005 and 2010", "two thousand five and twenty ten"),
    ("1000 and 3000", "one thousand and three thousand"),
    # currency
    ("$3.50", "three dollars, fifty cents"),
    ("$1", "one dollar"),
    ("$0.01", "one cent"),
    ("£2.05", "two pounds, five pence"),
    ("€1,000,000", "one million euros"),
    ("$5 million", "five million dollars"),
    ("it cost 20€.", "it cost twenty euros."),
    ("it cost $1,000, sadly", "it cost one thousand dollars, sadly"),
    # percent and symbols
    ("15% off", "fifteen percent off"),
    ("Tom & Jerry", "tom and jerry"),
    ("2 + 2 = 4", "two plus two equals four"),
    ("mail me@example.com", "mail me at example dot com"),
    ("and/or", "and or"),
    # times
    ("at 3:30 pm", "at three thirty p m"),
    ("at 3:30PM sharp", "at three thirty p m sharp"),
    ("at 11am", "at eleven a m"),
    ("at 9:05", "at nine oh five"),
    ("at 12:00", "at twelve o'clock"),
    ("leave at 5 p.m. Then rest", "leave at five p m. then rest"),
    # letter-digit splits, units, dimensions
    ("an MP3 file", "an m.p. three file"),
    ("weighs 20kg", "weighs twenty kilograms"),
    ("1 ft long", "one foot long"),
    ("8GB at 3.5GHz", "eight gigabytes at three point five gigahertz"),
    ("a 4x4 grid", "a four by four grid"),
    # abbreviations
    ("Mr. Smith and Mrs. Jones", "mister smith and misess jones"),
    ("Dr. Who met Drs. Lee", "doctor who met doctors lee"),
    ("St. Louis", "saint louis"),
    ("Mr.Smith", "mister smith"),
    ("Mr Smith", "mister smith"),
    ("Smith, Jr., said", "smith, junior, said"),
    ("Acme Co. and Acme Ltd.", "acme company and acme limited."),
    ("Rev. Lt. Hon. Sgt. Capt. X", "reverend lieutenant honorable sergeant captain x"),
    ("Maj. Gen. Col. Sen. Ft. X", "major general colonel senator fort x"),
    ("John Doe, Esq.", "john doe, esquire."),
    ("apples, pears, etc.", "apples, pears, et cetera."),
    ("apples, etc, pears", "apples, et cetera, pears"),
    # acronyms
    ("the FBI said", "the f.b.i. said"),
    ("ask the FBI.", "ask the f.b.i."),
    ("two CDs", "two c.d.s"),
    ("I saw A cat", "i saw a cat"),
    ("The Quick Fox", "the quick fox"),
    ("Henry VIII", "henry viii"),
    ("THIS IS A SHOUTED NEWS HEADLINE", "this is a shouted news headline"),
    # unicode
    ("“Hello,” she said — it’s café…", "hello, she said -- it's cafe..."),
    ("naïve façade", "naive facade"),
    ("2½ cups and ½ hour", "two and a half cups and one half hour"),
    ("30°C", "thirty degrees celsius"),
    ("(≈ 5 kg)", "(approximately five kilograms)"),
    # whitespace
    ("  lots \t of\n\nspace  ", "lots of space"),
]


@pytest.mark.parametrize(("raw", "expected"), CASES)
def test_english_extended_cleaners(raw: str, expected: str) -> None:
    assert normalize_text(raw, EXTENDED) == expected


def test_arpabet_chunks_are_left_untouched() -> None:
    assert normalize_text("Say {HH AH0 L OW1} to Dr. X", EXTENDED) == "say {HH AH0 L OW1} to doctor x"
    assert normalize_text("{AA1 B}  {K}", "basic_cleaners") == "{AA1 B} {K}"


def test_basic_cleaners_only_lowercase_and_collapse_whitespace() -> None:
    assert normalize_text("  Hello   Dr. 3 Café ", "basic_cleaners") == "hello dr. 3 café"


def test_unknown_cleaner_names_the_allowed_ones() -> None:
    with pytest.raises(UserError, match="basic_cleaners.*english_cleaners_v2"):
        normalize_text("hi", "french_cleaners")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1999, "nineteen ninety-nine"),
        (2001, "two thousand one"),
        (1066, "ten sixty-six"),
        (2100, "twenty-one hundred"),
    ],
)
def test_year_reading(value: int, expected: str) -> None:
    assert year(value) == expected


TRICKY = [
    "On 12/25/2024 at 10:45:30 p.m., 3,456 people paid $12,345.67 (≈ €11,000) — 99.9% of them!",
    "Call 1-800-555-0199 or email support@nvidia.com; ref #A12B34, ISBN 978-3-16-148410-0.",
    "The 3rd-gen RTX4090 has 24GB VRAM @ 2.52GHz, 1920×1080 @ 144Hz, 450W TDP.",
    "In 1776, 13 colonies… In the ’60s and 1980’s, 1/3 of 2¾ ≈ 0.9166.",
    "Temperatures hit −40°F; ½ the 1000s of £5 notes were torn [sic] <b>bold</b> {",
    "H2O, CO2, 5G, 4K, 1080p, 60fps, Win10, COVID-19, B2B, 24/7, 9/11, x86_64, 0x1F.",
    "Ça coûte 5 € — “très cher” ‘vraiment’, n’est-ce pas? Straße, Ærøskøbing, Dvořák.",
    "Numbers: 0, 00, 1e6, 10^9, 3.14159265358979, 12345678901234567890, 1.2.3.4, 2nd/3rd.",
    "MR. SMITH & CO. LTD. PAID $1.2 BILLION IN 2019; ETC.",
    "Tabs\tand\nnewlines\r\nand\u00a0nbsp\u200band zero-width;",
    "`code` and \"quotes\" and *stars* ~tilde~ a|b \\ c.",
]


@pytest.mark.parametrize("raw", TRICKY)
def test_cleaned_text_has_no_digits_and_fits_the_symbol_set(raw: str) -> None:
    cleaned = normalize_text(raw, EXTENDED)
    assert not re.search(r"\d", cleaned), cleaned
    assert unknown_characters(cleaned, "english_basic") == [], cleaned
    assert cleaned == cleaned.strip() and "  " not in cleaned
    assert normalize_text(raw, EXTENDED) == cleaned  # deterministic


def test_unreadable_characters_survive_cleaning_to_be_reported() -> None:
    cleaned = normalize_text("smile 🙂 please", EXTENDED)
    assert unknown_characters(cleaned, "english_basic") == ["🙂"]
