"""The check's record: one JSON document and its Markdown rendering, rewritten after every step.

Both files are replaced atomically (write, then rename), so a check killed at any moment leaves the
record of every step that finished, and never a half-written file.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .plan import NVIDIA, STEPS, TOTAL_LIMIT_S, Step

Row = dict[str, Any]


@dataclass
class StepRecord:
    """What one step did: status, seconds, table rows and free-text notes."""

    step: Step
    limit_scale: float = 1.0
    status: str = "skipped"
    seconds: float = 0.0
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.step.name,
            "title": self.step.title,
            "status": self.status,
            "seconds": round(self.seconds, 1),
            "limit_s": round(self.step.limit_s * self.limit_scale),
            "rows": self.rows,
            "notes": self.notes,
        }


@dataclass
class Record:
    """The whole check. ``save()`` after each step writes ``gpu-check.json`` and ``gpu-check.md`` in ``out``."""

    out: Path
    mode: str
    command: str
    limit_scale: float = 1.0
    started: float = field(default_factory=time.time)
    commit: str = "unknown"
    device: str = "unknown"
    steps: dict[str, StepRecord] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.steps = {step.name: StepRecord(step, self.limit_scale) for step in STEPS}

    def as_json(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "command": self.command,
            "started": _timestamp(self.started),
            "finished": _timestamp(time.time()),
            "wall_s": round(time.time() - self.started, 1),
            "commit": self.commit,
            "device": self.device,
            "total_limit_s": round(TOTAL_LIMIT_S * self.limit_scale),
            "nvidia": {key: vars(figure) for key, figure in NVIDIA.items()},
            "steps": [entry.as_json() for entry in self.steps.values()],
        }

    def save(self) -> None:
        document = self.as_json()
        self.out.mkdir(parents=True, exist_ok=True)
        _write_atomically(self.out / "gpu-check.json", json.dumps(document, indent=2) + "\n")
        _write_atomically(self.out / "gpu-check.md", render_markdown(document))


def render_markdown(document: dict[str, Any]) -> str:
    """The record as a page: a header, then per step its status line, its table and its notes."""
    lines = [
        f"# GPU check: {document['device']}",
        "",
        f"- mode: {document['mode']}",
        f"- command: `{document['command']}`",
        f"- commit: {document['commit']}",
        f"- started {document['started']}, {document['wall_s']} s in all (limit {document['total_limit_s']} s)",
        "",
    ]
    for step in document["steps"]:
        lines += [f"## {step['title']}", ""]
        limit = f" of {step['limit_s']} s" if step["limit_s"] else ""
        lines += [f"**{step['status']}** in {step['seconds']} s{limit}.", ""]
        if step["rows"]:
            lines += _table(step["rows"]) + [""]
        lines += [f"- {note}" for note in step["notes"]]
        if step["notes"]:
            lines.append("")
    return "\n".join(lines)


def _table(rows: list[Row]) -> list[str]:
    """A Markdown table of ``rows`` with the union of their keys as columns, in first-seen order."""
    columns: list[str] = []
    for row in rows:
        columns += [key for key in row if key not in columns]
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for row in rows:
        lines.append("| " + " | ".join(_cell(row.get(column)) for column in columns) + " |")
    return lines


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        if abs(value) >= 100:
            return f"{value:,.0f}"
        return f"{value:.3g}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def _timestamp(seconds: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(seconds))


def _write_atomically(path: Path, text: str) -> None:
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text)
    os.replace(partial, path)
