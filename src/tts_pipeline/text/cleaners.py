"""Cleaners: raw text -> the spoken-form text the models are trained on.

- ``english_cleaners_v2``: NVIDIA's cleaner of that name, reproduced exactly
  (:mod:`tts_pipeline.text.nvidia_cleaners`), so NVIDIA's published checkpoints get the symbol ids
  they were trained on.
- ``english_extended_cleaners``: this project's reading, defined here. It follows the same order
  (transliterate, times, letter-digit splits and units, numbers, abbreviations and symbols,
  acronyms, lowercase, whitespace) but reads more of the text as a person would: "twenty-one"
  keeps its hyphen, no "and" after hundreds, decimals digit by digit, units such as "kg", "No."
  before a number. Currency is expanded before everything else (its symbols do not survive
  transliteration).
- ``basic_cleaners``: lower case and whitespace only.

``{...}`` chunks are ARPAbet and pass through every cleaner untouched.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from unidecode import unidecode

from tts_pipeline.text import numbers, nvidia_cleaners
from tts_pipeline.text.numbers import period_ends_sentence

# Characters unidecode would turn into something unspeakable ("1/2", "deg") or keep: read them first.
# Fractions: (after a whole number, standing alone).
_FRACTIONS = {
    "½": ("and a half", "one half"),
    "¼": ("and a quarter", "one quarter"),
    "¾": ("and three quarters", "three quarters"),
    "⅓": ("and a third", "one third"),
    "⅔": ("and two thirds", "two thirds"),
    "⅛": ("and an eighth", "one eighth"),
}
_SIGNS = [
    ("°C", " degrees celsius"), ("°F", " degrees fahrenheit"), ("°", " degrees"),
    ("≈", " approximately "), ("±", " plus or minus "), ("≠", " not equal to "),
    ("≤", " less than or equal to "), ("≥", " greater than or equal to "),
]

# Units read after a number: abbreviation -> (singular, plural). Ambiguous ones (m, g, in) are left out.
_UNITS = {
    "kg": ("kilogram", "kilograms"), "km": ("kilometer", "kilometers"),
    "cm": ("centimeter", "centimeters"), "mm": ("millimeter", "millimeters"),
    "ml": ("milliliter", "milliliters"), "mph": ("mile per hour", "miles per hour"),
    "ft": ("foot", "feet"), "lb": ("pound", "pounds"), "lbs": ("pound", "pounds"),
    "oz": ("ounce", "ounces"), "ms": ("millisecond", "milliseconds"),
    "kb": ("kilobyte", "kilobytes"), "mb": ("megabyte", "megabytes"),
    "gb": ("gigabyte", "gigabytes"), "tb": ("terabyte", "terabytes"),
    "hz": ("hertz", "hertz"), "khz": ("kilohertz", "kilohertz"), "mhz": ("megahertz", "megahertz"),
    "ghz": ("gigahertz", "gigahertz"), "kw": ("kilowatt", "kilowatts"),
}
_UNIT = re.compile(rf"\b(\d+(?:\.\d+)?)\s?({'|'.join(_UNITS)})\b", re.IGNORECASE)
_MIXED = re.compile(r"[A-Za-z0-9]+")
_NUMBER_SUFFIX = re.compile(r"\d+(?:st|nd|rd|th|s)", re.IGNORECASE)  # "21st", "1990s": not split
_DIMENSION = re.compile(r"(?<=\d)\s*[xX]\s*(?=\d)")

# Titles precede a name, so their period never ends a sentence; suffixes often do.
_TITLES = {
    "mrs": "misess", "mr": "mister", "drs": "doctors", "dr": "doctor", "st": "saint",
    "rev": "reverend", "lt": "lieutenant", "hon": "honorable", "sgt": "sergeant",
    "capt": "captain", "maj": "major", "gen": "general", "col": "colonel", "ft": "fort",
    "sen": "senator",
}
_SUFFIXES = {"jr": "junior", "esq": "esquire", "ltd": "limited", "co": "company", "etc": "et cetera"}
_TITLE_DOT = re.compile(rf"\b({'|'.join(_TITLES)})\.", re.IGNORECASE)
# British style without a period ("Mr Smith"): only a capitalised title before a capitalised name.
_TITLE_BARE = re.compile(rf"\b({'|'.join(t.capitalize() for t in _TITLES)})(?=\s+[A-Z])")
_SUFFIX_DOT = re.compile(rf"\b({'|'.join(_SUFFIXES)})\.", re.IGNORECASE)
_ETC = re.compile(r"\betc\b", re.IGNORECASE)
_URL_DOT = re.compile(r"(?<=[A-Za-z0-9])\.(?=[a-z]{2,}\b)")  # "nvidia.com", not "e.g." or "end. The"

# ASCII characters outside the symbol set: spoken names, or nothing where they carry no sound.
_SYMBOL_WORDS = {"&": " and ", "@": " at ", "%": " percent ", "+": " plus ", "=": " equals ", "#": " hash "}
_SYMBOL_SUBS = str.maketrans(
    {**_SYMBOL_WORDS, '"': "", "`": "", "[": "(", "]": ")", "{": " ", "}": " ",
     "<": " ", ">": " ", "\\": " ", "|": " ", "^": " ", "~": " ", "*": " ", "_": " "}
)

_ACRONYM = re.compile(r"\b([A-Z]{2,5})(s?)\b")
_ROMAN = re.compile(r"[IVX]+")  # "Henry VIII", "World War II": not acronyms
_WORD = re.compile(r"[A-Za-z]{2,}")
_SLASHES = re.compile(r"/+")
_SPACES = re.compile(r"\s+")
_LOOSE_PUNCTUATION = re.compile(r"(?<=\() | (?=[,.;:!?)])")  # "( approximately x )" -> "(approximately x)"
_ARPABET = re.compile(r"(\{[^{}]*\})")


def transliterate(text: str) -> str:
    """Turn Unicode into ASCII (quotes, dashes, accents, homoglyphs), reading fractions and signs first.

    Characters unidecode has no reading for (emoji, for instance) are kept, so they are reported as
    unknown later instead of vanishing.
    """
    for char, (after_number, alone) in _FRACTIONS.items():
        text = re.sub(rf"(?<=\d)\s?{char}", f" {after_number}", text)
        text = text.replace(char, f" {alone}")
    for sign, words in _SIGNS:
        text = text.replace(sign, words)
    return unidecode(text, errors="preserve")


def _split_token(match: re.Match[str]) -> str:
    token = match[0]
    has_digit = any(c.isdigit() for c in token)
    has_letter = any(c.isalpha() for c in token)
    if not (has_digit and has_letter) or _NUMBER_SUFFIX.fullmatch(token):
        return token
    return re.sub(r"(?<=\d)(?=[A-Za-z])|(?<=[A-Za-z])(?=\d)", " ", token)


def _unit_words(match: re.Match[str]) -> str:
    singular, plural = _UNITS[match[2].lower()]
    return f"{match[1]} {singular if match[1] == '1' else plural}"


def split_alphanumeric(text: str) -> str:
    """Separate letters from digits ("MP3" -> "MP 3"), then read units and dimensions ("20kg", "4x4").

    Ordinals and plural numbers ("21st", "1990s") are kept whole for the number reader.
    """
    text = _MIXED.sub(_split_token, text)
    text = _UNIT.sub(_unit_words, text)
    return _DIMENSION.sub(" by ", text)


def _abbreviation(table: dict[str, str], keep_sentence_end: bool) -> Callable[[re.Match[str]], str]:
    def expand(match: re.Match[str]) -> str:
        word = table[match[1].lower()]
        if keep_sentence_end and match[0].endswith(".") and period_ends_sentence(match):
            return word + "."
        # "Mr.Smith" needs a space after "mister"; "Jr., said" must not get one before the comma.
        return word + " " if match.string[match.end():match.end() + 1].isalnum() else word

    return expand


def expand_abbreviations(text: str) -> str:
    """Expand titles and suffixes ("Dr." -> "doctor", "etc." -> "et cetera"), web addresses and symbols."""
    text = _TITLE_DOT.sub(_abbreviation(_TITLES, keep_sentence_end=False), text)
    text = _TITLE_BARE.sub(_abbreviation(_TITLES, keep_sentence_end=False), text)
    text = _SUFFIX_DOT.sub(_abbreviation(_SUFFIXES, keep_sentence_end=True), text)
    text = _ETC.sub("et cetera", text)
    text = _URL_DOT.sub(" dot ", text)
    return text.translate(_SYMBOL_SUBS)


def _is_shouted(text: str) -> bool:
    """True when most words are upper case: then capitals mark emphasis, not acronyms."""
    words = _WORD.findall(text)
    upper = sum(w.isupper() for w in words)
    return upper >= 4 and upper > len(words) / 2


def spell_acronyms(text: str, shouted: bool = False) -> str:
    """Spell upper-case words of 2-5 letters as dotted letters: "FBI" -> "F.B.I.", "CDs" -> "C.D.s".

    Single letters ("I", "A"), capitalised words and roman numerals are left alone, and so is
    everything when ``shouted`` (mostly upper-case text, judged before other expansions).
    """
    if shouted:
        return text

    def spell(match: re.Match[str]) -> str:
        letters, plural = match[1], match[2]
        if _ROMAN.fullmatch(letters):
            return match[0]
        dotted = ".".join(letters)
        # Leave the closing dot to a period that already follows ("the FBI." -> "the F.B.I.").
        followed_by_period = match.string.startswith(".", match.end())
        return dotted + plural if followed_by_period and not plural else f"{dotted}.{plural}"

    return _ACRONYM.sub(spell, text)


def collapse_whitespace(text: str) -> str:
    """Replace each run of whitespace with one space (ends are trimmed by the caller)."""
    return _SPACES.sub(" ", text)


def tighten_punctuation(text: str) -> str:
    """Remove the spaces expansions leave before closing punctuation and after "("."""
    return _LOOSE_PUNCTUATION.sub("", text)


def _clean_english_extended(text: str) -> str:
    shouted = _is_shouted(text)
    text = numbers.expand_currency(text)
    text = transliterate(text)
    text = numbers.expand_times(text)
    text = split_alphanumeric(text)
    text = numbers.expand_numbers(text)
    text = expand_abbreviations(text)
    text = spell_acronyms(text, shouted)
    text = text.lower()
    text = _SLASHES.sub(" ", text)  # before collapsing, so "a / b" becomes one space
    return tighten_punctuation(collapse_whitespace(text))


def _clean_basic(text: str) -> str:
    return collapse_whitespace(text.lower())


def _outside_braces(clean: Callable[[str], str]) -> Callable[[str], str]:
    """Apply a cleaner to the text between ``{...}`` ARPAbet chunks, leaving the chunks as they are."""

    def cleaner(text: str) -> str:
        pieces = _ARPABET.split(text)  # odd indices are the brace chunks
        return "".join(p if i % 2 else clean(p) for i, p in enumerate(pieces)).strip()

    return cleaner


english_extended_cleaners = _outside_braces(_clean_english_extended)
basic_cleaners = _outside_braces(_clean_basic)

CLEANERS: dict[str, Callable[[str], str]] = {
    "english_cleaners_v2": nvidia_cleaners.english_cleaners_v2,
    "english_extended_cleaners": english_extended_cleaners,
    "basic_cleaners": basic_cleaners,
}
