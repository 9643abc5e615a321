"""Word-boundary error of the durations against ground-truth word timings (median / mean / p90 ms).

Reads what the ``durations`` stage wrote (``durations.json`` and the per-utterance durations and
symbols) and the ground-truth ``words`` tier of ``<truth dir>/<id>.TextGrid`` (default
``<corpus root>/alignments``, which the demo corpus fills with eSpeak's own timings), and prints a
small table for one split. Utterances whose word counts differ are skipped and counted.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--index", type=Path, required=True, help="durations.json written by the durations stage")
    parser.add_argument("--features-dir", type=Path, required=True, help="features folder (durations/, symbols/)")
    parser.add_argument("--manifest-dir", type=Path, required=True, help="folder of manifest.{train,val,test}.jsonl")
    parser.add_argument("--corpus-record", type=Path, required=True, help="corpus.json written by the corpus stage")
    parser.add_argument("--split", choices=("train", "val", "test"), default="val", help="which split (default val)")
    parser.add_argument(
        "--truth-dir", type=Path, default=None, help="ground-truth TextGrids; default <root>/alignments"
    )
    parser.add_argument("--output", type=Path, default=None, help="also write the full report (JSON) here")


def run(args: argparse.Namespace) -> None:
    from tts_pipeline.data.corpus_record import TRUTH_DIR_NAME, read_corpus_root
    from tts_pipeline.errors import UserError
    from tts_pipeline.features.alignment_eval import alignment_quality, format_summary
    from tts_pipeline.features.layout import FeatureLayout
    from tts_pipeline.features.symbol_files import read_utterances
    from tts_pipeline.files import write_json

    try:
        index = json.loads(args.index.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise UserError(f"--index {args.index}: not a readable durations.json ({error})") from None
    _, corpus_root = read_corpus_root(args.corpus_record)
    truth_dir = args.truth_dir or corpus_root / TRUTH_DIR_NAME
    if not truth_dir.is_dir():
        raise UserError(f"no ground-truth word timings: {truth_dir} is not a folder (give --truth-dir)")
    ids = [utterance.id for utterance in read_utterances(args.manifest_dir) if utterance.split == args.split]
    summary = alignment_quality(index, ids, FeatureLayout(args.features_dir), truth_dir, split=args.split)
    print(f"durations: {index['source']} ({index.get('symbols_kind')})")
    print(format_summary(summary))
    if args.output is not None:
        write_json(args.output, summary)
