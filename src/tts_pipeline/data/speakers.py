"""Speakers of a corpus: the optional 4th field of ``metadata.csv``, the manifests' ``speaker``.

A single-speaker corpus (LJSpeech) names no speaker: its lines are ``id|text|normalized text`` and its
manifest records have no ``speaker``. A multi-speaker corpus names the speaker on every line
(``id|text|normalized text|speaker``); in a corpus that names it on some lines only, the lines of the
fewer kind are malformed (:func:`~tts_pipeline.data.metadata.read_metadata`), and manifests whose records
mix the two kinds are refused (:func:`corpus_speakers`). A name is a safe identifier
(:data:`~tts_pipeline.config.data_sections.SPEAKER_NAME_PATTERN`: letters, digits, ``_`` and ``-``),
because it becomes a JSON key, a metric-name suffix and a model file's speaker list.

Speaker ids are the names' sorted order, ``0 .. n - 1`` (:func:`speaker_ids`): the same corpus gives
the same ids whatever the order of its lines.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from tts_pipeline.config.data_sections import SPEAKER_NAME_PATTERN
from tts_pipeline.errors import UserError

_NAME = re.compile(SPEAKER_NAME_PATTERN)
MAX_LISTED = 5  # utterances or lines an error lists before "and N more"


def speaker_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a speaker name, or None if it can."""
    if _NAME.fullmatch(name):
        return None
    if not name:
        return "the speaker name is empty"
    return f"the speaker name {name!r} is not a safe identifier (1 to 64 letters, digits, '_' or '-')"


def speaker_ids(names: Iterable[str]) -> dict[str, int]:
    """``{name: id}``: the distinct names sorted, numbered from 0."""
    return {name: index for index, name in enumerate(sorted(set(names)))}


def listed(items: Sequence[str], limit: int = MAX_LISTED) -> str:
    """``a, b, c`` or ``a, b, c, ... (N more)``: a list an error message shows."""
    shown = ", ".join(items[:limit])
    return shown if len(items) <= limit else f"{shown}, ... ({len(items) - limit} more)"


def corpus_speakers(speakers_by_id: dict[str, str | None], where: str) -> list[str]:
    """The sorted speaker names of utterances ``{id: speaker or None}``; ``[]`` when none names one.

    UserError naming ``where`` (a manifest folder, a metadata file) and the utterances without a speaker
    when some utterances name one and others do not.
    """
    named = sorted({speaker for speaker in speakers_by_id.values() if speaker is not None})
    if not named:
        return []
    unnamed = sorted(utterance_id for utterance_id, speaker in speakers_by_id.items() if speaker is None)
    if unnamed:
        raise UserError(
            f"{where}: {len(unnamed)} utterance(s) name no speaker ({listed(unnamed)}) although the others "
            f"name {len(named)} ({listed(named)}); a corpus names the speaker of every utterance or of none"
        )
    return named
