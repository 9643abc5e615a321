"""Normalise text, validate every utterance and split the corpus into train / val / test.

Reads the corpus record written by the ``corpus`` stage and writes ``manifest.{train,val,test}.jsonl``
(one utterance per line: id, wav, text, raw_text, n_samples, sample_rate, duration_s, source_wav) and
``validation.json`` (every rejected utterance with its file and reason, and the split sizes).
With ``data.on_invalid: error`` any bad utterance stops the stage with the full list.
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

from tts_pipeline.stages.common import add_stage_arguments, load_stage_section, tracked

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_stage_arguments(parser)
    parser.add_argument("--corpus", type=Path, required=True, help="corpus.json written by the corpus stage")
    parser.add_argument(
        "--validation", type=Path, required=True, help="validation.json to write; the manifests go beside it"
    )
    parser.add_argument("--resampled-dir", type=Path, required=True, help="where resampled wavs go (data.resample)")
    parser.add_argument("--workers", type=int, default=1, help="processes reading audio")


def run(args: argparse.Namespace) -> None:
    from tts_pipeline.config import DataConfig, TextConfig, parse_section
    from tts_pipeline.data.manifest import build_manifest, write_manifest

    payload = load_stage_section(args, "manifest")
    data_cfg: DataConfig = parse_section(DataConfig, payload["data"], "data")
    text_cfg: TextConfig = parse_section(TextConfig, payload["text"], "text")
    record = json.loads(args.corpus.read_text(encoding="utf-8"))

    with tracked("manifest", payload, dataset=record["name"]) as run_log:
        result = build_manifest(
            Path(record["root"]),
            data_cfg,
            text_cfg,
            int(payload["audio.sampling_rate"]),
            resample_dir=args.resampled_dir,
            workers=max(1, args.workers),
        )
        write_manifest(result, args.validation.parent)
        validation = result.validation
        run_log.log_metrics(
            {
                "n_rows": validation["n_rows"],
                "n_valid": validation["n_valid"],
                "n_rejected": validation["n_rejected"],
                **{f"n_{split}": len(records) for split, records in result.splits.items()},
                **{
                    # build_manifest fills every field; the filter only narrows the optional type
                    f"{split}_hours": sum(r.duration_s for r in records if r.duration_s is not None) / 3600
                    for split, records in result.splits.items()
                },
            }
        )
        run_log.log_artifact(args.validation)
        log.info(
            "manifest: %s valid of %s rows; split %s",
            validation["n_valid"],
            validation["n_rows"],
            {split: len(records) for split, records in result.splits.items()},
        )
