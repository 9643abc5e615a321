"""What a run is tagged and parameterised with: the git commit, flattened params, MLflow-safe values."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


def git_commit(directory: str | Path | None = None) -> str:
    """The commit checked out where the code runs from, or "unknown" outside a git checkout."""
    directory = Path(directory) if directory is not None else Path(__file__).resolve().parent
    try:
        result = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=directory, capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    commit = result.stdout.strip()
    return commit if result.returncode == 0 and commit else "unknown"


def flatten_params(section: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    """Nested mapping -> ``{"a.b.c": "value"}`` with MLflow-safe string values.

    Strings are kept as they are; other values are written as JSON (``true``, ``null``, ``[1, 2]``),
    the way they read in the YAML config. Values longer than MLflow's limit are truncated.
    """
    from mlflow.utils.validation import MAX_PARAM_VAL_LENGTH

    flat: dict[str, str] = {}
    for key, value in section.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            flat.update(flatten_params(value, prefix=f"{name}."))
            continue
        text = value if isinstance(value, str) else json.dumps(value, default=str)
        flat[name] = _truncate(text, MAX_PARAM_VAL_LENGTH)
    return flat


def _truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def clean_tags(tags: Mapping[str, Any]) -> dict[str, str]:
    from mlflow.utils.validation import MAX_TAG_VAL_LENGTH

    return {key: _truncate(str(value), MAX_TAG_VAL_LENGTH) for key, value in tags.items() if value is not None}


def chunks(items: list[T], size: int) -> Iterator[list[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def standard_tags(source_name: str, commit: str) -> dict[str, str]:
    """MLflow's own tags, which fill the runs table's User, Source and Version columns."""
    from tts_pipeline.tracking.process import user_name

    tags = {"mlflow.user": user_name(), "mlflow.source.name": source_name, "mlflow.source.type": "JOB"}
    if commit != "unknown":
        tags["mlflow.source.git.commit"] = commit
    return tags
