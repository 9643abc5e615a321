"""The figures an export is judged by, per input, and the verdict.

- The acoustic model's mel: the largest absolute difference from the eager model, over every frame of
  every item (a float32 export differs by rounding only: about 1e-6). Its durations must be the same
  integers; when they are not, the mels have other lengths and the check fails on that.
- The vocoder's audio: the signal-to-noise ratio of the exported audio against the eager audio,
  ``10 log10(sum(eager^2) / sum((exported - eager)^2))`` in dB, over the whole batch
  (:func:`tts_pipeline.snr.snr_db`).

numpy only: a server can check its own runtime with it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from tts_pipeline.errors import UserError

MEL_FIGURE = "mel_max_abs_diff"
AUDIO_FIGURE = "snr_db"


def max_abs_diff(expected: np.ndarray, actual: np.ndarray) -> float:
    """The largest ``|actual - expected|``; ``inf`` when the shapes differ (nothing to compare)."""
    if expected.shape != actual.shape:
        return math.inf
    if expected.size == 0:
        return 0.0
    return float(np.max(np.abs(actual.astype(np.float64) - expected.astype(np.float64))))


@dataclass(frozen=True)
class Limits:
    """What an export must meet.

    Attributes:
        mel_max_abs_diff: The most the acoustic model's mel may differ from the eager one (float32: 1e-4).
        min_snr_db: The least SNR of the vocoder's audio against the eager audio (60 dB).
    """

    mel_max_abs_diff: float = 1e-4
    min_snr_db: float = 60.0


@dataclass(frozen=True)
class Check:
    """One figure of one exported file on one input.

    Attributes:
        model: The kind (``fastpitch``, ``hifigan``).
        format: ``onnx`` or ``torchscript``.
        input: The input's name (:attr:`tts_pipeline.export.cases.Case.name`).
        batch: Items in the input.
        figure: :data:`MEL_FIGURE` or :data:`AUDIO_FIGURE`.
        value: The figure.
        limit: Its limit: a maximum for the mel, a minimum for the SNR.
        detail: What else went wrong (durations or shapes that differ), or "".
    """

    model: str
    format: str
    input: str
    batch: int
    figure: str
    value: float
    limit: float
    detail: str = ""

    @property
    def passed(self) -> bool:
        if self.detail:
            return False
        return self.value <= self.limit if self.figure == MEL_FIGURE else self.value >= self.limit

    def describe(self) -> str:
        """One line: model, format, input, figure against its limit, and the detail."""
        relation = "<=" if self.figure == MEL_FIGURE else ">="
        line = f"{self.model} {self.format}, input {self.input!r}: {self.figure} {self.value:.3g}"
        line += f" (limit {relation} {self.limit:g})"
        return f"{line}; {self.detail}" if self.detail else line

    def record(self) -> dict[str, Any]:
        """For ``verification.json`` (infinite figures as strings: JSON has no infinity)."""
        record = {**asdict(self), "passed": self.passed}
        if not math.isfinite(self.value):
            record["value"] = str(self.value)
        return record


class ExportMismatch(UserError):
    """An exported file does not compute what its eager model does; the message names the model, the
    format and every input that failed."""


def require_passed(checks: Sequence[Check]) -> None:
    """Raise :class:`ExportMismatch` listing every failed check (at most 10 lines of them)."""
    failed = [check for check in checks if not check.passed]
    if not failed:
        return
    lines = [check.describe() for check in failed[:10]]
    if len(failed) > 10:
        lines.append(f"... and {len(failed) - 10} more")
    raise ExportMismatch("the exports differ from the eager models:\n  " + "\n  ".join(lines))


def summary(checks: Sequence[Check]) -> dict[str, float]:
    """Per model and format the worst figure over its inputs, as metric names:
    ``<model>_<format>_mel_max_abs_diff`` (the largest) or ``<model>_<format>_snr_db_min`` (the least)."""
    worst: dict[str, float] = {}
    for check in checks:
        if check.figure == MEL_FIGURE:
            key = f"{check.model}_{check.format}_{MEL_FIGURE}"
            worst[key] = max(worst.get(key, -math.inf), check.value)
        else:
            key = f"{check.model}_{check.format}_{AUDIO_FIGURE}_min"
            worst[key] = min(worst.get(key, math.inf), check.value)
    return worst
