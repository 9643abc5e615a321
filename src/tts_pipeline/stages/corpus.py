"""Build or fetch the corpus: the embedded demo (eSpeak NG), LJSpeech-1.1, or a local folder.

Writes an LJSpeech-layout corpus (``wavs/<id>.wav``, ``metadata.csv``; a multi-speaker corpus names
the speaker in a 4th metadata field, ``corpus.demo.speakers`` makes one) into the folder of ``--record``,
``resources/<corpus.name>/`` (a ``local`` corpus is only read, never copied or modified), and last of
all ``corpus.json`` itself: where the corpus is and what it holds, which the manifest stage reads.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from tts_pipeline.stages.common import add_stage_arguments, load_stage_section, tracked

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_stage_arguments(parser)
    parser.add_argument(
        "--record", type=Path, required=True, help="corpus.json to write last; the corpus goes in its folder"
    )
    parser.add_argument(
        "--downloads", type=Path, default=Path("resources/downloads"), help="where archives are kept (resume)"
    )


def run(args: argparse.Namespace) -> None:
    from tts_pipeline.config import CorpusConfig, parse_section
    from tts_pipeline.data.corpus_record import describe_corpus
    from tts_pipeline.data.ljspeech import check_ljspeech_layout
    from tts_pipeline.errors import UserError
    from tts_pipeline.files import write_json

    payload = load_stage_section(args, "corpus")
    cfg: CorpusConfig = parse_section(CorpusConfig, payload["corpus"], "corpus")
    out_dir = args.record.parent

    with tracked("corpus", payload, dataset=cfg.name) as run_log:
        metrics: dict[str, float] = {}
        if cfg.source == "demo":
            from tts_pipeline.data.demo_corpus import build_demo_corpus
            from tts_pipeline.text import normalize_text

            cleaners = payload["text.cleaners"]
            summary = build_demo_corpus(out_dir, cfg.demo, normalize=lambda text: normalize_text(text, cleaners))
            root = out_dir
            metrics = {
                "n_utterances": summary.n_utterances,
                "audio_minutes": summary.total_seconds / 60,
                "build_seconds": summary.build_seconds,
            }
        elif cfg.source == "ljspeech":
            from tts_pipeline.data.ljspeech import prepare_ljspeech

            root = prepare_ljspeech(out_dir, cfg.ljspeech, download_dir=args.downloads)
        else:
            root = Path(cfg.path)
        try:
            check_ljspeech_layout(root)
        except UserError as error:
            raise UserError(f"corpus ({cfg.source}, config key corpus.path or corpus.name): {error}") from None
        record = describe_corpus(root, cfg.source, cfg.name)
        metrics.update(n_wavs=record["n_wavs"], n_metadata_rows=record["n_metadata_rows"])
        if record.get("speakers"):
            metrics["n_speakers"] = len(record["speakers"])
        run_log.log_metrics(metrics)
        write_json(args.record, record)
        run_log.log_artifact(args.record)
        speakers = record.get("speakers", {})
        per_speaker = ", ".join(f"{speaker} {count}" for speaker, count in speakers.items())
        listed = f" of {len(speakers)} speakers ({per_speaker})" if speakers else ""
        log.info("corpus '%s' (%s) at %s: %d wavs%s", cfg.name, cfg.source, root, record["n_wavs"], listed)
