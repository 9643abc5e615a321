"""Pages of the Snakemake HTML report: loss curves, playable audio and the benchmark tables.

Snakemake's report shows images and HTML files inline (anything else is a download link), so audio
becomes an HTML page of ``<audio>`` elements with the WAVs embedded as data URIs, and the benchmark's
Markdown becomes an HTML page with real tables. Every page is self-contained: the report is one file.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

STYLE = (
    "body{font-family:sans-serif;margin:1.5em;} table{border-collapse:collapse;margin:1em 0;}"
    "td,th{border:1px solid #bbb;padding:3px 8px;text-align:right;} th{background:#eee;}"
    "td:first-child,th:first-child{text-align:left;} audio{width:320px;} .row{margin:.6em 0;}"
)

#: The losses drawn for each training stage (keys of its metrics.json history).
LOSS_KEYS: dict[str, tuple[str, ...]] = {
    "train_aligner": ("train_loss", "val_loss"),
    "train_hifigan": ("train_loss_mel", "val_loss_mel"),
    "train_fastpitch": ("train_loss_mel", "val_loss_mel", "val_loss_duration", "val_loss_pitch"),
    "finetune_hifigan": ("train_loss_mel", "val_loss_mel"),
}


@dataclass(frozen=True)
class AudioEntry:
    """One playable clip: a label, the WAV file, and a line of text under it (e.g. the sentence)."""

    label: str
    wav: Path
    text: str = ""


def page(title: str, body: str) -> str:
    """A complete HTML document around ``body``."""
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{STYLE}</style></head><body><h2>{html.escape(title)}</h2>{body}</body></html>\n"
    )


def audio_page(title: str, groups: dict[str, Sequence[AudioEntry]]) -> str:
    """Sections of playable clips, the WAV bytes embedded (``data:audio/wav;base64,...``)."""
    parts = []
    for heading, entries in groups.items():
        parts.append(f"<h3>{html.escape(heading)}</h3>")
        for entry in entries:
            data = base64.b64encode(entry.wav.read_bytes()).decode("ascii")
            parts.append(
                f"<div class='row'><b>{html.escape(entry.label)}</b><br>"
                f"<audio controls preload='none' src='data:audio/wav;base64,{data}'></audio>"
                f"<br><small>{html.escape(entry.text)}</small></div>"
            )
    return page(title, "\n".join(parts))


def listening_page(title: str, section: dict, intro: str) -> str:
    """The benchmark's listening examples: per held-out sentence, its spectrograms side by side (PNG
    embedded) and its recording beside each synthesised version, playable; then the findings in words.

    ``section`` is ``report.json``'s ``quality.intelligibility`` (``examples``, ``findings``, ``rows``).
    """
    labels = {row["name"]: row["description"] for row in section.get("rows", [])}
    parts = [f"<p>{html.escape(intro)}</p>"]
    findings = section.get("findings") or []
    if findings:
        parts.append("<ul>" + "".join(f"<li><b>{html.escape(item)}</b></li>" for item in findings) + "</ul>")
    for example in section.get("examples", []):
        parts.append(f"<h3>{html.escape(example['id'])}: {html.escape(example['text'])}</h3>")
        image = base64.b64encode(Path(example["figure"]).read_bytes()).decode("ascii")
        parts.append(f"<img style='max-width:100%' alt='spectrograms' src='data:image/png;base64,{image}'>")
        cells = []
        for name, wav in example["wavs"].items():
            data = base64.b64encode(Path(wav).read_bytes()).decode("ascii")
            cells.append(
                f"<td><b>{html.escape(labels.get(name, name))}</b><br>"
                f"<audio controls preload='none' src='data:audio/wav;base64,{data}'></audio></td>"
            )
        parts.append(f"<table><tr>{''.join(cells)}</tr></table>")
    return page(title, "\n".join(parts))


def markdown_page(title: str, markdown: str) -> str:
    """The benchmark's Markdown as HTML: pipe tables become tables, headings headings, the rest text.

    Only what :mod:`tts_pipeline.benchmark.report` writes is understood (``#`` headings, pipe tables
    with a ``---`` separator row, paragraphs); a full Markdown library is not worth a dependency here.
    """
    parts: list[str] = []
    table: list[list[str]] = []

    def flush_table() -> None:
        if not table:
            return
        header, *rows = table
        cells = "".join(f"<th>{html.escape(cell)}</th>" for cell in header)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows)
        parts.append(f"<table><tr>{cells}</tr>{body}</table>")
        table.clear()

    for line in markdown.splitlines():
        stripped = line.strip()
        if stripped.startswith("|"):
            cells = [cell.strip() for cell in stripped.strip("|").split("|")]
            if not all(set(cell) <= set("-: ") for cell in cells):  # skip the |---|---| separator
                table.append(cells)
            continue
        flush_table()
        if stripped.startswith("#"):
            level = min(len(stripped) - len(stripped.lstrip("#")) + 1, 6)
            parts.append(f"<h{level}>{html.escape(stripped.lstrip('#').strip())}</h{level}>")
        elif stripped:
            parts.append(f"<p>{html.escape(stripped)}</p>")
    flush_table()
    return page(title, "\n".join(parts))
