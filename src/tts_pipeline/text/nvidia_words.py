"""The non-numeric steps of NVIDIA's ``english_cleaners_v2``, reproduced rule for rule.

Each function takes one whitespace-free token (NVIDIA cleans a sentence token by token, see
:mod:`tts_pipeline.text.nvidia_cleaners`), so "5 pm" is two tokens and is not read as a time while
"5pm" is. Known quirks kept on purpose because a published checkpoint was trained on them:
"No. 5" stays "no. five" (numbers are read before the "No." rule could see a digit), "e-mail"
keeps its hyphen, ``221B`` reads "two twenty one b", acronyms are spelled with dots ("f.b.i.").
"""

from __future__ import annotations

import re

from unidecode import unidecode

from tts_pipeline.text.nvidia_ascii import DROPPED, REPLACED

_AMPM = re.compile(r"([0-9]|0[0-9]|1[0-9]|2[0-3]):?([0-5][0-9])?\s*([AaPp][Mm]\b)")

_HARDWARE_NAMES = {
    "tb": "terabyte", "gb": "gigabyte", "mb": "megabyte", "kb": "kilobyte",
    "ghz": "gigahertz", "mhz": "megahertz", "khz": "kilohertz", "hz": "hertz", "mm": "millimeter",
}
# No word boundary: "5mbps" -> "5 megabytesps", as NVIDIA reads it.
_HARDWARE = re.compile(r"([0-9]+(?:[.,][0-9]+)?)\s?(tb|gb|mb|kb|ghz|mhz|khz|hz|mm)", re.IGNORECASE)
_SIDE = r"[0-9]+(?:[,.][0-9]+)?"
_DIMENSION = re.compile(
    rf"\b({_SIDE}\s*[xX]\s*{_SIDE}\s*[xX]\s*{_SIDE}(?:in|inch|m)?)\b|\b({_SIDE}\s*[xX]\s*{_SIDE}(?:in|inch|m)?)\b"
)
_DIMENSION_UNITS = {"m": "meter", "in": "inch"}
_LETTERS_AND_DIGITS = re.compile(r"((?:[a-zA-Z]+[0-9]|[0-9]+[a-zA-Z])[a-zA-Z0-9']*)")
_NUMBER_SUFFIXES = ("'s", "s", "th", "nd", "st", "rd")

_NO_PERIOD = re.compile(r"No\.(?= ?[0-9])")
_PERCENT = re.compile(r" ?%")
_HALF = re.compile(r"([0-9])½|½")
_URL = re.compile(r"([a-zA-Z])\.(com|gov|org)")
# In NVIDIA's order: "mrs" before "ms" before "mr".
_ABBREVIATIONS = [
    (re.compile(rf"\b{short}\.", re.IGNORECASE), long)
    for short, long in [
        ("mrs", "misess"), ("ms", "miss"), ("mr", "mister"), ("dr", "doctor"), ("st", "saint"),
        ("co", "company"), ("jr", "junior"), ("maj", "major"), ("gen", "general"), ("drs", "doctors"),
        ("rev", "reverend"), ("lt", "lieutenant"), ("hon", "honorable"), ("sgt", "sergeant"),
        ("capt", "captain"), ("esq", "esquire"), ("ltd", "limited"), ("col", "colonel"),
        ("ft", "fort"), ("sen", "senator"), ("etc", "et cetera"),
    ]
]

_EMAIL = re.compile(r"\bemail\b", re.IGNORECASE)
# Any run of two or more capitals, with lower-case letters allowed in front ("McDONALD" spells
# "c.D.O.N.A.L.D."), an optional plural s and a period.
_ACRONYM = re.compile(r"([a-z]*[A-Z][A-Z]+)s?\.?")
_ACRONYM_EXCEPTIONS = {"NVIDIA": "N.VIDIA"}


def to_ascii(text: str) -> str:
    """Transliterate to ASCII as NVIDIA's table does for Latin text and punctuation."""
    kept = "".join(REPLACED.get(char, char) for char in text if char not in DROPPED)
    return unidecode(kept)


