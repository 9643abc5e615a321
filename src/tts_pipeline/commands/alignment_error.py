"""Word-boundary error of the durations against ground-truth word timings (median / mean / p90 ms).

Reads what the ``durations`` stage wrote (``durations.json`` and the per-utterance durations and
symbols) and the ground-truth ``words`` tier of ``<truth dir>/<id>.TextGrid`` (default
``<corpus root>/alignments``, which the demo corpus fills with eSpeak's own timings), and prints a
small table for one split. Utterances whose word counts differ are skipped and counted.

Several ``--index`` files (one per experiment, e.g. ``durations.source`` aligner, textgrid and
tacotron2 on the same corpus) are compared side by side: each is read with the features folder it
sits in, and a last table puts their errors in one row each.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--index",
        type=Path,
        nargs="+",
        required=True,
        help="durations.json written by the durations stage; several: compare them (each with its own folder)",
    )
    parser.add_argument(
        "--features-dir",
        type=Path,
        default=None,
        help="features folder (durations/, symbols/) of a single --index; default the folder holding it",
    )
    parser.add_argument("--manifest-dir", type=Path, required=True, help="folder of manifest.{train,val,test}.jsonl")
    parser.add_argument("--corpus-record", type=Path, required=True, help="corpus.json written by the corpus stage")
    parser.add_argument("--split", choices=("train", "val", "test"), default="val", help="which split (default val)")
    parser.add_argument(
        "--truth-dir", type=Path, default=None, help="ground-truth TextGrids; default <root>/alignments"
    )
    parser.add_argument("--output", type=Path, default=None, help="also write the full report (JSON) here")


def run(args: argparse.Namespace) -> None:
    from tts_pipeline.data.corpus_record import TRUTH_DIR_NAME, read_corpus_root
    from tts_pipeline.data.feature_layout import FeatureLayout
    from tts_pipeline.errors import UserError
    from tts_pipeline.features.alignment_eval import alignment_quality, format_summary
    from tts_pipeline.features.symbol_files import read_utterances
    from tts_pipeline.files import write_json

    if args.features_dir is not None and len(args.index) > 1:
        raise UserError("--features-dir goes with a single --index; several are each read from their own folder")
    _, corpus_root = read_corpus_root(args.corpus_record)
    truth_dir = args.truth_dir or corpus_root / TRUTH_DIR_NAME
    if not truth_dir.is_dir():
        raise UserError(f"no ground-truth word timings: {truth_dir} is not a folder (give --truth-dir)")
    ids = [utterance.id for utterance in read_utterances(args.manifest_dir) if utterance.split == args.split]
    summaries = []
    for path in args.index:
        try:
            index = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as error:
            raise UserError(f"--index {path}: not a readable durations.json ({error})") from None
        layout = FeatureLayout(args.features_dir or path.parent)
        summary = alignment_quality(index, ids, layout, truth_dir, split=args.split)
        summary = {
            "source": index["source"],
            "symbols_kind": index.get("symbols_kind"),
            "index": str(path),
            # results/<experiment>/features/durations.json: names the run when two share a source
            "experiment": path.resolve().parent.parent.name,
            **summary,
        }
        summaries.append(summary)
        print(f"durations: {index['source']} ({index.get('symbols_kind')})")
        print(format_summary(summary))
    if len(summaries) > 1:
        print()
        print(format_comparison(summaries))
    if args.output is not None:
        write_json(args.output, summaries[0] if len(summaries) == 1 else {"sources": summaries})


def format_comparison(summaries: list[dict[str, Any]]) -> str:
    """One row per durations source: words compared and the word-boundary error (ms) over starts and ends."""
    width = max(len("experiment"), *(len(summary.get("experiment") or "-") for summary in summaries)) + 2
    lines = [
        f"word-boundary error on {summaries[0]['split']} (ms)",
        f"{'experiment':<{width}}{'source':<12}{'symbols':<12}{'compared':>10}{'words':>7}{'median':>9}{'mean':>9}"
        f"{'p90':>9}{'joined':>9}",
    ]
    for summary in summaries:
        stats = summary["boundary_error_ms"]
        joined = ((summary.get("space_joins_next_word") or {}).get("boundary_error_ms") or {}).get("median")
        figures = (
            f"{stats['median']:>9.2f}{stats['mean']:>9.2f}{stats['p90']:>9.2f}" if stats else f"{'-':>9}" * 3
        )
        compared = f"{summary['n_evaluated']}/{summary['n_utterances']}"
        lines.append(
            f"{summary.get('experiment') or '-':<{width}}{summary['source']:<12}{summary['symbols_kind'] or '-':<12}"
            f"{compared:>10}{summary['n_words']:>7}"
            f"{figures}{'-' if joined is None else f'{joined:.2f}':>9}"
        )
    lines.append("joined: the median with a lone space counted in the following word (symbol sources only)")
    return "\n".join(lines)
