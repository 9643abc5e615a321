"""NVIDIA's ``english_cleaners_v2`` as its FastPitch data loader applies it, for their checkpoints.

The loader (``TextProcessing.encode_text``) first reads amounts of money over the whole sentence,
then cleans each whitespace-separated token on its own (``{...}`` ARPAbet chunks are kept), joins
the tokens with spaces and collapses whitespace. Per token the cleaner runs: transliteration, times,
letters and numbers, numbers, abbreviations, acronyms, lower case, whitespace, slashes to spaces.

The result equals NVIDIA's cleaned text except for characters outside the ``english_basic``
symbol set (quotes, ``"``, ``[``, ``_``...), which NVIDIA keeps in the text and silently skips
when it converts text to ids; here they are removed by the cleaner, so the text converts to the
same ids and passes the manifest's check for unknown characters. (NVIDIA maps ``_`` to the pad id
0; it is removed here instead, so a sentence containing ``_`` gets one id fewer.)

Leading or trailing spaces are kept, as NVIDIA keeps them ("% done" cleans to " percent done").
Transliteration uses unidecode with NVIDIA's Latin-script differences; NVIDIA's own table
differs for some other scripts and drops characters it has no entry for.
"""

from __future__ import annotations

import re

from tts_pipeline.text import nvidia_numbers, nvidia_words

# A token is an ARPAbet chunk or any run of non-space characters.
_TOKEN = re.compile(r"\{[^}]+\}|\S+")
_SPACES = re.compile(r"\s+")
_SLASHES = re.compile(r"/+")
# What english_basic can represent in text (the pad "_" excluded), plus braces for ARPAbet chunks.
_NOT_REPRESENTABLE = re.compile(r"[^A-Za-z!'(),.:;? \-{}]")


def clean_token(token: str) -> str:
    """english_cleaners_v2 applied to one whitespace-free token."""
    token = nvidia_words.to_ascii(token)
    token = nvidia_words.expand_times(token)
    token = nvidia_words.split_letters_and_numbers(token)
    token = nvidia_numbers.normalize_numbers(token)
    token = nvidia_words.expand_abbreviations(token)
    token = nvidia_words.spell_acronyms(token)
    token = _SPACES.sub(" ", token.lower())
    return _SLASHES.sub(" ", token)


def nvidia_cleaned_text(text: str) -> str:
    """The cleaned text NVIDIA's loader produces, characters outside the symbol set included."""
    text = nvidia_numbers.CURRENCY.sub(nvidia_numbers.money_words, text)
    tokens = [token if token.startswith("{") else clean_token(token) for token in _TOKEN.findall(text)]
    return _SPACES.sub(" ", " ".join(tokens))


def _drop_unrepresentable(text: str) -> str:
    """Remove what english_basic cannot hold, outside ``{...}`` chunks (NVIDIA skips it when encoding)."""
    pieces = re.split(r"(\{[^{}]*\})", text)
    return "".join(piece if i % 2 else _NOT_REPRESENTABLE.sub("", piece) for i, piece in enumerate(pieces))


def english_cleaners_v2(text: str) -> str:
    """NVIDIA's english_cleaners_v2 front end; the text encodes to the ids NVIDIA's loader produces."""
    return _drop_unrepresentable(nvidia_cleaned_text(text))
