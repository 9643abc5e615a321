"""The exported voice as an MLflow model (``python_function`` flavour): a table of texts in, WAVs out.

Its one artifact, ``voice``, is the ONNX voice of an export folder (``voice.json``, the ONNX files,
``verification.json``); :meth:`VoiceModel.load_context` opens it with
:class:`tts_pipeline.serving.speaker.Speaker` (ONNX Runtime), so that ``mlflow models serve`` speaks
exactly as ``tts-pipeline serve`` does.

Input, one row per text::

    text   string, required: the text to speak
    speed  double, optional: 0.25 .. 4.0 (default 1.0; 2 = twice as fast), times the voice's pace

Output, one row per input row::

    audio_wav_base64  string: a mono 16-bit PCM WAV at the voice's rate, base64
    sampling_rate     long:   Hz
    duration_s        double: seconds of audio

Bad input raises ``MlflowException`` with ``INVALID_PARAMETER_VALUE`` naming the row and the field,
which MLflow's scoring server answers with HTTP 400 (any other exception is a 500).
"""

from __future__ import annotations

import base64
import math
from collections.abc import Mapping
from typing import Any

import mlflow.pyfunc
import pandas as pd
from mlflow.exceptions import MlflowException
from mlflow.models import ModelSignature
from mlflow.protos.databricks_pb2 import INVALID_PARAMETER_VALUE
from mlflow.types import ColSpec, Schema

VOICE_ARTIFACT = "voice"
"""The model's artifact key: the folder of the ONNX voice."""
TEXT = "text"
SPEED = "speed"
SPEED_RANGE = (0.25, 4.0)
DEFAULT_SPEED = 1.0
AUDIO, RATE, DURATION = "audio_wav_base64", "sampling_rate", "duration_s"
ENGINE = "onnx"
EXAMPLE_TEXT = "Hello there."


def signature() -> ModelSignature:
    """The model's signature: ``text`` (required) and ``speed`` (optional) in, WAV, rate, duration out."""
    inputs = Schema([ColSpec("string", TEXT), ColSpec("double", SPEED, required=False)])
    outputs = Schema([ColSpec("string", AUDIO), ColSpec("long", RATE), ColSpec("double", DURATION)])
    return ModelSignature(inputs=inputs, outputs=outputs)


def input_example() -> pd.DataFrame:
    """One short text at the default speed (MLflow checks that the logged model answers it)."""
    return pd.DataFrame({TEXT: [EXAMPLE_TEXT], SPEED: [DEFAULT_SPEED]})


class VoiceModel(mlflow.pyfunc.PythonModel):
    """An exported voice behind MLflow's pyfunc interface (see the module's docstring)."""

    def load_context(self, context: Any) -> None:
        """Open the voice folder of the ``voice`` artifact with the ONNX engine."""
        from tts_pipeline.serving.speaker import Speaker

        self.speaker = Speaker.load(context.artifacts[VOICE_ARTIFACT], engine=ENGINE)

    # a DataFrame hint: MLflow infers no second schema from it (the signature's holds) and warns of none
    def predict(self, context: Any, model_input: pd.DataFrame, params: dict[str, Any] | None = None) -> pd.DataFrame:
        """``model_input`` (a DataFrame of ``text`` and optional ``speed``) -> a DataFrame of WAVs, one row
        per input row. Every row is checked before any is spoken."""
        from tts_pipeline.errors import UserError
        from tts_pipeline.serving.audio_formats import encode

        items = read_requests(model_input)
        for index, (text, _) in enumerate(items):
            try:
                self.speaker.pieces(text)  # the text front end alone: no model runs for a batch with a bad row
            except UserError as error:  # text the voice cannot say (no symbol for a character, too long)
                raise invalid(f"row {index}: {TEXT}: {error}") from None
        rate = int(self.speaker.sampling_rate)
        rows = []
        for text, speed in items:
            audio = self.speaker.speak(text, speed)
            wav = encode(audio, rate, "wav")
            rows.append({AUDIO: base64.b64encode(wav).decode("ascii"), RATE: rate, DURATION: len(audio) / rate})
        frame = pd.DataFrame(rows, columns=[AUDIO, RATE, DURATION])
        return frame.astype({AUDIO: "object", RATE: "int64", DURATION: "float64"})


def read_requests(model_input: Any) -> list[tuple[str, float]]:
    """``(text, speed)`` per row of ``model_input``; an error naming the row and field otherwise.

    A DataFrame is what the scoring server passes; a list of records or a dict of columns (a direct
    call) is read as one."""
    frame = model_input if isinstance(model_input, pd.DataFrame) else _as_frame(model_input)
    if TEXT not in frame.columns:
        raise invalid(f"input: no column {TEXT!r} (expected {TEXT!r}, a string, and optionally {SPEED!r}, a number)")
    items = [
        (_text(index, record.get(TEXT)), _speed(index, record.get(SPEED)))
        for index, record in enumerate(frame.to_dict("records"))
    ]
    if not items:
        raise invalid(f"input: no rows (expected at least one {TEXT!r})")
    return items


def invalid(message: str) -> MlflowException:
    """An error the scoring server answers with HTTP 400, not 500."""
    return MlflowException(message, error_code=INVALID_PARAMETER_VALUE)


def _as_frame(model_input: Any) -> pd.DataFrame:
    if isinstance(model_input, Mapping) and not any(isinstance(value, list) for value in model_input.values()):
        model_input = [model_input]  # one record
    try:
        return pd.DataFrame(model_input)
    except (TypeError, ValueError) as error:
        raise invalid(
            f"input: expected a table with a {TEXT!r} column, got {type(model_input).__name__} ({error})"
        ) from None


def _text(index: int, value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):  # a record without it
        raise invalid(f"row {index}: {TEXT}: missing (expected a non-empty string)")
    if not isinstance(value, str) or not value.strip():
        raise invalid(f"row {index}: {TEXT}: expected a non-empty string, got {value!r}")
    return value


def _speed(index: int, value: Any) -> float:
    # a column that some records leave out reads NaN (or None) in those rows: the default
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return DEFAULT_SPEED
    low, high = SPEED_RANGE
    try:
        speed = float(value)
    except (TypeError, ValueError):
        speed = math.nan
    if isinstance(value, (bool, str)) or not low <= speed <= high:
        raise invalid(f"row {index}: {SPEED}: expected a number from {low} to {high}, got {value!r}")
    return speed
