"""Numbers read aloud: money, clock times, cardinals, decimals, ordinals, years and percentages.

Every ``expand_*`` function takes ASCII text and returns it with the matching numerals replaced by
words; :func:`expand_numbers` is the last resort that leaves no digit behind.
"""

from __future__ import annotations

import re
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import inflect

# Above this many digits nobody reads a number as a quantity (and inflect runs out of names).
_MAX_CARDINAL_DIGITS = 15

# symbol -> (unit singular, unit plural, subunit singular, subunit plural)
_CURRENCIES: dict[str, tuple[str, str, str, str]] = {
    "$": ("dollar", "dollars", "cent", "cents"),
    "£": ("pound", "pounds", "penny", "pence"),
    "€": ("euro", "euros", "cent", "cents"),
}
_SCALES = r"thousand|million|billion|trillion"
_AMOUNT = r"(?:(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+)"
_SYMBOL = "[" + re.escape("".join(_CURRENCIES)) + "]"
_MONEY_BEFORE = re.compile(rf"({_SYMBOL})\s?({_AMOUNT})(?:\s?({_SCALES})\b)?", re.IGNORECASE)
_MONEY_AFTER = re.compile(rf"(?<![\w.])({_AMOUNT})\s?({_SYMBOL})")

_AMPM = r"\s?([AaPp])\.?\s?[Mm](?![A-Za-z])(\.?)"
_CLOCK = re.compile(rf"\b([01]?\d|2[0-3]):([0-5]\d)(?!\d)(?:{_AMPM})?")
_HOUR_AMPM = re.compile(rf"\b(1[0-2]|0?[1-9]){_AMPM}")

_GROUPED = re.compile(r"\b\d{1,3}(?:,\d{3})+\b")
_PERCENT = re.compile(r"(?<=\d)\s?%")
_NUMBER_SIGN = re.compile(r"(?:#|\b[Nn][Oo]\.)\s?(?=\d)")
_NEGATIVE = re.compile(r"(?<![\w.-])-(?=\d)")
_ORDINAL = re.compile(r"\b(\d+)(?:st|nd|rd|th)\b", re.IGNORECASE)
_PLURAL = re.compile(r"\b(\d+)'?s\b")
_DECIMAL = re.compile(r"(\d*)\.(\d+)")
_INTEGER = re.compile(r"\d+")


@cache
def _engine() -> inflect.engine:
    """One inflect engine per process, never mutated.

    Imported here, not at module level: importing inflect takes about two seconds (typeguard
    instruments it), which code that only needs the symbol tables should not pay.
    """
    import inflect

    return inflect.engine()


def _digits(digits: str) -> str:
    """Read a digit string one digit at a time: "042" -> "zero four two"."""
    return " ".join(_engine().number_to_words(d) for d in digits)


def cardinal(digits: str | int) -> str:
    """Read an integer as a quantity without "and" or commas: 1205 -> "one thousand two hundred five"."""
    digits = str(digits)
    if len(digits.lstrip("0")) > _MAX_CARDINAL_DIGITS:
        return _digits(digits)
    return _engine().number_to_words(int(digits), andword="", comma="")


def ordinal(digits: str | int) -> str:
    """Read an integer as a rank: 21 -> "twenty-first"."""
    if len(str(digits).lstrip("0")) > _MAX_CARDINAL_DIGITS:
        return _digits(str(digits))
    engine = _engine()
    return engine.number_to_words(engine.ordinal(int(digits)), andword="", comma="")


def decimal(integer_part: str, fraction_part: str) -> str:
    """Read a decimal number, the fraction digit by digit: ("3", "14") -> "three point one four"."""
    whole = f"{cardinal(integer_part)} " if integer_part else ""
    return f"{whole}point {_digits(fraction_part)}"


def year(value: int) -> str:
    """Read a number the way years are spoken, in pairs: 1999 -> "nineteen ninety-nine".

    2000-2009 and 1000-1009 stay cardinals ("two thousand five"), whole centuries read as hundreds
    ("nineteen hundred"), and a second pair below ten gets an "oh" ("nineteen oh five").
    """
    century, rest = divmod(value, 100)
    if century % 10 == 0 and rest < 10:
        return cardinal(value)
    if rest == 0:
        return f"{cardinal(century)} hundred"
    if rest < 10:
        return f"{cardinal(century)} oh {cardinal(rest)}"
    return f"{cardinal(century)} {cardinal(rest)}"


