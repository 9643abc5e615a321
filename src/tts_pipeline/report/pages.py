"""Pages of the Snakemake HTML report: the loss curves' keys and the benchmark tables.

Snakemake's report shows images, PDFs and HTML files inline (anything else is a download link), so the
benchmark's Markdown becomes an HTML page with real tables. The audio pages, one per clip, are
:mod:`.clips`'s. Every page is self-contained: the report is one file.
"""

from __future__ import annotations

import html
from pathlib import Path

from tts_pipeline.errors import UserError

STYLE = (
    "body{font-family:sans-serif;margin:1.5em;} table{border-collapse:collapse;margin:1em 0;}"
    "td,th{border:1px solid #bbb;padding:3px 8px;text-align:right;} th{background:#eee;}"
    "td:first-child,th:first-child{text-align:left;}"
)

#: The losses drawn for each training stage (keys of its metrics.json history).
LOSS_KEYS: dict[str, tuple[str, ...]] = {
    "train_aligner": ("train_loss", "val_loss"),
    "train_hifigan": ("train_loss_mel", "val_loss_mel"),
    "train_fastpitch": ("train_loss_mel", "val_loss_mel", "val_loss_duration", "val_loss_pitch"),
    "finetune_hifigan": ("train_loss_mel", "val_loss_mel"),
    "train_waveglow": ("train_loss", "val_loss"),
}


def page(title: str, body: str) -> str:
    """A complete HTML document around ``body``."""
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{STYLE}</style></head><body><h2>{html.escape(title)}</h2>{body}</body></html>\n"
    )


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


#: The report's figure items and the plots they are copied from, first pattern found wins. The alignment
#: item shows the attention the durations came from (aligner, Tacotron 2) or, for TextGrid durations,
#: which have none, the symbol boundaries over the waveform.
FIGURES = {"pitch": ("*_mel_pitch.png",), "alignment": ("*alignment*.png", "*_durations.png")}


def first_figure(plots: Path, patterns: tuple[str, ...]) -> Path:
    """The first file (by name) in ``plots`` matching the first of ``patterns`` that matches any;
    UserError naming the folder and the patterns when none does."""
    for pattern in patterns:
        found = sorted(plots.glob(pattern))
        if found:
            return found[0]
    raise UserError(f"report: no {' or '.join(patterns)} figure in {plots} (the features/durations stages write them)")
