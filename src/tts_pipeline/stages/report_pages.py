"""Build the pages of the HTML report: loss curves, feature plots, benchmark tables, playable audio.

Reads what earlier stages wrote and writes into ``--out-dir`` (each file atomically):

- ``losses.png``: train/val losses of every training stage against the step (``--metrics name=path``,
  each a ``metrics.json`` with a ``history``);
- ``pitch.png``, ``alignment.png``: copies of the first mel-with-f0 and attention figures of the
  features and durations stages (``--features-dir``/plots);
- ``benchmark.html``: ``--benchmark-md`` as HTML tables;
- ``audio/<group>/<clip>.html``: one page per clip, its spectrograms side by side and each version
  playable (see :mod:`tts_pipeline.report_clips`): ``held-out/`` for the benchmark's listening examples
  (``--benchmark-json``: the recording, Griffin-Lim on its mel, copy synthesis, FastPitch + HiFi-GAN from
  the text), ``vocoders/`` for the first ``--n-clips`` validation utterances (the recording, the base and
  the fine-tuned vocoder on the teacher-forced FastPitch mel: what fine-tuning changes, by ear; and
  WaveGlow on the same mel with ``--waveglow``), and
  ``from-text/`` for the synthesised phrases (``--inference-manifest``; free text, so no recording).

``snakemake --report`` embeds them (captions in ``workflow/report/``); the report is one HTML file,
and every page stays small enough for a browser to show inside it.
"""

from __future__ import annotations

import argparse
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from tts_pipeline.config import AudioConfig
    from tts_pipeline.report_clips import ClipPage

log = logging.getLogger(__name__)

STAGE = "report_pages"
HELD_OUT_NOTE = (
    "A held-out sentence (never trained on): the recording, Griffin-Lim on its ground-truth mel (what the "
    "mel carries), the fine-tuned HiFi-GAN on that mel (copy synthesis) and FastPitch + HiFi-GAN from the "
    "text (and WaveGlow's copy synthesis and full TTS when the run builds a WaveGlow). Speech shows "
    "formants, harmonics that follow the pitch, and silences between phrases; a buzz shows flat horizontal "
    "lines. The benchmark page has the recogniser's figures."
)
VOCODER_NOTE = (
    "A validation utterance: the recording, then the base and the fine-tuned HiFi-GAN on the same "
    "teacher-forced FastPitch mel (what fine-tuning changes, by ear), and WaveGlow on it when the run "
    "builds one."
)
#: The report's figure items and the plots they are copied from, first pattern found wins. The alignment
#: item shows the attention the durations came from (aligner, Tacotron 2) or, for TextGrid durations,
#: which have none, the symbol boundaries over the waveform.
FIGURES = {"pitch": ("*_mel_pitch.png",), "alignment": ("*alignment*.png", "*_durations.png")}
#: The label of the ground truth, first on every page that has one.
GROUND_TRUTH = "recording (ground truth)"
FROM_TEXT_NOTE = "{models} from free text: no recording of this sentence exists."


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
    parser.add_argument("--waveglow", type=Path, help="WaveGlow model.pt: also in the vocoder comparison")
    parser.add_argument("--n-clips", type=int, default=2, help="validation clips in the vocoder comparison")
    parser.add_argument("--out-dir", type=Path, required=True, help="R/report")


def run(args: argparse.Namespace) -> None:
    from tts_pipeline.files import copy_file, write_text
    from tts_pipeline.plots import loss_curves, save_figure
    from tts_pipeline.report_clips import write_clip_pages
    from tts_pipeline.report_pages import LOSS_KEYS, markdown_page

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

    vocoders = _load_vocoders(args)
    audio_cfg = vocoders["fine-tuned HiFi-GAN"][1].audio
    intelligibility = json.loads(args.benchmark_json.read_text(encoding="utf-8"))["quality"].get("intelligibility")
    clips = [
        *_held_out_clips(intelligibility or {}, audio_cfg),
        *_vocoder_clips(args, vocoders),
        *_from_text_clips(args.inference_manifest, audio_cfg),
    ]
    rate = audio_cfg.sampling_rate
    pages = write_clip_pages(clips, out / "audio", rate, _mel_function(audio_cfg), audio_cfg.hop_length / rate)
    for page in pages:
        log.info("report page %s: %.2f MB (%s)", page.path.relative_to(out), page.size / 1e6, page.codec)
    largest = max((page.size for page in pages), default=0)
    log.info("report pages in %s: %d clip pages, the largest %.2f MB", out, len(pages), largest / 1e6)


def first_figure(plots: Path, patterns: tuple[str, ...]) -> Path:
    """The first file (by name) in ``plots`` matching the first of ``patterns`` that matches any;
    UserError naming the folder and the patterns when none does."""
    for pattern in patterns:
        found = sorted(plots.glob(pattern))
        if found:
            return found[0]
    from tts_pipeline.errors import UserError

    raise UserError(f"report: no {' or '.join(patterns)} figure in {plots} (the features/durations stages write them)")


