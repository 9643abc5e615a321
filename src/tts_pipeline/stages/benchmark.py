"""Benchmark the trained models: inference speed (NVIDIA's procedure), objective quality, training throughput.

Speed. For each batch size of ``benchmark.batch_sizes`` and each precision of ``benchmark.precisions``
the device runs (a CPU: fp32 and bf16 autocast, labelled native or emulated; a GPU: fp32 (labelled by
its TF32 state), fp16 autocast, bf16 autocast where supported; skipped ones are listed with the
reason), a batch of B copies of the
``benchmark.phrases`` sentence goes through FastPitch and the fine-tuned HiFi-GAN (denoising strength
``benchmark.denoising_strength``; pace and pitch transform of the ``inference`` section):
``benchmark.warmup`` untimed calls, then ``benchmark.repeats`` timed ones, each model timed apart with
the device synchronised. On the CPU ``benchmark.threads`` torch threads are used.
(:mod:`tts_pipeline.benchmark.inference`.)

Quality. (a) Mel L1 of the base (``--hifigan-base``) and fine-tuned (``--hifigan``) vocoders over the
first ``benchmark.n_quality`` validation utterances, vocoding the ground-truth mels
(``--features-dir``/mels) and the teacher-forced FastPitch mels (``--fastpitch-mels-dir``); the target
is always the ground-truth mel (:mod:`tts_pipeline.benchmark.vocoder`). (b) The sentences of
``--inference-manifest`` (written by ``synthesize``) against a reference rendering of the same text,
chosen by ``--reference`` (:mod:`tts_pipeline.benchmark.reference`): ``espeak`` for the demo corpus
(eSpeak NG at the corpus's base voice; needs ``corpus.demo`` in ``--section``), ``manifest`` where the
sentences are validation utterances named by id (LJSpeech: their recordings), ``none`` to skip.
MCD-DTW, F0 RMSE, voicing error and duration ratio per sentence and averaged. (c) What each faster
precision costs against fp32 on the same validation utterances: vocoder waveform SNR, mel L1, and
FastPitch's mels (:mod:`tts_pipeline.benchmark.precision_quality`); the intelligibility table gets a
full-TTS row per precision. The precision ``inference.amp`` resolves to (what ``synthesize`` runs) is
recorded in the settings. (d) How quiet the pauses are (:mod:`tts_pipeline.benchmark.pauses`): per row of
the intelligibility table, the level in the pauses relative to the speech (median and quartiles over its
utterances) and the noise floor, a vocoder row with loud pauses flagged; and the noise floor of the WAVs of
``--inference-manifest`` (what a user gets). It reuses the audio the benchmark makes anyway. (e) Whether
the audio follows the voice's pitch (:mod:`tts_pipeline.benchmark.pitch_fidelity`), on the same audio: per
row made from the ground-truth mels, the fraction of the recording's voiced frames whose Praat F0 it
matches within 50 cents and the median error; per row, the fraction of its voiced frames locked to the
frame rate (sampling rate / hop, a buzz), a vocoder row that buzzes or follows far less than Griffin-Lim
flagged.

Training. The throughput each training stage reported, from ``--metrics name=path`` files
(:mod:`tts_pipeline.benchmark.training`; units in the report).

Other vocoders. With ``--vocoders NAME=PATH`` (the workflow passes every vocoder of the DAG beside
HiFi-GAN, e.g. ``waveglow=R/waveglow/model.pt``), FastPitch + each is timed the same way, and each gets a
mel L1 row and two intelligibility rows, named by its kind (:mod:`tts_pipeline.benchmark.other_vocoders`).

Other acoustic models. With ``--acoustic-models NAME=PATH`` (the workflow passes every acoustic model of
the DAG beside FastPitch, e.g. ``tacotron2=R/tacotron2/model.pt``), each is timed with the vocoder of
``inference.vocoder`` beside NVIDIA's published figures for that pair, and gets full-TTS intelligibility
rows with every vocoder (:mod:`tts_pipeline.benchmark.other_acoustic_models`).

Writes ``<out-dir>/report.json`` (settings, device, PyTorch version, threads, every row, quality,
training throughput, skipped precisions, NVIDIA's published figures), then ``<out-dir>/report.md``
(the same as tables in NVIDIA's layout), each atomically. Under tracking, the headline figures and
both files go to MLflow.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from tts_pipeline.stages.common import add_stage_arguments, load_stage_section, tracked

log = logging.getLogger(__name__)

STAGE = "benchmark"
VOICE_KEY = "corpus.demo"
"""The demo corpus's voice settings: required in ``--section`` with ``--reference espeak``."""
REPORT_JSON = "report.json"
REPORT_MD = "report.md"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from tts_pipeline.benchmark.other_acoustic_models import add_acoustic_models_argument
    from tts_pipeline.benchmark.other_vocoders import add_vocoders_argument

    add_stage_arguments(parser, "--manifest-dir", "--features-dir")
    parser.add_argument("--fastpitch", type=Path, required=True, help="FastPitch model.pt")
    parser.add_argument("--hifigan", type=Path, required=True, help="the fine-tuned HiFi-GAN model.pt (timed)")
    parser.add_argument("--hifigan-base", type=Path, default=None, help="the base HiFi-GAN model.pt (mel L1 only)")
    parser.add_argument(
        "--fastpitch-mels-dir", type=Path, default=None, help="teacher-forced FastPitch mels <id>.npy (optional)"
    )
    parser.add_argument(
        "--inference-manifest",
        type=Path,
        default=None,
        help="R/inference/manifest.jsonl: its WAVs' noise floor, and the sentences --reference compares "
        "(needed unless --reference none)",
    )
    parser.add_argument(
        "--reference",
        choices=("espeak", "manifest", "none"),
        default="none",
        help="what the synthesised sentences are compared with: eSpeak NG (demo corpus), the validation "
        "recordings of the same ids (LJSpeech), or nothing (default)",
    )
    parser.add_argument(
        "--metrics",
        nargs="*",
        default=[],
        metavar="NAME=PATH",
        help="training metrics.json files, e.g. train_hifigan=R/hifigan/metrics.json",
    )
    parser.add_argument(
        "--phrases", type=Path, default=None, help="the benchmark phrase file; default benchmark.phrases"
    )
    parser.add_argument("--out-dir", type=Path, required=True, help="where report.json and report.md go")
    add_vocoders_argument(parser, "their rows beside HiFi-GAN's (speed, mel L1, intelligibility)")
    add_acoustic_models_argument(parser)
    parser.add_argument("--gpus", type=int, default=None, help="0 = CPU, 1 = first visible GPU; default benchmark.gpus")


