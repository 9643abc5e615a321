"""Build the pages of the HTML report: loss curves, feature plots, benchmark tables, playable audio.

Reads what earlier stages wrote and writes into ``--out-dir`` (each file atomically):

- ``losses.png``: train/val losses of every training stage against the step (``--metrics name=path``,
  each a ``metrics.json`` with a ``history``);
- ``pitch.png``, ``alignment.png``: copies of the first mel-with-f0 and attention figures of the
  features and durations stages (``--features-dir``/plots);
- ``benchmark.html``: ``--benchmark-md`` as HTML tables;
- ``audio/<group>/<clip>.html``: one page per clip, its spectrograms side by side and each version
  playable (see :mod:`tts_pipeline.report.audio_pages`): ``held-out/`` for the benchmark's listening examples
  (``--benchmark-json``: the recording, Griffin-Lim on its mel, copy synthesis, FastPitch + HiFi-GAN from
  the text), ``vocoders/`` for the first ``--n-clips`` validation utterances (the recording, the base and
  the fine-tuned vocoder on the teacher-forced FastPitch mel: what fine-tuning changes, by ear; and
  every vocoder of ``--vocoders NAME=PATH`` on the same mel, e.g. WaveGlow), and
  ``from-text/`` for the synthesised phrases (``--inference-manifest``; free text, so no recording).

``snakemake --report`` embeds them (captions in ``workflow/report/``); the report is one HTML file,
and every page stays small enough for a browser to show inside it.
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

log = logging.getLogger(__name__)

STAGE = "report_pages"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from tts_pipeline.benchmark.other_vocoders import add_vocoders_argument

    parser.add_argument("--metrics", nargs="*", default=[], metavar="STAGE=PATH", help="training metrics.json files")
    parser.add_argument("--features-dir", type=Path, required=True, help="R/features (its plots/ folder)")
    parser.add_argument("--benchmark-md", type=Path, required=True, help="R/benchmark/report.md")
    parser.add_argument("--benchmark-json", type=Path, required=True, help="R/benchmark/report.json")
    parser.add_argument("--inference-manifest", type=Path, required=True, help="R/inference/manifest.jsonl")
    parser.add_argument("--val-manifest", type=Path, required=True, help="R/data/manifest.val.jsonl")
    parser.add_argument("--fastpitch-mels-dir", type=Path, required=True, help="R/fastpitch_mels")
    parser.add_argument("--hifigan-base", type=Path, required=True, help="base vocoder model.pt")
    parser.add_argument("--hifigan-finetuned", type=Path, required=True, help="fine-tuned vocoder model.pt")
    add_vocoders_argument(parser, "also in the vocoder comparison")
    parser.add_argument("--n-clips", type=int, default=2, help="validation clips in the vocoder comparison")
    parser.add_argument("--out-dir", type=Path, required=True, help="R/report")


def run(args: argparse.Namespace) -> None:
    from tts_pipeline.benchmark.other_vocoders import parse_vocoder_argument
    from tts_pipeline.files import copy_file, write_text
    from tts_pipeline.plots import loss_curves, save_figure
    from tts_pipeline.report import audio_pages
    from tts_pipeline.report.clips import write_clip_pages
    from tts_pipeline.report.pages import FIGURES, LOSS_KEYS, first_figure, markdown_page

    out = args.out_dir
    histories = {}
    for item in args.metrics:
        stage, _, path = item.partition("=")
        histories[stage] = json.loads(Path(path).read_text()).get("history", [])
    save_figure(loss_curves(histories, LOSS_KEYS), out / "losses.png")

    plots = args.features_dir / "plots"
    for name, patterns in FIGURES.items():
        copy_file(first_figure(plots, patterns), out / f"{name}.png")

    write_text(out / "benchmark.html", markdown_page("Benchmark", args.benchmark_md.read_text(encoding="utf-8")))

    others = [parse_vocoder_argument(value) for value in args.vocoders]
    vocoders = audio_pages.load_vocoders(args.hifigan_base, args.hifigan_finetuned, others)
    audio_cfg = vocoders[audio_pages.FINE_TUNED].audio
    intelligibility = json.loads(args.benchmark_json.read_text(encoding="utf-8"))["quality"].get("intelligibility")
    clips = [
        *audio_pages.held_out_clips(intelligibility or {}, audio_cfg),
        *audio_pages.vocoder_clips(args.val_manifest, args.fastpitch_mels_dir, args.n_clips, vocoders),
        *audio_pages.from_text_clips(args.inference_manifest, audio_cfg),
    ]
    rate = audio_cfg.sampling_rate
    mel = audio_pages.mel_function(audio_cfg)
    pages = write_clip_pages(clips, out / "audio", rate, mel, audio_cfg.hop_length / rate)
    for page in pages:
        log.info("report page %s: %.2f MB (%s)", page.path.relative_to(out), page.size / 1e6, page.codec)
    largest = max((page.size for page in pages), default=0)
    log.info("report pages in %s: %d clip pages, the largest %.2f MB", out, len(pages), largest / 1e6)
