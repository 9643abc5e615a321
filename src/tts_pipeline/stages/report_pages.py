"""Build the pages of the HTML report: loss curves, feature plots, benchmark tables, playable audio.

Reads what earlier stages wrote and writes into ``--out-dir`` (each file atomically):

- ``losses.png``: train/val losses of every training stage against the step (``--metrics name=path``,
  each a ``metrics.json`` with a ``history``);
- ``pitch.png``, ``alignment.png``: copies of the first mel-with-f0 and attention figures of the
  features and durations stages (``--features-dir``/plots);
- ``benchmark.html``: ``--benchmark-md`` as HTML tables;
- ``listening.html``: from ``--benchmark-json``'s intelligibility section, for a few held-out sentences
  the spectrograms of the recording, Griffin-Lim, copy synthesis and full TTS side by side, each
  playable beside the recording, and what the recogniser's figures say in words;
- ``audio.html``: the synthesised phrases (``--inference-manifest``), and for the first
  ``--n-clips`` validation utterances the recording beside both vocoders on the teacher-forced FastPitch
  mel (base vs fine-tuned: what fine-tuning changes, by ear).

``snakemake --report`` embeds them (captions in ``workflow/report/``); the report is one HTML file.
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

log = logging.getLogger(__name__)

STAGE = "report_pages"
LISTENING_INTRO = (
    "Held-out sentences (never trained on), each as the recording, Griffin-Lim on its ground-truth mel "
    "(what the mel carries), the fine-tuned HiFi-GAN on that mel (copy synthesis) and FastPitch + HiFi-GAN "
    "from the text. Speech shows formants, harmonics that follow the pitch, and silences between phrases; "
    "a buzz shows flat horizontal lines. The benchmark page has the recogniser's figures for every row."
)
NO_LISTENING = "The benchmark ran without its intelligibility section (benchmark.intelligibility_clips: 0)."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--metrics", nargs="*", default=[], metavar="STAGE=PATH", help="training metrics.json files")
    parser.add_argument("--features-dir", type=Path, required=True, help="R/features (its plots/ folder)")
    parser.add_argument("--benchmark-md", type=Path, required=True, help="R/benchmark/report.md")
    parser.add_argument("--benchmark-json", type=Path, required=True, help="R/benchmark/report.json")
    parser.add_argument("--inference-manifest", type=Path, required=True, help="R/inference/manifest.jsonl")
    parser.add_argument("--val-manifest", type=Path, required=True, help="R/data/manifest.val.jsonl")
    parser.add_argument("--fastpitch-mels-dir", type=Path, required=True, help="R/fastpitch_mels")
    parser.add_argument("--hifigan-base", type=Path, required=True, help="base vocoder model.pt")
    parser.add_argument("--hifigan-finetuned", type=Path, required=True, help="fine-tuned vocoder model.pt")
    parser.add_argument("--n-clips", type=int, default=2, help="validation clips in the vocoder comparison")
    parser.add_argument("--out-dir", type=Path, required=True, help="R/report")


def run(args: argparse.Namespace) -> None:
    from tts_pipeline.files import copy_file, read_jsonl, write_text
    from tts_pipeline.plots import loss_curves, save_figure
    from tts_pipeline.report_pages import LOSS_KEYS, AudioEntry, audio_page, listening_page, markdown_page

    out = args.out_dir
    histories = {}
    for item in args.metrics:
        stage, _, path = item.partition("=")
        histories[stage] = json.loads(Path(path).read_text()).get("history", [])
    save_figure(loss_curves(histories, LOSS_KEYS), out / "losses.png")

    plots = args.features_dir / "plots"
    for name, pattern in (("pitch", "*_mel_pitch.png"), ("alignment", "*alignment*.png")):
        found = sorted(plots.glob(pattern))
        if not found:
            from tts_pipeline.errors import UserError

            raise UserError(f"report: no {pattern} figure in {plots} (the features/durations stages write them)")
        copy_file(found[0], out / f"{name}.png")

    write_text(out / "benchmark.html", markdown_page("Benchmark", args.benchmark_md.read_text(encoding="utf-8")))
    intelligibility = json.loads(args.benchmark_json.read_text(encoding="utf-8"))["quality"].get("intelligibility")
    intro = LISTENING_INTRO if intelligibility else NO_LISTENING
    write_text(out / "listening.html", listening_page("Listening test", intelligibility or {}, intro))

    inference_dir = args.inference_manifest.parent
    synthesized = [
        AudioEntry(record["name"], inference_dir / record["wav"], record.get("text", ""))
        for record in read_jsonl(args.inference_manifest)
    ]
    comparison = _vocoder_comparison(args, out / "clips")
    groups = {"Synthesised from text (FastPitch + fine-tuned HiFi-GAN)": synthesized, **comparison}
    write_text(out / "audio.html", audio_page("Audio samples", groups))
    log.info("report pages in %s: %d synthesised clips, %d compared", out, len(synthesized), len(comparison))


def _vocoder_comparison(args: argparse.Namespace, clip_dir: Path) -> dict[str, list]:
    """Recording, base vocoder and fine-tuned vocoder on the FastPitch mel of a few val clips."""
    import numpy as np
    import torch

    from tts_pipeline.data.manifest import read_manifest
    from tts_pipeline.inference.postprocess import write_wav
    from tts_pipeline.models.hifigan.model_file import load_generator
    from tts_pipeline.report_pages import AudioEntry

    fine_tuned = load_generator(args.hifigan_finetuned, remove_weight_norm=True)
    # A foreign base vocoder (hifigan.checkpoint from NVIDIA or jik876) records no audio settings: it
    # was fine-tuned under the ones the fine-tuned model file records.
    base = load_generator(args.hifigan_base, remove_weight_norm=True, audio=fine_tuned[1].audio)
    vocoders = {"base HiFi-GAN": base, "fine-tuned HiFi-GAN": fine_tuned}
    groups: dict[str, list] = {}
    for record in read_manifest(args.val_manifest)[: args.n_clips]:
        utterance = record["id"]
        mel = torch.from_numpy(np.load(args.fastpitch_mels_dir / f"{utterance}.npy"))[None]
        entries = [AudioEntry("recording", Path(record["wav"]), record.get("text", ""))]
        for label, (generator, info) in vocoders.items():
            with torch.inference_mode():
                audio = generator(mel)[0, 0].numpy()
            path = clip_dir / f"{utterance}_{label.split()[0].replace('-', '_')}.wav"
            write_wav(path, audio, info.audio.sampling_rate)
            entries.append(AudioEntry(f"{label} on the FastPitch mel", path))
        groups[f"Vocoders on {utterance}'s teacher-forced FastPitch mel"] = entries
    return groups
