"""One line of ``manifest.{train,val,test}.jsonl``, typed: what every reader of a manifest gets.

The manifest stage writes every field (:func:`tts_pipeline.data.manifest.build_manifest`). Four are
required because the pipeline cannot run without them: ``id`` names the utterance and its feature
files; ``wav`` and ``n_samples`` are the clip the features stage reads (and checks the length of) and
HiFi-GAN crops; ``text`` is what the aligner and the acoustic models train on. The other four describe
the clip and where it came from; no reader needs them, so a manifest written by hand (a test's, or a
corpus prepared elsewhere) may leave them out and they read as None. The last, ``speaker``, is written
only for a multi-speaker corpus (the 4th field of ``metadata.csv``): its absence means one speaker.

Typical use::

    record = ManifestRecord.from_json(json.loads(line), f"{path}:{number}")
    line = json.dumps(record.to_json(), ensure_ascii=False)  # the line the manifest stage writes
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from tts_pipeline.data.speakers import speaker_name_problem
from tts_pipeline.errors import UserError

# Every field in the order the manifest stage writes them (the order of to_json), with the JSON types
# it accepts and the words an error uses for them. bool is refused wherever int is accepted: JSON's
# true is no sample count.
_SCHEMA: dict[str, tuple[tuple[type, ...], str]] = {
    "id": ((str,), "a string (the utterance id)"),
    "wav": ((str,), "a string (the path of the clip)"),
    "text": ((str,), "a string (the cleaned transcript)"),
    "raw_text": ((str,), "a string (the transcript as written)"),
    "n_samples": ((int,), "an integer (the clip's length in samples)"),
    "sample_rate": ((int,), "an integer (Hz)"),
    "duration_s": ((int, float), "a number (seconds)"),
    "source_wav": ((str,), "a string (the path of the corpus's own clip)"),
    "speaker": ((str,), "a string (the speaker's name: letters, digits, '_' or '-')"),
}
REQUIRED_FIELDS = ("id", "wav", "text", "n_samples")


@dataclass(frozen=True, kw_only=True)
class ManifestRecord:
    """One utterance of a manifest (module docstring: which fields are required and why).

    Attributes:
        id: Utterance id; names the feature files (``mels/<id>.npy``, ...).
        wav: Path of the 16-bit clip at ``audio.sampling_rate`` that the models read (a resampled copy
            when the corpus's clip was at another rate and ``data.resample`` allowed it).
        text: The cleaned transcript: what the models train on.
        raw_text: The transcript before cleaning (after the LJSpeech fixes); None if not given.
        n_samples: Samples in ``wav``.
        sample_rate: Rate of ``wav`` in Hz; None if not given (then taken as ``audio.sampling_rate``).
        duration_s: ``n_samples / sample_rate`` rounded to 6 decimals; None if not given.
        source_wav: Path of the corpus's own clip (``wav`` unless resampled); None if not given.
        speaker: The speaker's name in a multi-speaker corpus; None for a single-speaker one.
    """

    id: str
    wav: str
    text: str
    raw_text: str | None = None
    n_samples: int
    sample_rate: int | None = None
    duration_s: float | None = None
    source_wav: str | None = None
    speaker: str | None = None

    @classmethod
    def from_json(cls, obj: Any, where: str) -> ManifestRecord:
        """The record of one parsed manifest line; keys it does not know are ignored.

        ``where`` names the line in errors (``<dir>/manifest.val.jsonl:12``). UserError when ``obj``
        is not an object, a required field is missing, a field has the wrong type, or ``speaker`` is
        not a safe name.
        """
        if not isinstance(obj, dict):
            raise UserError(f"{where}: expected a JSON object (a manifest record), got {_as_json(obj)}")
        missing = [name for name in REQUIRED_FIELDS if name not in obj]
        if missing:
            expected = "; ".join(f"'{name}': {_SCHEMA[name][1]}" for name in missing)
            raise UserError(f"{where}: the manifest record lacks {', '.join(map(repr, missing))} (expected {expected})")
        values: dict[str, Any] = {}
        for name, (types, expected) in _SCHEMA.items():
            value = obj.get(name)
            if value is None and name not in REQUIRED_FIELDS:
                continue
            if not isinstance(value, types) or isinstance(value, bool):
                raise UserError(f"{where}: manifest field '{name}' is {_as_json(value)}, expected {expected}")
            values[name] = value
        speaker = values.get("speaker")
        if speaker is not None and (problem := speaker_name_problem(speaker)) is not None:
            raise UserError(f"{where}: manifest field 'speaker': {problem}")
        return cls(**values)

    def to_json(self) -> dict[str, Any]:
        """The line's object: the keys in the order the manifest stage writes them; an optional field
        that is None is left out, so a record read from a shorter line writes that line again."""
        return {name: value for name in _SCHEMA if (value := getattr(self, name)) is not None}


def _as_json(value: Any) -> str:
    """A parsed value as the file spells it, shortened, with its JSON type (``"82297" (string)``): the
    person reading the error edits JSON, not Python."""
    if value is None:
        return "null"
    shown = json.dumps(value, ensure_ascii=False)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    names = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array", dict: "object"}
    return f"{shown} ({names.get(type(value), type(value).__name__)})"