def _time(match: re.Match[str]) -> str:
    hour, minutes, ampm = match[1], match[2], match[3]
    words = hour if minutes is None or int(minutes) == 0 else f"{hour} {minutes}"
    return words + (" a.m." if ampm[0] in "Aa" else " p.m.")


def expand_times(token: str) -> str:
    """``7:30pm`` -> ``7 30 p.m.``, ``5am`` -> ``5 a.m.`` (digits are read later)."""
    return _AMPM.sub(_time, token)


def _hardware(match: re.Match[str]) -> str:
    quantity, unit = match[1], _HARDWARE_NAMES[match[2].lower()]
    plural = not unit.endswith("z") and float(quantity.replace(",", "")) > 1
    return f"{quantity} {unit}{'s' if plural else ''}"


def _dimension(match: re.Match[str]) -> str:
    # Only a lower-case "x" between digits becomes "by" when it is not surrounded by spaces.
    text = (match[1] or match[2]).replace(" x ", " by ").replace("x", " by ")
    if text.endswith(("m", "in", "inch")):
        if text[-2].isdigit():
            text = f"{text[:-1]} {_DIMENSION_UNITS[text[-1:]]}"
        elif text[-3].isdigit():
            text = f"{text[:-2]} {_DIMENSION_UNITS[text[-2:]]}"
    return text


def _digit_groups(digits: str) -> list[str]:
    """Split a short digit run inside a word the way it is read: "221" -> ["2", "21"], "1905" -> ["19", "05"]."""
    if len(digits) > 2 and digits[-2] == "0":
        return [digits] if digits[-1] == "0" else [digits[:-2], digits[-2], digits[-1]]
    if len(digits) % 2 == 0:
        return [digits[i:i + 2] for i in range(0, len(digits), 2)]
    if len(digits) > 2:
        return [digits[0]] + [digits[i:i + 2] for i in range(1, len(digits), 2)]
    return [digits]


def _letters_and_digits(match: re.Match[str]) -> str:
    parts = re.split(r"([0-9]+)", match[0])
    # Only one empty end is dropped: "1a1" keeps a leading empty part (and so a leading space).
    if parts[-1] == "":
        parts = parts[:-1]
    elif parts[0] == "":
        parts = parts[1:]
    if parts[-1] in _NUMBER_SUFFIXES and parts[-2].isdigit():  # "1920s", "AK47's", "20th" stay whole
        parts = [*parts[:-2], parts[-2] + parts[-1]]
    pieces: list[str] = []
    for part in parts:
        pieces.extend(_digit_groups(part) if part.isdigit() and len(part) < 5 else [part])
    return " ".join(pieces)


def split_letters_and_numbers(token: str) -> str:
    """Units after numbers, dimensions ("4x4" -> "4 by 4"), then letters apart from digits."""
    token = _HARDWARE.sub(_hardware, token)
    token = _DIMENSION.sub(_dimension, token)
    return _LETTERS_AND_DIGITS.sub(_letters_and_digits, token)


def expand_abbreviations(token: str) -> str:
    """"No." before a digit, "%", "½", "&", "@", web addresses, then titles and suffixes."""
    token = _NO_PERIOD.sub("Number", token)
    token = _PERCENT.sub(" percent", token)
    token = _HALF.sub(lambda m: "half" if m[1] is None else m[1] + " and a half", token)
    token = token.replace("&", " and ").replace("@", " at ")
    token = _URL.sub(r"\1 dot \2", token)
    for pattern, words in _ABBREVIATIONS:
        token = pattern.sub(words, token)
    return token


def _spell(match: re.Match[str]) -> str:
    letters = match[1]
    text = _ACRONYM_EXCEPTIONS.get(letters) or ".".join(letters) + "."
    if "s" in match[0]:  # NVIDIA tests the whole match, so a lower-case prefix with an "s" counts
        text += "'s"
    return text + "." if not text.endswith(".") and match[0].endswith(".") else text


def spell_acronyms(token: str) -> str:
    """"email" -> "e-mail"; "FBI" -> "F.B.I.", "CDs" -> "C.D.'s"."""
    token = _EMAIL.sub("e-mail", token)
    return _ACRONYM.sub(_spell, token)
