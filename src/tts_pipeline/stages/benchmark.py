"""Benchmark the trained models: inference speed (NVIDIA's procedure), objective quality, training throughput.

Speed. For each batch size of ``benchmark.batch_sizes`` and each precision of ``benchmark.precisions``
the device runs (the CPU: fp32 only; a GPU: fp32 (labelled by its TF32 state), fp16 autocast, bf16
autocast where supported; skipped ones are listed with the reason), a batch of B copies of the
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
MCD-DTW, F0 RMSE, voicing error and duration ratio per sentence and averaged.

Training. The throughput each training stage reported, from ``--metrics name=path`` files
(:mod:`tts_pipeline.benchmark.training`; units in the report).

Writes ``<out-dir>/report.json`` (settings, device, PyTorch version, threads, every row, quality,
training throughput, skipped precisions, NVIDIA's published figures), then ``<out-dir>/report.md``
(the same as tables in NVIDIA's layout), each atomically. Under tracking, the headline figures and
both files go to MLflow.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import platform
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tts_pipeline.stages.common import add_section_argument, load_section, tracked

if TYPE_CHECKING:
    import torch

    from tts_pipeline.benchmark.inference import PrecisionChoice
    from tts_pipeline.benchmark.vocoder import MelSet
    from tts_pipeline.config import AudioConfig, BenchmarkConfig, PitchConfig
    from tts_pipeline.inference import SynthesisOptions, Synthesizer

log = logging.getLogger(__name__)

STAGE = "benchmark"
SECTION_KEYS = ("benchmark", "inference", "audio", "pitch")
VOICE_KEY = "corpus.demo"
"""The demo corpus's voice settings: required in ``--section`` with ``--reference espeak``."""
REPORT_JSON = "report.json"
REPORT_MD = "report.md"
REFERENCE_DESCRIPTIONS = {
    "espeak": "Reference: eSpeak NG speaking each text at the demo corpus's base voice (the centre of its "
    "per-utterance ranges), in the corpus's normalised form. MCD-DTW over 24 mel-cepstral coefficients; "
    "F0 RMSE over DTW-aligned frames voiced in both; voicing error = fraction of aligned frames whose "
    "voicing differs; duration ratio = synthesised / reference seconds.",
    "manifest": "Reference: the validation recording of the same utterance (the sentence is named by its id). "
    "MCD-DTW over 24 mel-cepstral coefficients; F0 RMSE over DTW-aligned frames voiced in both; voicing "
    "error = fraction of aligned frames whose voicing differs; duration ratio = synthesised / reference seconds.",
    "none": "No reference was chosen (--reference none): the synthesised sentences are not compared.",
}
MEL_L1_TARGET = (
    "Target: the ground-truth mel of each validation utterance (features stage). Each vocoder's raw output "
    "(no denoiser, no fade-out) is turned back into a log-mel with the pipeline's one mel function and "
    "compared frame by frame (mean absolute difference, unscaled; HiFi-GAN logs 45 x this on its loss mel)."
)
MEL_INPUTS = {"ground_truth": "ground-truth mel", "fastpitch": "FastPitch mel (teacher-forced)"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_section_argument(parser)
    parser.add_argument("--fastpitch", type=Path, required=True, help="FastPitch model.pt")
    parser.add_argument("--hifigan", type=Path, required=True, help="the fine-tuned HiFi-GAN model.pt (timed)")
    parser.add_argument("--hifigan-base", type=Path, default=None, help="the base HiFi-GAN model.pt (mel L1 only)")
    parser.add_argument("--manifest-dir", type=Path, required=True, help="folder of manifest.val.jsonl")
    parser.add_argument("--features-dir", type=Path, required=True, help="features folder with mels/<id>.npy")
    parser.add_argument(
        "--fastpitch-mels-dir", type=Path, default=None, help="teacher-forced FastPitch mels <id>.npy (optional)"
    )
    parser.add_argument(
        "--inference-manifest", type=Path, default=None, help="R/inference/manifest.jsonl (unless --reference none)"
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
    parser.add_argument("--gpus", type=int, default=None, help="0 = CPU, 1 = first visible GPU; default benchmark.gpus")


def run(args: argparse.Namespace) -> None:
    import torch

    from tts_pipeline.benchmark.document import headline_metrics, render_markdown
    from tts_pipeline.benchmark.inference import plan_precisions, speed_rows, tf32_flags
    from tts_pipeline.benchmark.nvidia import PUBLISHED
    from tts_pipeline.benchmark.report import LATENCY_NOTES, json_ready
    from tts_pipeline.benchmark.training import THROUGHPUT_UNITS, parse_metrics_argument, training_throughput
    from tts_pipeline.config import AudioConfig, BenchmarkConfig, InferenceConfig, PitchConfig, parse_section
    from tts_pipeline.devices import single_device
    from tts_pipeline.errors import UserError
    from tts_pipeline.files import write_json, write_text
    from tts_pipeline.inference import SynthesisOptions, Synthesizer, read_phrases

    payload = load_section(args, *SECTION_KEYS)
    cfg: BenchmarkConfig = parse_section(BenchmarkConfig, payload["benchmark"], "benchmark")
    inference_cfg: InferenceConfig = parse_section(InferenceConfig, payload["inference"], "inference")
    audio: AudioConfig = parse_section(AudioConfig, payload["audio"], "audio")
    pitch: PitchConfig = parse_section(PitchConfig, payload["pitch"], "pitch")
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
    main = Synthesizer.load(args.hifigan, args.fastpitch, speed_options, audio=audio, device=device)
    try:
        tokens = main.encode(phrase.text)
    except UserError as error:
        raise UserError(f"benchmark.phrases {phrases_path}:{phrase.line}: {error}") from None
    plan = plan_precisions(cfg.precisions, device)

    def synthesizer_for(choice: PrecisionChoice) -> Synthesizer:
        if choice.amp == main.precision.amp:
            return main
        return Synthesizer(
            main.vocoder, audio, speed_options, fastpitch=main.fastpitch, text_encoder=main.text_encoder,
            device=device, amp=choice.amp,
        )  # fmt: skip

    tags = {"device": str(device), "reference": args.reference}
    with tracked(STAGE, payload, dataset=args.manifest_dir.resolve().parent.name, tags=tags) as run_log:
        # Cheap parts first: bad inputs fail before the long timing sweep.
        training_rows = training_throughput(metrics_files)
        quality_options = SynthesisOptions(batch_size=inference_cfg.batch_size, fade_out_frames=0)
        vocoders = _copy_synthesizers(args, main, quality_options, audio, device)
        quality = {
            "vocoder_mel_l1": _vocoder_quality(args, cfg, vocoders, audio),
            "synthesized": _sentence_quality(args, payload, main, audio, pitch),
        }
        if cfg.intelligibility_clips > 0:
            tts = Synthesizer(
                main.vocoder, audio, SynthesisOptions.from_config(inference_cfg), fastpitch=main.fastpitch,
                text_encoder=main.text_encoder, device=device,
            )  # fmt: skip
            listening = _listening(args, cfg, audio, tts, {name: synth for name, (_, synth) in vocoders.items()})
            quality["intelligibility"] = listening.section
            for path in listening.figures:
                run_log.log_artifact(path, "figures")
            for path in listening.wavs:
                run_log.log_artifact(path, "audio")
        rows = speed_rows(
            synthesizer_for, plan, tokens, cfg.batch_sizes, warmup=cfg.warmup, repeats=cfg.repeats, on_row=_log_row
        )
        report: dict[str, Any] = {
            "environment": _environment(device, tf32_flags()),
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
            },
            "models": {
                "fastpitch": str(args.fastpitch),
                "hifigan": str(args.hifigan),
                "hifigan_base": _describe(args.hifigan_base),
            },
            "speed": {
                "rows": rows,
                "skipped_precisions": [item._asdict() for item in plan.skipped],
                "notes": LATENCY_NOTES,
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


def _environment(device: torch.device, tf32: dict[str, bool]) -> dict[str, Any]:
    import torch

    return {
        "device": str(device),
        "device_name": torch.cuda.get_device_name(device) if device.type == "cuda" else _cpu_name(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "threads": torch.get_num_threads(),
        "tf32": tf32,
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def _cpu_name() -> str:
    """The CPU model (Linux ``/proc/cpuinfo``), else what :mod:`platform` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "CPU"


def _phrase_info(phrase: Any) -> dict[str, Any]:
    return {"name": phrase.name, "text": phrase.text, "characters": len(phrase.text)}


def _describe(value: object) -> str | None:
    return None if value is None else str(value)


def _log_row(row: dict[str, Any]) -> None:
    log.info(
        "benchmark: batch %d, %s: mean %.4f s, p99 %.4f s per call (FastPitch %.4f s, HiFi-GAN %.4f s), "
        "%.1fx real time",
        row["batch_size"], row["precision_label"], row["latency_mean_s"], row["latency_p99_s"],
        row["fastpitch_latency_mean_s"], row["hifigan_latency_mean_s"], row["x_real_time"],
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


def _listening(
    args: argparse.Namespace,
    cfg: BenchmarkConfig,
    audio: AudioConfig,
    tts: Synthesizer,
    vocoders: dict[str, Synthesizer],
) -> Any:
    """The intelligibility table, spectrogram figures and WAVs (:mod:`tts_pipeline.benchmark.listening`) on
    the first ``benchmark.intelligibility_clips`` held-out utterances (validation, then test); the closed
    set is every sentence of the train, validation and test manifests."""
    from tts_pipeline.benchmark.listening import Utterance, listening_test
    from tts_pipeline.data.manifest import manifest_path, read_manifest
    from tts_pipeline.errors import UserError
    from tts_pipeline.features.layout import FeatureLayout

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
    return listening_test(utterances, closed_set, audio, tts, vocoders, args.out_dir, cfg.n_figures, cfg.threads)


def _vocoder_quality(
    args: argparse.Namespace,
    cfg: BenchmarkConfig,
    vocoders: dict[str, tuple[Path, Synthesizer]],
    audio: AudioConfig,
) -> dict[str, Any]:
    """Mel L1 rows of each vocoder on each kind of input mel (:mod:`tts_pipeline.benchmark.vocoder`)."""
    import numpy as np

    from tts_pipeline.benchmark.vocoder import load_mels, vocoder_mel_l1
    from tts_pipeline.data.manifest import manifest_path, read_manifest
    from tts_pipeline.errors import UserError
    from tts_pipeline.features.layout import FeatureLayout

    val_path = manifest_path(args.manifest_dir, "val")
    if not val_path.is_file():
        raise UserError(f"benchmark: validation manifest not found: {val_path}")
    ids = [str(record["id"]) for record in read_manifest(val_path)[: cfg.n_quality]]
    if not ids:
        raise UserError(f"benchmark: {val_path} lists no utterance to measure the vocoders on")
    n_mels = audio.n_mel_channels
    layout = FeatureLayout(args.features_dir)
    targets = load_mels(ids, [layout.mel(i) for i in ids], n_mels, "ground-truth mel")
    inputs: dict[str, MelSet] = {"ground_truth": targets}
    if args.fastpitch_mels_dir is not None:
        paths = [args.fastpitch_mels_dir / f"{i}.npy" for i in ids]
        inputs["fastpitch"] = load_mels(ids, paths, n_mels, "teacher-forced FastPitch mel")
    rows = []
    for key, (path, synth) in vocoders.items():
        name = key.replace("_", "-")
        for key, mels in inputs.items():
            losses = vocoder_mel_l1(synth, mels, targets)
            rows.append({
                "vocoder": name,
                "model": str(path),
                "input": MEL_INPUTS[key],
                "input_key": key,
                "utterances": len(losses),
                "mel_l1": float(np.mean(losses)),
                "mel_l1_per_utterance": dict(zip(ids, losses, strict=True)),
            })  # fmt: skip
            log.info(
                "benchmark: %s HiFi-GAN on %s: mel L1 %.4f over %d utterances",
                name, MEL_INPUTS[key], rows[-1]["mel_l1"], len(losses),
            )  # fmt: skip
    return {"target": MEL_L1_TARGET, "utterance_ids": ids, "rows": rows}


def _sentence_quality(
    args: argparse.Namespace, payload: dict[str, Any], main: Synthesizer, audio: AudioConfig, pitch: PitchConfig
) -> dict[str, Any]:
    """The synthesised sentences against their references (:mod:`tts_pipeline.benchmark.reference`)."""
    from tts_pipeline.benchmark.quality import SpeechQuality
    from tts_pipeline.benchmark.reference import (
        demo_base_voice,
        espeak_pairs,
        read_inference_manifest,
        recording_pairs,
        score_pairs,
    )
    from tts_pipeline.config import DemoCorpusConfig, parse_section
    from tts_pipeline.data.manifest import manifest_path, read_manifest

    result: dict[str, Any] = {"reference": args.reference, "description": REFERENCE_DESCRIPTIONS[args.reference]}
    if args.reference == "none":
        return {**result, "rows": [], "average": {}, "skipped": []}
    sentences = read_inference_manifest(args.inference_manifest)
    if args.reference == "espeak":
        demo: DemoCorpusConfig = parse_section(DemoCorpusConfig, payload[VOICE_KEY], VOICE_KEY)
        assert main.text_encoder is not None  # loaded with a FastPitch model
        pairs, skipped = espeak_pairs(sentences, audio, demo, main.text_encoder.clean)
        result["voice"] = {"name": demo.voice, **dataclasses.asdict(demo_base_voice(demo))}
    else:
        pairs, skipped = recording_pairs(sentences, read_manifest(manifest_path(args.manifest_dir, "val")), audio)
    scores = score_pairs(SpeechQuality(audio, pitch), pairs)
    if scores.average:
        log.info(
            "benchmark: %d sentences against %s: MCD-DTW %.2f dB, F0 RMSE %.1f Hz, voicing error %.1f%%, "
            "duration ratio %.3f",
            scores.average["utterances"], args.reference, scores.average["mcd_db"], scores.average["f0_rmse_hz"],
            100 * scores.average["voicing_error"], scores.average["total_duration_ratio"],
        )  # fmt: skip
    return {
        **result,
        "rows": scores.rows,
        "average": scores.average,
        "skipped": [item._asdict() for item in [*skipped, *scores.skipped]],
    }