def run(args: argparse.Namespace) -> None:
    import torch

    from tts_pipeline.benchmark.document import headline_metrics, render_markdown
    from tts_pipeline.benchmark.other_acoustic_models import parse_acoustic_model_argument
    from tts_pipeline.benchmark.other_vocoders import parse_vocoder_argument
    from tts_pipeline.benchmark.suite import BenchmarkInputs, BenchmarkSections, load_models, run_benchmark
    from tts_pipeline.benchmark.training import parse_metrics_argument
    from tts_pipeline.config import (
        AudioConfig,
        BenchmarkConfig,
        DemoCorpusConfig,
        InferenceConfig,
        PitchConfig,
        TextConfig,
        parse_section,
    )
    from tts_pipeline.devices import single_device
    from tts_pipeline.errors import UserError
    from tts_pipeline.files import write_json, write_text
    from tts_pipeline.inference import read_phrases

    payload = load_stage_section(args, "benchmark")
    cfg: BenchmarkConfig = parse_section(BenchmarkConfig, payload["benchmark"], "benchmark")
    if args.reference != "none" and args.inference_manifest is None:
        raise UserError(f"benchmark: --reference {args.reference} needs --inference-manifest")
    if args.reference == "espeak" and VOICE_KEY not in payload:
        raise UserError(f"benchmark: --reference espeak needs the demo corpus's voice ({VOICE_KEY!r}) in --section")
    metrics_files = [parse_metrics_argument(value) for value in args.metrics]
    other_files = [parse_vocoder_argument(value) for value in args.vocoders]
    acoustic_files = [parse_acoustic_model_argument(value) for value in args.acoustic_models]

    device = single_device(cfg.gpus if args.gpus is None else args.gpus, "benchmark.gpus")
    if device.type == "cpu":
        torch.set_num_threads(cfg.threads)
    phrases_path = args.phrases if args.phrases is not None else Path(cfg.phrases)
    phrases = read_phrases(phrases_path)
    if len(phrases) > 1:
        log.info("benchmark: %s holds %d phrases; the first, %r, is timed", phrases_path, len(phrases), phrases[0].name)
    inputs = BenchmarkInputs(
        manifest_dir=args.manifest_dir, features_dir=args.features_dir, fastpitch=args.fastpitch, hifigan=args.hifigan,
        hifigan_base=args.hifigan_base, fastpitch_mels_dir=args.fastpitch_mels_dir,
        inference_manifest=args.inference_manifest, reference=args.reference, metrics=metrics_files,
        other_vocoders=other_files, phrases_path=phrases_path, phrase=phrases[0], out_dir=args.out_dir,
        other_acoustic_models=acoustic_files,
    )  # fmt: skip
    sections = BenchmarkSections(
        benchmark=cfg,
        inference=parse_section(InferenceConfig, payload["inference"], "inference"),
        audio=parse_section(AudioConfig, payload["audio"], "audio"),
        pitch=parse_section(PitchConfig, payload["pitch"], "pitch"),
        text=parse_section(TextConfig, payload["text"], "text"),
        demo=parse_section(DemoCorpusConfig, payload[VOICE_KEY], VOICE_KEY) if args.reference == "espeak" else None,
    )
    models = load_models(inputs, sections, device)

    tags = {"device": str(device), "reference": args.reference}
    with tracked(STAGE, payload, dataset=args.manifest_dir.resolve().parent.name, tags=tags) as run_log:
        report = run_benchmark(inputs, sections, models, device, run_log.log_artifact)
        json_path, md_path = args.out_dir / REPORT_JSON, args.out_dir / REPORT_MD
        write_json(json_path, report)
        write_text(md_path, render_markdown(report))
        log.info("benchmark: wrote %s and %s", json_path, md_path)
        run_log.log_metrics(headline_metrics(report))
        run_log.log_artifact(json_path)
        run_log.log_artifact(md_path)