def _mel_function(audio_cfg: AudioConfig) -> Callable[[np.ndarray], np.ndarray]:
    """Audio ``(N,)`` -> log-mel ``(n_mels, T)`` with the pipeline's mel function."""
    import numpy as np
    import torch

    from tts_pipeline.audio import MelSpectrogram

    module = MelSpectrogram(audio_cfg)

    def mel(audio: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return module(torch.from_numpy(np.ascontiguousarray(audio, dtype=np.float32))).numpy()

    return mel


def _load_vocoders(args: argparse.Namespace) -> dict[str, tuple]:
    """Base and fine-tuned HiFi-GAN generators (and WaveGlow with ``--waveglow``): each a callable
    ``(1, n_mels, T)`` mel -> ``(1, 1, T * hop)`` audio with its model info."""
    from tts_pipeline.models.hifigan.model_file import load_generator

    fine_tuned = load_generator(args.hifigan_finetuned, remove_weight_norm=True)
    # A foreign base vocoder (hifigan.checkpoint from NVIDIA or jik876) records no audio settings: it
    # was fine-tuned under the ones the fine-tuned model file records.
    base = load_generator(args.hifigan_base, remove_weight_norm=True, audio=fine_tuned[1].audio)
    vocoders = {"base HiFi-GAN": base, "fine-tuned HiFi-GAN": fine_tuned}
    if args.waveglow is not None:
        from tts_pipeline.inference.waveglow_vocoder import DEFAULT_SIGMA, load_waveglow_vocoder

        # NVIDIA's inference sigma, no denoiser: the model's own sound.
        vocoders[f"WaveGlow (sigma {DEFAULT_SIGMA:g})"] = load_waveglow_vocoder(
            args.waveglow, audio=fine_tuned[1].audio
        )
    return vocoders


def _held_out_clips(section: dict, audio_cfg: AudioConfig) -> list[ClipPage]:
    """The benchmark's listening examples (``report.json``'s ``quality.intelligibility``), one page each."""
    from tts_pipeline.audio import load_wav
    from tts_pipeline.report_clips import ClipPage, Version

    labels = {row["name"]: row["description"] for row in section.get("rows", [])} | {"recordings": GROUND_TRUTH}
    return [
        ClipPage(
            "held-out", example["id"], example["text"], HELD_OUT_NOTE,
            [Version(labels.get(name, name), load_wav(wav, audio_cfg.sampling_rate))
             for name, wav in example["wavs"].items()],
        )
        for example in section.get("examples", [])
    ]


def _vocoder_clips(args: argparse.Namespace, vocoders: dict[str, tuple]) -> list[ClipPage]:
    """Recording, base vocoder and fine-tuned vocoder on the FastPitch mel of a few val clips."""
    import numpy as np
    import torch

    from tts_pipeline.audio import load_wav
    from tts_pipeline.data.manifest import read_manifest
    from tts_pipeline.report_clips import ClipPage, Version

    rate = vocoders["fine-tuned HiFi-GAN"][1].audio.sampling_rate
    clips = []
    for record in read_manifest(args.val_manifest)[: args.n_clips]:
        utterance = record["id"]
        mel = torch.from_numpy(np.load(args.fastpitch_mels_dir / f"{utterance}.npy"))[None]
        versions = [Version(GROUND_TRUTH, load_wav(record["wav"], rate))]
        for label, (generator, _) in vocoders.items():
            with torch.inference_mode():
                versions.append(Version(f"{label} on the FastPitch mel", generator(mel)[0, 0].numpy()))
        clips.append(ClipPage("vocoders", utterance, record.get("text", ""), VOCODER_NOTE, versions))
    return clips


def _from_text_clips(manifest: Path, audio_cfg: AudioConfig) -> list[ClipPage]:
    """The synthesised phrases (``R/inference/manifest.jsonl``), one page each."""
    from tts_pipeline.audio import load_wav
    from tts_pipeline.files import read_jsonl
    from tts_pipeline.report_clips import ClipPage, Version

    rate = audio_cfg.sampling_rate
    return [
        ClipPage("from-text", record["name"], record.get("text", ""), FROM_TEXT_NOTE.format(models=_models(record)),
                 [Version(_models(record), load_wav(manifest.parent / record["wav"], rate))])
        for record in read_jsonl(manifest)
    ]


def _models(record: dict) -> str:
    """Who spoke a synthesised phrase: its manifest record's ``vocoder`` (HiFi-GAN when it names none)."""
    return "FastPitch + WaveGlow" if record.get("vocoder") == "waveglow" else "FastPitch + fine-tuned HiFi-GAN"