def integer(digits: str) -> str:
    """Read an integer: as a year strictly between 1000 and 3000 (NVIDIA's convention), else a cardinal."""
    value = int(digits)
    if 1000 < value < 3000 and not digits.startswith("0"):
        return year(value)
    return cardinal(digits)


def _plural_of_number(digits: str) -> str:
    """Read "1990s" as "nineteen nineties": pluralise the last word of the number."""
    words = integer(digits)
    head, _, last = words.rpartition(" ")
    plural = _engine().plural(last)
    return f"{head} {plural}" if head else plural


def _detached(match: re.Match[str], words: str) -> str:
    """Words replacing a match, with a space in front if the match was glued to a word ("US$3")."""
    start = match.start()
    glued = start > 0 and match.string[start - 1].isalnum()
    return f" {words}" if glued else words


def _money_words(amount: str, symbol: str, scale: str | None) -> str:
    """Read an amount of money: ("3.50", "$", None) -> "three dollars, fifty cents"."""
    unit, units, sub, subs = _CURRENCIES[symbol]
    amount = amount.replace(",", "")
    whole, _, fraction = amount.partition(".")
    if scale:  # "$2.5 million" -> "two point five million dollars"
        number = decimal(whole, fraction) if fraction else cardinal(whole)
        return f"{number} {scale.lower()} {units}"
    if len(fraction) > 2:  # not a price in cents; read the number as it is written
        return f"{decimal(whole, fraction)} {units}"
    main = int(whole or "0")
    cents = int(fraction.ljust(2, "0")) if fraction else 0
    parts = []
    if main or not cents:
        parts.append(f"{cardinal(main)} {unit if main == 1 else units}")
    if cents:
        parts.append(f"{cardinal(cents)} {sub if cents == 1 else subs}")
    return ", ".join(parts)


def expand_currency(text: str) -> str:
    """Spell out amounts of $, £ and € (symbol before or after the amount), then any stray symbol."""
    text = _MONEY_BEFORE.sub(lambda m: _detached(m, _money_words(m[2], m[1], m[3])), text)
    text = _MONEY_AFTER.sub(lambda m: _detached(m, _money_words(m[1], m[2], None)), text)
    for symbol, (_, units, _, _) in _CURRENCIES.items():
        text = text.replace(symbol, f" {units} ")
    return text


def period_ends_sentence(match: re.Match[str]) -> bool:
    """True when a matched abbreviation's final period also closes the sentence.

    That is: the text ends there, or the next word starts with a capital letter.
    """
    rest = match.string[match.end():]
    return rest.strip() == "" or re.match(r"\s+[A-Z]", rest) is not None


def _clock_words(match: re.Match[str]) -> str:
    """Read "3:30 pm" as "three thirty p m", "3:00" as "three o'clock", "3:05" as "three oh five"."""
    hour, minutes, ampm, period = match[1], int(match[2]), match[3], match[4]
    words = cardinal(hour)
    if minutes == 0 and not ampm:
        words += " o'clock"
    elif 0 < minutes < 10:
        words += f" oh {cardinal(minutes)}"
    elif minutes:
        words += f" {cardinal(minutes)}"
    if ampm:
        words += f" {ampm.lower()} m"
        if period and period_ends_sentence(match):
            words += "."
    return words


def _hour_words(match: re.Match[str]) -> str:
    """Read "5pm" / "5 p.m." as "five p m"."""
    words = f"{cardinal(match[1])} {match[2].lower()} m"
    return words + "." if match[3] and period_ends_sentence(match) else words


def expand_times(text: str) -> str:
    """Spell out clock times: "3:30 pm" -> "three thirty p m", "11am" -> "eleven a m"."""
    text = _CLOCK.sub(_clock_words, text)
    return _HOUR_AMPM.sub(_hour_words, text)


def expand_numbers(text: str) -> str:
    """Replace every remaining numeral with words; the result holds no ASCII digit.

    Order matters: thousands separators go first so "1,000,000" is one number, and ordinals,
    plurals and decimals are read before the bare integers they contain.
    """
    text = _GROUPED.sub(lambda m: m[0].replace(",", ""), text)
    text = _PERCENT.sub(" percent", text)
    text = _NUMBER_SIGN.sub("number ", text)
    text = _NEGATIVE.sub("minus ", text)
    text = _ORDINAL.sub(lambda m: ordinal(m[1]), text)
    text = _PLURAL.sub(lambda m: _plural_of_number(m[1]), text)
    text = _DECIMAL.sub(lambda m: _detached(m, decimal(m[1], m[2])), text)
    return _INTEGER.sub(lambda m: integer(m[0]), text)
