"""The body of ``POST /v1/audio/speech`` (OpenAI's shape) and the error bodies the server answers with.

A request is ``{"input": "...", "model"?, "voice"?, "response_format"?, "speed"?}``. Types are strict
(``"input": 5`` and ``"speed": "fast"`` are refused, not coerced), and every message names the field
and what was expected. Errors have OpenAI's shape, so OpenAI clients show the message::

    {"error": {"message": "speed: expected a number from 0.25 to 4.0, got 9", "type": "invalid_request_error"}}

What depends on the voice or the server's limits (the voice's name, ``--max-chars``) is checked by
the app, which knows them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictStr, field_validator

from tts_pipeline.serving.audio_formats import FORMATS

MIN_SPEED, MAX_SPEED = 0.25, 4.0
# what OpenAI's endpoint also offers; named in the refusal so a client knows it is not a typo
OTHER_FORMATS = ("mp3", "opus", "aac")
# the voice name every server answers to, whatever its voice is called (OpenAI clients always send one)
DEFAULT_VOICE = "default"

INVALID_REQUEST = "invalid_request_error"


class SpeechRequest(BaseModel):
    """One speech request. Unknown fields (``instructions``, ``stream_format``) are ignored, as
    OpenAI's clients send them."""

    model_config = ConfigDict(extra="ignore")

    input: StrictStr = Field(description="the text to speak")
    model: StrictStr | None = Field(None, description="ignored: the server speaks with its one voice")
    voice: StrictStr | None = Field(None, description=f"the voice's name, or {DEFAULT_VOICE!r}")
    response_format: StrictStr = Field("wav", description=f"one of {', '.join(FORMATS)}")
    # strict: a number (an int is one), never a string such as "1.5"
    speed: float = Field(1.0, strict=True, description=f"{MIN_SPEED} to {MAX_SPEED}; 2 is twice as fast")

    @field_validator("input")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("expected text to speak, got an empty or whitespace-only string")
        return value

    @field_validator("response_format")
    @classmethod
    def _known_format(cls, value: str) -> str:
        if value not in FORMATS:
            other = " (not offered by this server)" if value in OTHER_FORMATS else ""
            raise ValueError(f"expected one of {', '.join(FORMATS)}, got {value!r}{other}")
        return value

    @field_validator("speed")
    @classmethod
    def _speed_in_range(cls, value: float) -> float:
        if not MIN_SPEED <= value <= MAX_SPEED:
            raise ValueError(f"expected a number from {MIN_SPEED} to {MAX_SPEED}, got {value}")
        return float(value)


def error_body(message: str, kind: str = INVALID_REQUEST, param: str | None = None) -> dict[str, Any]:
    """OpenAI's error object: ``{"error": {"message", "type", "param"}}``."""
    return {"error": {"message": message, "type": kind, "param": param}}


def validation_message(errors: Iterable[Mapping[str, Any]]) -> tuple[str, str | None]:
    """Pydantic's (or FastAPI's) error list as one readable line, and the first field it names.

    ``{"loc": ("body", "speed"), "type": "float_type", ...}`` -> ``"speed: expected a number, got 'fast'"``.
    """
    lines, first_field = [], None
    for error in errors:
        field = _field(error.get("loc", ()))
        first_field = first_field or (field if field != "body" else None)
        lines.append(f"{field}: {_explain(error)}")
    return "; ".join(lines) or "body: invalid request", first_field


def _field(loc: Iterable[Any]) -> str:
    """``("body", "input")`` -> ``"input"``; ``("body", 12)`` (a JSON error's offset) and ``("body",)``
    -> ``"body"``."""
    names = [str(part) for part in loc if part != "body" and not isinstance(part, int)]
    return ".".join(names) or "body"


def _explain(error: Mapping[str, Any]) -> str:
    kind, given = error.get("type", ""), error.get("input")
    if kind == "json_invalid":
        detail = (error.get("ctx") or {}).get("error", "")
        return f"not valid JSON ({detail} at character {_offset(error)})"
    if kind == "missing":
        if _field(error.get("loc", ())) == "body":
            return "expected a JSON object with at least 'input'"
        return "required"
    if kind in ("model_attributes_type", "dict_type"):
        return f"expected a JSON object (Content-Type: application/json), got {_shown(given)}"
    if kind == "string_type":
        return f"expected a string, got {_shown(given)}"
    if kind == "float_type":
        return f"expected a number, got {_shown(given)}"
    if kind == "value_error":
        return str((error.get("ctx") or {}).get("error", error.get("msg", "")))
    return f"{error.get('msg', 'invalid')} (got {_shown(given)})"


def _offset(error: Mapping[str, Any]) -> int:
    numbers = [part for part in error.get("loc", ()) if isinstance(part, int)]
    return numbers[0] if numbers else 0


def _shown(value: Any) -> str:
    """A short, JSON-like rendering of the value a client sent."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, bytes):
        return "a body that is not JSON"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
