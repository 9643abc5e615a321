"""Where ``inference.amp: auto`` remembers what it measured, so that a CPU times its paths once.

One JSON file per user: ``$XDG_CACHE_HOME/tts-pipeline/cpu_paths.json`` (``~/.cache/...`` when the
variable is unset), holding ``{"version": VERSION, "choices": {key: record}}``, a record being a
:meth:`tts_pipeline.inference.precision_choice.PathChoice.as_dict`. A key names what the choice depends on:

- the CPU model and the torch version (the kernels that run), and torch's thread count;
- the model's kind and its parameter count (a demo-sized generator and HiFi-GAN v1 may choose differently);
- the candidate paths' names (a new path in a later version measures afresh).

A change to how a path computes that moves its speed bumps ``VERSION``, so every CPU measures afresh.

Choices are also kept in memory for the process, so that an unwritable cache costs one measurement per
process, not one per synthesizer; so is a disturbed measurement (rounds far apart: another job on the
cores), which is not written, so that the next process measures again. A file that cannot be read or
parsed counts as empty and a write that fails only warns: the cache saves time, it never stops synthesis.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from torch import nn

from tts_pipeline.cpu import cpu_model_name
from tts_pipeline.files import user_cache_dir, write_json
from tts_pipeline.inference.precision_choice import PathChoice

log = logging.getLogger(__name__)

VERSION = 2
"""2: the plain generator runs its residual blocks on channels-last rows on a CPU (``models/conv_rows.py``),
so version 1's timings of plain fp32 no longer hold."""
FILE_NAME = "cpu_paths.json"

# (cache file, key) -> record, for this process.
_remembered: dict[tuple[str, str], dict[str, Any]] = {}


def cache_file() -> Path:
    """The cache file of this user (module docstring); it need not exist."""
    return user_cache_dir() / FILE_NAME


def choice_key(kind: str, model: nn.Module, path_names: Sequence[str]) -> str:
    """The key of ``model``'s choice on this CPU, with this torch and thread count (module docstring)."""
    parameters = sum(parameter.numel() for parameter in model.parameters())
    return (
        f"{cpu_model_name()} | torch {torch.__version__} | {torch.get_num_threads()} threads | "
        f"{kind}, {parameters} parameters | {', '.join(path_names)}"
    )


def _read(path: Path) -> dict[str, Any]:
    """The file's choices by key; empty when it is missing, unreadable or not this version's."""
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as error:
        log.warning("inference.amp auto: ignoring the unreadable cache %s (%s); measuring afresh", path, error)
        return {}
    choices = payload.get("choices") if isinstance(payload, dict) and payload.get("version") == VERSION else None
    return choices if isinstance(choices, dict) else {}


def recall(key: str, path_names: Sequence[str]) -> PathChoice | None:
    """The remembered choice under ``key`` (figures of exactly ``path_names``), else None."""
    path = cache_file()
    record = _remembered.get((str(path), key)) or _read(path).get(key)
    try:
        choice = PathChoice.from_dict(record, cached=True)  # type: ignore[arg-type]
    except (TypeError, KeyError, ValueError):
        return None  # missing, or a record of another shape
    if [row.name for row in choice.figures] != list(path_names) or choice.chosen not in path_names:
        return None
    _remembered[(str(path), key)] = record  # type: ignore[assignment]
    return choice


def remember(key: str, choice: PathChoice) -> None:
    """Keep ``choice`` under ``key``, in memory and, when its measurement was steady, in the cache file
    (a failed write warns)."""
    path = cache_file()
    record = choice.as_dict()
    _remembered[(str(path), key)] = record
    if not choice.steady:
        return  # a disturbed measurement decides for this process only: the next one measures again
    try:
        choices = _read(path)
        choices[key] = record
        write_json(path, {"version": VERSION, "choices": choices})
    except OSError as error:
        log.warning(
            "inference.amp auto: could not write the cache %s (%s); the choice holds for this process only",
            path,
            error,
        )
