"""Per-symbol durations (MAS on the trained aligner, Tacotron 2's attention, or TextGrid phones) and per-symbol pitch.

For every utterance of train, val and test it writes, atomically, under ``--features-dir``:

- ``durations/<id>.npy``: int32 ``(L,)`` mel frames per symbol, summing to the mel's ``T``;
- ``symbols/<id>.npy``: int32 ``(L,)`` the symbol ids those durations belong to;
- ``symbol_pitch/<id>.npy``: float32 ``(L,)`` mean voiced pitch (Hz) in each symbol's frames, 0 if none.

``durations.source: aligner`` encodes the cleaned text as the aligner was trained (characters or
ARPAbet, its symbol set), runs it on the CPU in batches and takes MAS on its soft attention.
``durations.source: tacotron2`` runs Tacotron 2 (``--tacotron2``: its model file or NVIDIA's checkpoint)
teacher-forced over the ground-truth mels and counts, per symbol, the frames whose attention peaks on it
(FastPitch 1.0's durations; the text encoded as Tacotron 2 was trained).
``durations.source: textgrid`` reads ``<textgrid_dir>/<id>.TextGrid`` (``textgrid_dir`` null =
``<corpus root>/alignments``): the ``durations.textgrid_tier`` labels become the symbols, with a
symbol table built from the training TextGrids.

Last, ``--index`` (``durations.json``): the source, the symbol table (ids index it; pad = 0),
per-split counts, and, when the corpus carries ground-truth word timings
(``<corpus root>/alignments/*.TextGrid``), the word-boundary error of the val split
(``tts-pipeline alignment-error`` prints the same for any split).
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tts_pipeline.stages.common import add_stage_arguments, load_stage_section, tracked

if TYPE_CHECKING:
    from tts_pipeline.features.symbol_files import SplitCounts

log = logging.getLogger(__name__)
N_FIGURES = 3  # validation utterances drawn (durations, attention) for MLflow


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_stage_arguments(parser, "--manifest-dir")
    parser.add_argument(
        "--features-dir", type=Path, required=True, help="features folder: reads mels/, pitch/; writes durations/ ..."
    )
    parser.add_argument(
        "--aligner", default="", help="the trained aligner's model.pt (durations.source 'aligner'; '' = none)"
    )
    parser.add_argument(
        "--tacotron2", default="", help="Tacotron 2 model.pt or NVIDIA checkpoint (durations.source 'tacotron2')"
    )
    parser.add_argument("--corpus-record", type=Path, required=True, help="corpus.json written by the corpus stage")
    parser.add_argument("--index", type=Path, required=True, help="durations.json to write last")
    parser.add_argument("--batch-size", type=int, default=16, help="utterances per aligner / Tacotron 2 forward pass")


def run(args: argparse.Namespace) -> None:
    from tts_pipeline.config import AudioConfig, DurationsConfig, parse_section
    from tts_pipeline.data.corpus_record import TRUTH_DIR_NAME, read_corpus_root
    from tts_pipeline.data.feature_layout import DURATIONS, SYMBOL_PITCH, SYMBOLS, FeatureLayout
    from tts_pipeline.data.manifest import manifest_path, read_manifest
    from tts_pipeline.data.splits import SPLIT_NAMES
    from tts_pipeline.errors import UserError
    from tts_pipeline.features.alignment_eval import alignment_quality, format_summary
    from tts_pipeline.features.durations_from_aligner import durations_from_aligner
    from tts_pipeline.features.durations_from_tacotron2 import durations_from_tacotron2
    from tts_pipeline.features.durations_from_textgrids import durations_from_textgrids
    from tts_pipeline.features.figures import duration_figures, load_figure_attention
    from tts_pipeline.features.symbol_files import SplitCounts, read_utterances
    from tts_pipeline.files import write_json

    payload = load_stage_section(args, "durations")
    cfg: DurationsConfig = parse_section(DurationsConfig, payload["durations"], "durations")
    audio: AudioConfig = parse_section(AudioConfig, payload["audio"], "audio")
    symbol_set = str(payload["text.symbol_set"])
    corpus_name, corpus_root = read_corpus_root(args.corpus_record)
    utterances = read_utterances(args.manifest_dir)
    layout = FeatureLayout(args.features_dir)
    counts = {split: SplitCounts() for split in SPLIT_NAMES}
    if args.batch_size < 1:
        raise UserError(f"--batch-size: expected >= 1, got {args.batch_size}")

    with tracked("durations", payload, dataset=corpus_name) as run_log:
        started = time.perf_counter()
        if cfg.source == "aligner":
            if not args.aligner:
                raise UserError("durations.source is 'aligner' but no --aligner model.pt was given")
            symbol_fields = durations_from_aligner(
                utterances, layout, args.aligner, symbol_set, args.batch_size, counts
            )
        elif cfg.source == "tacotron2":
            if not args.tacotron2:
                raise UserError("durations.source is 'tacotron2' but no --tacotron2 model was given")
            symbol_fields = durations_from_tacotron2(
                utterances, layout, args.tacotron2, symbol_set, audio.n_mel_channels, args.batch_size, counts
            )
        else:
            textgrid_dir = Path(cfg.textgrid_dir) if cfg.textgrid_dir else corpus_root / TRUTH_DIR_NAME
            symbol_fields = durations_from_textgrids(
                utterances, layout, textgrid_dir, cfg.textgrid_tier, audio.hop_length, audio.sampling_rate, counts
            )
        seconds = time.perf_counter() - started
        index: dict[str, Any] = {
            "source": cfg.source,
            **symbol_fields,
            "pad_id": 0,
            "hop_length": audio.hop_length,
            "sampling_rate": audio.sampling_rate,
            "durations_dir": str(layout.folder(DURATIONS)),
            "symbols_dir": str(layout.folder(SYMBOLS)),
            "symbol_pitch_dir": str(layout.folder(SYMBOL_PITCH)),
            "splits": {split: count.as_dict() for split, count in counts.items()},
            "seconds": round(seconds, 3),
        }
        truth_dir = corpus_root / TRUTH_DIR_NAME
        val_ids = [utterance.id for utterance in utterances if utterance.split == "val"]
        quality = alignment_quality(index, val_ids, layout, truth_dir) if truth_dir.is_dir() else None
        index["alignment_quality"] = quality
        write_json(args.index, index)

        run_log.log_metrics(_metrics(seconds, index, counts, quality))
        run_log.log_artifact(args.index)
        records = read_manifest(manifest_path(args.manifest_dir, "val"))[:N_FIGURES]
        # The attention of the model the durations came from (none for TextGrid phones).
        attention_source = load_figure_attention(
            args.aligner if cfg.source == "aligner" else "", args.tacotron2 if cfg.source == "tacotron2" else ""
        )
        for figure in duration_figures(records, layout, index["symbols"], audio, attention_source):
            run_log.log_artifact(figure, "plots")
        total = sum(count.n_utterances for count in counts.values())
        log.info("durations (%s): %d utterances in %.1f s", cfg.source, total, seconds)
        if quality is not None:
            log.info("%s", format_summary(quality))


def _metrics(
    seconds: float, index: dict[str, Any], counts: dict[str, SplitCounts], quality: dict[str, Any] | None
) -> dict[str, float]:
    """The run's MLflow metrics: timing, table size, per-split counts, val word-boundary errors."""
    metrics: dict[str, float] = {"seconds": seconds, "n_symbols_in_table": len(index["symbols"])}
    for split, count in counts.items():
        metrics.update({f"{split}_{key}": value for key, value in count.as_dict().items() if isinstance(value, int)})
    if quality is not None and quality["boundary_error_ms"] is not None:
        for key in ("median", "mean", "p90"):
            metrics[f"val_word_boundary_error_{key}_ms"] = quality["boundary_error_ms"][key]
        joined = (quality.get("space_joins_next_word") or {}).get("boundary_error_ms")
        if joined:
            metrics["val_word_boundary_error_median_ms_space_joined"] = joined["median"]
        metrics["val_alignment_skipped"] = quality["n_skipped"]
    return metrics
