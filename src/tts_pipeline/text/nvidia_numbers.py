"""Numbers read the way NVIDIA's ``english_cleaners_v2`` reads them (FastPitch 1.1 recipe).

A published NVIDIA checkpoint was trained on these readings, quirks included, so they are
reproduced rule for rule rather than improved:

- money: ``$12.78`` -> "twelve dollars, seventy-eight cents" (inflect's hyphens and "and" kept);
  ``$3.5`` reads the fraction as a count of cents ("five cents");
- decimals: ``3.14`` -> "three point fourteen" (the fraction is a second number);
- ordinals: inflect's words, hyphen kept ("twenty-first");
- roman numerals of at least two letters ending in ``II``/``III``/``IV``/``IX``... become numbers
  ("George III" -> "George three"); ``V``, ``X`` and ``VI`` do not;
- integers: no hyphens or commas, "and" after hundreds ("one hundred and one"); 1001-2999 as years
  in pairs ("nineteen eighty four", "nineteen oh five", "two thousand five"); a multiple of 100
  above 1000 that is not one of 1000 as hundreds ("fifteen hundred");
- a plural number ends in "ies" after a "y" ("1990s" and "1990's" -> "nineteen nineties"), else
  keeps its suffix ("10's" -> "ten's").
"""

from __future__ import annotations

import re

# The project's single inflect engine: importing inflect is slow, so it is made once, lazily.
from tts_pipeline.text.numbers import _engine

# Magnitudes NVIDIA recognises after an amount of money; one-letter ones are abbreviations.
_MAGNITUDES = ("trillion", "billion", "million", "thousand", "hundred", "m", "b", "t")
_SHORT_MAGNITUDES = {"m": "million", "b": "billion", "t": "trillion"}
_CURRENCY_NAMES = {"$": "dollar", "£": "pound", "€": "euro", "₩": "won"}

# An amount is any run of digits, dots and commas ending in a digit; a magnitude must not be
# followed by a letter ("$5 thousand" but not "$5 bucks" -> "b").
CURRENCY = re.compile(
    r"([$€£₩])([0-9.,]*[0-9]+)(?: ?(" + "|".join(_MAGNITUDES) + r")(?=[^a-zA-Z]|$))?",
    re.IGNORECASE,
)
_GROUPED = re.compile(r"([0-9][0-9,]+[0-9])")
_DECIMAL = re.compile(r"([0-9]+\.[0-9]+)")
_ORDINAL = re.compile(r"[0-9]+(?:st|nd|rd|th)")
# Requires the units part to be II, III, IV, IX or V followed by I's: a lone "I", "V", "X" or
# "VI" is a letter or a word more often than a number.
_ROMAN = re.compile(r"\b(?=[MDCLXVI]+\b)M{0,4}(?:CM|CD|D?C{0,3})(?:XC|XL|L?X{0,3})(?:IX|IV|V?I{2,3})\b")
_ROMAN_VALUES = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}
_MULTIPLY = re.compile(r"(\b[0-9]+)x([0-9]+)")
_INTEGER = re.compile(r"[0-9]+'s|[0-9]+s|[0-9]+")


def _words(number: int | str, **options: str | int) -> str:
    """inflect's reading with its defaults ("and" after hundreds, commas, hyphens) unless overridden."""
    return _engine().number_to_words(number, **options)


def _hundreds(amount: str | int) -> str:
    """Money amounts: 1100-9900 in hundreds ("fifteen hundred"), else inflect's default reading."""
    number = float(amount)
    if 1000 < number < 10000 and number % 100 == 0 and number % 1000 != 0:
        return _words(int(number / 100)) + " hundred"
    return _words(amount)


def money_words(match: re.Match[str]) -> str:
    """Read a :data:`CURRENCY` match: symbol, amount and an optional magnitude."""
    unit = _CURRENCY_NAMES[match[1]]
    amount = match[2].replace(",", "")
    magnitude = match[3]
    if magnitude is not None:
        magnitude = _SHORT_MAGNITUDES.get(magnitude.lower(), magnitude)
        return f"{_hundreds(amount)} {magnitude} {unit}s"
    parts = amount.split(".")
    if len(parts) > 2:  # "1.2.3": not an amount; the digits are read later as numbers
        return f"{amount} {unit}s"
    whole = int(parts[0]) if parts[0] else 0
    cents = int(parts[1]) if len(parts) > 1 and parts[1] else 0
    whole_words = f"{_hundreds(whole)} {unit if whole == 1 else unit + 's'}"
    cent_words = f"{_words(cents)} {'cent' if cents == 1 else 'cents'}"
    if whole and cents:
        return f"{whole_words}, {cent_words}"
    if whole:
        return whole_words
    if cents:
        return cent_words
    return f"zero {unit}s"


def _roman_value(numeral: str) -> int:
    """Subtractive reading: a letter smaller than the next one counts negative ("XIV" -> 14)."""
    values = [_ROMAN_VALUES[letter] for letter in numeral]
    return sum(-v if i + 1 < len(values) and v < values[i + 1] else v for i, v in enumerate(values))


def integer_words(token: str) -> str:
    """Read digits with an optional ``s`` / ``'s`` suffix (an :data:`_INTEGER` match)."""
    digits = token.rstrip("'s") if token.endswith("s") else token
    suffix = token[len(digits):]
    number = int(digits)
    if number > 1000 and number % 100 == 0 and number % 1000 != 0:
        text = _words(number // 100) + " hundred"  # hyphens kept: "twenty-three hundred"
    elif 1000 < number < 3000:
        if number == 2000:
            text = "two thousand"
        elif 2000 < number < 2010:
            text = "two thousand " + _words(number % 100)
        else:
            text = _words(number, andword="", zero="oh", group=2).replace(", ", " ").replace("-", " ")
    else:
        text = _words(number, andword="and").replace("-", " ").replace(",", "")
    if suffix:
        text = text[:-1] + "ies" if text.endswith("y") else text + suffix
    return text


def normalize_numbers(text: str) -> str:
    """Replace every numeral of one whitespace-free token, in NVIDIA's order."""
    text = _GROUPED.sub(lambda m: m[1].replace(",", ""), text)
    text = CURRENCY.sub(money_words, text)
    text = _DECIMAL.sub(lambda m: m[1].replace(".", " point "), text)
    text = _ORDINAL.sub(lambda m: _words(m[0]), text)
    text = _ROMAN.sub(lambda m: str(_roman_value(m[0])), text)
    text = _MULTIPLY.sub(r"\1 by \2", text)
    return _INTEGER.sub(lambda m: integer_words(m[0]), text)
