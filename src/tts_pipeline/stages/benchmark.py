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
``--inference-manifest`` (what a user gets). It reuses the audio the benchmark makes anyway.

Training. The throughput each training stage reported, from ``--metrics name=path`` files
(:mod:`tts_pipeline.benchmark.training`; units in the report).

WaveGlow. With ``--waveglow`` (the workflow passes it when the DAG builds one), FastPitch + WaveGlow is
timed the same way, and WaveGlow gets a mel L1 row and two intelligibility rows
(:mod:`tts_pipeline.benchmark.waveglow_rows`).

Writes ``<out-dir>/report.json`` (settings, device, PyTorch version, threads, every row, quality,
training throughput, skipped precisions, NVIDIA's published figures), then ``<out-dir>/report.md``
(the same as tables in NVIDIA's layout), each atomically. Under tracking, the headline figures and
both files go to MLflow.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tts_pipeline.stages.common import add_stage_arguments, load_stage_section, tracked

if TYPE_CHECKING:
    import torch

    from tts_pipeline.benchmark.inference import PrecisionChoice
    from tts_pipeline.config import AudioConfig, BenchmarkConfig, PitchConfig
    from tts_pipeline.inference import SynthesisOptions, Synthesizer

log = logging.getLogger(__name__)

STAGE = "benchmark"
VOICE_KEY = "corpus.demo"
"""The demo corpus's voice settings: required in ``--section`` with ``--reference espeak``."""
REPORT_JSON = "report.json"
REPORT_MD = "report.md"


def add_arguments(parser: argparse.ArgumentParser) -> None:
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
    parser.add_argument(
        "--waveglow",
        type=Path,
        default=None,
        help="a WaveGlow model.pt or NVIDIA checkpoint: its rows beside HiFi-GAN's (speed, mel L1, intelligibility)",
    )
    parser.add_argument("--gpus", type=int, default=None, help="0 = CPU, 1 = first visible GPU; default benchmark.gpus")


def run(args: argparse.Namespace) -> None:
    import torch

    from tts_pipeline.benchmark.document import headline_metrics, render_markdown
    from tts_pipeline.benchmark.environment import environment
    from tts_pipeline.benchmark.inference import plan_precisions, speed_rows, tf32_flags
    from tts_pipeline.benchmark.nvidia import PUBLISHED
    from tts_pipeline.benchmark.pauses import pause_section
    from tts_pipeline.benchmark.precision_quality import PRECISION_NOTE, precision_quality
    from tts_pipeline.benchmark.reference import sentence_quality
    from tts_pipeline.benchmark.report import LATENCY_NOTES, json_ready
    from tts_pipeline.benchmark.training import THROUGHPUT_UNITS, parse_metrics_argument, training_throughput
    from tts_pipeline.benchmark.vocoder import validation_set, vocoder_quality
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
    from tts_pipeline.inference import SynthesisOptions, Synthesizer, read_phrases
    from tts_pipeline.precision import resolve_precision

    payload = load_stage_section(args, "benchmark")
    cfg: BenchmarkConfig = parse_section(BenchmarkConfig, payload["benchmark"], "benchmark")
    inference_cfg: InferenceConfig = parse_section(InferenceConfig, payload["inference"], "inference")
    audio: AudioConfig = parse_section(AudioConfig, payload["audio"], "audio")
    pitch: PitchConfig = parse_section(PitchConfig, payload["pitch"], "pitch")
    text: TextConfig = parse_section(TextConfig, payload["text"], "text")
    if args.reference != "none" and args.inference_manifest is None:
        raise UserError(f"benchmark: --reference {args.reference} needs --inference-manifest")
    if args.reference == "espeak" and VOICE_KEY not in payload:
        raise UserError(f"benchmark: --reference espeak needs the demo corpus's voice ({VOICE_KEY!r}) in --section")
    metrics_files = [parse_metrics_argument(value) for value in args.metrics]

    device = single_device(cfg.gpus if args.gpus is None else args.gpus, "benchmark.gpus")
    if device.type == "cpu":
        torch.set_num_threads(cfg.threads)
    phrases_path = args.phrases if args.phrases is not None else Path(cfg.phrases)
    phrases = read_phrases(phrases_path)
    phrase = phrases[0]
    if len(phrases) > 1:
        log.info("benchmark: %s holds %d phrases; the first, %r, is timed", phrases_path, len(phrases), phrase.name)
    speed_options = dataclasses.replace(
        SynthesisOptions.from_config(inference_cfg, vocoder_batching="padded"),
        denoising_strength=cfg.denoising_strength,
    )
    main = Synthesizer.load(args.hifigan, args.fastpitch, speed_options, audio=audio, text=text, device=device)
    try:
        tokens = main.encode(phrase.text)
    except UserError as error:
        raise UserError(f"benchmark.phrases {phrases_path}:{phrase.line}: {error}") from None
    plan = plan_precisions(cfg.precisions, device)
    chosen = resolve_precision(inference_cfg.amp, device, key="inference.amp")

    def models_in(amp: str, options: SynthesisOptions) -> Synthesizer:
        """The benchmarked models with other options, in precision ``amp``."""
        return Synthesizer(
            main.vocoder, audio, options, fastpitch=main.fastpitch, text_encoder=main.text_encoder,
            device=device, amp=amp,
        )  # fmt: skip

    def synthesizer_for(choice: PrecisionChoice) -> Synthesizer:
        return main if choice.amp == main.precision.amp else models_in(choice.amp, speed_options)

    waveglow = None  # FastPitch's model with WaveGlow as the vocoder (waveglow_rows)
    if args.waveglow is not None:
        waveglow = Synthesizer.load(
            args.waveglow, None, speed_options, audio=audio, device=device, vocoder="waveglow"
        ).vocoder

    def with_waveglow(amp: str, options: SynthesisOptions) -> Synthesizer:
        return Synthesizer(
            waveglow, audio, options, fastpitch=main.fastpitch, text_encoder=main.text_encoder, device=device, amp=amp
        )

    tags = {"device": str(device), "reference": args.reference}
    with tracked(STAGE, payload, dataset=args.manifest_dir.resolve().parent.name, tags=tags) as run_log:
        # Cheap parts first: bad inputs fail before the long timing sweep.
        training_rows = training_throughput(metrics_files)
        quality_options = SynthesisOptions(batch_size=inference_cfg.batch_size, fade_out_frames=0)
        vocoders = _copy_synthesizers(args, main, quality_options, audio, device)
        if waveglow is not None:
            vocoders["waveglow"] = (args.waveglow, Synthesizer(waveglow, audio, quality_options, device=device))
        demo = parse_section(DemoCorpusConfig, payload[VOICE_KEY], VOICE_KEY) if args.reference == "espeak" else None
        validation = validation_set(args.manifest_dir, args.features_dir, cfg.n_quality, audio.n_mel_channels)

        faster = [choice for choice in plan.runnable if choice.name != "fp32"]
        quality = {
            "vocoder_mel_l1": vocoder_quality(validation, args.fastpitch_mels_dir, vocoders, audio.n_mel_channels),
            "precision": {
                "note": PRECISION_NOTE,
                "rows": precision_quality(
                    models_in("off", quality_options),
                    {choice.name: models_in(choice.amp, quality_options) for choice in faster},
                    validation.targets, validation.texts,
                ),
            },
            "synthesized": sentence_quality(
                args.reference, args.inference_manifest, args.manifest_dir, demo,
                main.text_encoder.clean if main.text_encoder is not None else None, audio, pitch,
            ),
        }  # fmt: skip
        pause_rows, pause_ids = [], []
        if cfg.intelligibility_clips > 0:
            tts_options = SynthesisOptions.from_config(inference_cfg)
            tts = {"tts": models_in("off", tts_options)}
            tts.update({f"tts_{choice.name}": models_in(choice.amp, tts_options) for choice in faster})
            if waveglow is not None:
                tts["tts_waveglow"] = with_waveglow("off", tts_options)
            listening = _listening(args, cfg, audio, tts, {name: synth for name, (_, synth) in vocoders.items()})
            quality["intelligibility"] = listening.section
            pause_rows, pause_ids = listening.pauses, listening.section["utterance_ids"]
            for path in listening.figures:
                run_log.log_artifact(path, "figures")
            for path in listening.wavs:
                run_log.log_artifact(path, "audio")
        product = _product_floor(args.inference_manifest, audio) if args.inference_manifest is not None else None
        quality["pauses"] = pause_section(pause_rows, product, pause_ids)
        for finding in quality["pauses"]["findings"]:
            log.warning("benchmark: %s", finding)
        rows = speed_rows(
            synthesizer_for, plan, tokens, cfg.batch_sizes, warmup=cfg.warmup, repeats=cfg.repeats, on_row=_log_row
        )
        waveglow_speed = []
        if waveglow is not None:
            waveglow_speed = speed_rows(
                lambda choice: with_waveglow(choice.amp, speed_options), plan, tokens, cfg.batch_sizes,
                warmup=cfg.warmup, repeats=cfg.repeats, on_row=lambda row: _log_row(row, "WaveGlow"),
            )  # fmt: skip
        report: dict[str, Any] = {
            "environment": environment(device, tf32_flags()),
            "settings": {
                "benchmark": cfg.model_dump(mode="json"),
                "phrase": {**_phrase_info(phrase), "tokens": len(tokens)},
                "warmup": cfg.warmup,
                "repeats": cfg.repeats,
                "pace": speed_options.pace,
                "pitch_transform": _describe(speed_options.pitch_transform),
                "denoising_strength": speed_options.denoising_strength,
                "vocoder_batching": speed_options.vocoder_batching,
                "reference": args.reference,
                "inference_precision": {"amp": inference_cfg.amp, "precision": chosen.label, "reason": chosen.reason},
                "waveglow_sigma": inference_cfg.waveglow_sigma if waveglow is not None else None,
            },
            "models": {
                "fastpitch": str(args.fastpitch),
                "hifigan": str(args.hifigan),
                "hifigan_base": _describe(args.hifigan_base),
                "waveglow": _describe(args.waveglow),
            },
            "speed": {
                "rows": rows,
                "skipped_precisions": [item._asdict() for item in plan.skipped],
                "notes": LATENCY_NOTES,
                "waveglow_rows": waveglow_speed,
            },
            "quality": quality,
            "training": {"units": THROUGHPUT_UNITS, "rows": training_rows},
            "nvidia": {"published": list(PUBLISHED)},
        }
        report = json_ready(report)
        json_path, md_path = args.out_dir / REPORT_JSON, args.out_dir / REPORT_MD
        write_json(json_path, report)
        write_text(md_path, render_markdown(report))
        log.info("benchmark: wrote %s and %s", json_path, md_path)
        run_log.log_metrics(headline_metrics(report))
        run_log.log_artifact(json_path)
        run_log.log_artifact(md_path)


def _phrase_info(phrase: Any) -> dict[str, Any]:
    return {"name": phrase.name, "text": phrase.text, "characters": len(phrase.text)}


def _describe(value: object) -> str | None:
    return None if value is None else str(value)


def _log_row(row: dict[str, Any], vocoder: str = "HiFi-GAN") -> None:
    log.info(
        "benchmark: batch %d, %s: mean %.4f s, p99 %.4f s per call (FastPitch %.4f s, %s %.4f s), "
        "%.1fx real time",
        row["batch_size"], row["precision_label"], row["latency_mean_s"], row["latency_p99_s"],
        row["fastpitch_latency_mean_s"], vocoder, row["vocoder_latency_mean_s"], row["x_real_time"],
    )  # fmt: skip


def _copy_synthesizers(
    args: argparse.Namespace, main: Synthesizer, options: SynthesisOptions, audio: AudioConfig, device: torch.device
) -> dict[str, tuple[Path, Synthesizer]]:
    """The vocoders measured on given mels, by name (``base`` when given, ``fine_tuned``): model file and
    a synthesizer with ``options`` (no denoiser, no fade-out: their raw audio is what is measured)."""
    from tts_pipeline.inference import Synthesizer

    vocoders = {}
    if args.hifigan_base is not None:
        base = Synthesizer.load(args.hifigan_base, None, options, audio=audio, device=device)
        vocoders["base"] = (args.hifigan_base, base)
    vocoders["fine_tuned"] = (args.hifigan, Synthesizer(main.vocoder, audio, options, device=device))
    return vocoders


def _product_floor(manifest: Path, audio: AudioConfig) -> dict[str, Any]:
    """The noise floor of the ``synthesize`` stage's WAVs listed in ``manifest`` (what a user gets)."""
    from tts_pipeline.audio import load_wav
    from tts_pipeline.benchmark.pauses import product_floor
    from tts_pipeline.benchmark.reference import read_inference_manifest

    sentences = read_inference_manifest(manifest)
    clips = [load_wav(sentence.wav, audio.sampling_rate, audio.max_wav_value) for sentence in sentences]
    return product_floor([sentence.name for sentence in sentences], clips, audio)


def _listening(
    args: argparse.Namespace,
    cfg: BenchmarkConfig,
    audio: AudioConfig,
    tts: dict[str, Synthesizer],
    vocoders: dict[str, Synthesizer],
) -> Any:
    """The intelligibility table, spectrogram figures and WAVs (:mod:`tts_pipeline.benchmark.listening`) on
    the first ``benchmark.intelligibility_clips`` held-out utterances (validation, then test); the closed
    set is every sentence of the train, validation and test manifests."""
    from tts_pipeline.benchmark.listening import Utterance, listening_test
    from tts_pipeline.data.feature_layout import FeatureLayout
    from tts_pipeline.data.manifest import manifest_path, read_manifest
    from tts_pipeline.errors import UserError

    splits = {}
    for split in ("train", "val", "test"):
        path = manifest_path(args.manifest_dir, split)
        splits[split] = read_manifest(path) if path.is_file() else []
    held_out = (splits["val"] + splits["test"])[: cfg.intelligibility_clips]
    if not held_out:
        raise UserError(f"benchmark: no validation or test utterance in {args.manifest_dir} to listen to")
    utterances = [
        Utterance(
            id=str(record["id"]),
            text=str(record["text"]),
            wav=Path(record["wav"]),
            mel=FeatureLayout(args.features_dir).mel(str(record["id"])),
        )
        for record in held_out
    ]
    for utterance in utterances:
        if not utterance.mel.is_file():
            raise UserError(f"utterance {utterance.id}: ground-truth mel not found: {utterance.mel}")
    closed_set = [str(record["text"]) for records in splits.values() for record in records]
    return listening_test(
        utterances, closed_set, audio, tts, vocoders, args.out_dir, cfg.n_figures, cfg.threads,
        recognise_rows=cfg.recognise,
    )  # fmt: skip
