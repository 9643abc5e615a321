"""The benchmark stage's work, in the order it runs: load the models, measure quality (cheap parts
first, so that bad inputs fail before the long timing sweep), time inference, assemble the report.

The stage (:mod:`tts_pipeline.stages.benchmark`) parses its sections and arguments into
:class:`BenchmarkInputs` and calls :func:`run_benchmark`; what each part measures is documented there
and in the modules named below.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tts_pipeline.benchmark import other_acoustic_models
from tts_pipeline.benchmark.environment import environment
from tts_pipeline.benchmark.inference import PrecisionPlan, plan_precisions, speed_rows, tf32_flags
from tts_pipeline.benchmark.nvidia import PUBLISHED
from tts_pipeline.benchmark.other_acoustic_models import AcousticModelFile
from tts_pipeline.benchmark.other_vocoders import VocoderFile, other_kinds, speed_key, tts_row, vocoder_settings
from tts_pipeline.benchmark.pauses import pause_section
from tts_pipeline.benchmark.pitch_fidelity import pitch_section
from tts_pipeline.benchmark.precision_quality import PRECISION_NOTE, precision_quality
from tts_pipeline.benchmark.reference import sentence_quality
from tts_pipeline.benchmark.report import LATENCY_NOTES, json_ready
from tts_pipeline.benchmark.training import THROUGHPUT_UNITS, training_throughput
from tts_pipeline.benchmark.vocoder import validation_set, vocoder_quality
from tts_pipeline.config import (
    AudioConfig,
    BenchmarkConfig,
    DemoCorpusConfig,
    InferenceConfig,
    PitchConfig,
    TextConfig,
    model_kinds,
)
from tts_pipeline.errors import UserError
from tts_pipeline.inference import Phrase, SynthesisOptions, Synthesizer

if TYPE_CHECKING:
    import torch

    from tts_pipeline.benchmark.inference import PrecisionChoice

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BenchmarkSections:
    """The config the benchmark reads, parsed (``demo``: the demo corpus's voice, for ``--reference espeak``)."""

    benchmark: BenchmarkConfig
    inference: InferenceConfig
    audio: AudioConfig
    pitch: PitchConfig
    text: TextConfig
    demo: DemoCorpusConfig | None


@dataclass(frozen=True)
class BenchmarkInputs:
    """The files the benchmark reads (the stage's arguments) and the folder it writes figures into."""

    manifest_dir: Path
    features_dir: Path
    fastpitch: Path
    hifigan: Path
    hifigan_base: Path | None
    fastpitch_mels_dir: Path | None
    inference_manifest: Path | None
    reference: str
    metrics: list[tuple[str, Path]]
    other_vocoders: list[VocoderFile]
    phrases_path: Path
    phrase: Phrase
    out_dir: Path
    other_acoustic_models: list[AcousticModelFile] = dataclasses.field(default_factory=list)


@dataclass
class LoadedModels:
    """The synthesizers every part uses: ``main`` (FastPitch + the fine-tuned HiFi-GAN, with the speed
    options), each other vocoder alone by kind, each other acoustic model with the fine-tuned HiFi-GAN
    by kind (and its symbols of the timed phrase), and the timed phrase's symbols."""

    main: Synthesizer
    others: dict[str, Synthesizer]
    speed_options: SynthesisOptions
    tokens: Any
    plan: PrecisionPlan
    acoustic: dict[str, Synthesizer] = dataclasses.field(default_factory=dict)
    acoustic_tokens: dict[str, Any] = dataclasses.field(default_factory=dict)


def load_models(inputs: BenchmarkInputs, sections: BenchmarkSections, device: torch.device) -> LoadedModels:
    speed_options = dataclasses.replace(
        SynthesisOptions.from_config(sections.inference, vocoder_batching="padded"),
        denoising_strength=sections.benchmark.denoising_strength,
    )
    main = Synthesizer.load(
        inputs.fastpitch, inputs.hifigan, speed_options, audio=sections.audio, text=sections.text, device=device
    )
    try:
        tokens = main.encode(inputs.phrase.text)
    except UserError as error:
        raise UserError(f"benchmark.phrases {inputs.phrases_path}:{inputs.phrase.line}: {error}") from None
    plan = plan_precisions(sections.benchmark.precisions, device)
    # Each other vocoder, vocoder-only; FastPitch's model speaks through it (with_options' vocoder_from).
    others = {
        item.kind.name: Synthesizer.load(
            None, item.path, speed_options, vocoder_kind=item.kind.name, audio=sections.audio, device=device
        )
        for item in inputs.other_vocoders
    }
    acoustic, acoustic_tokens = {}, {}
    for item in inputs.other_acoustic_models:
        synth = main.with_acoustic_model(item.kind.name, item.path, speed_options, text=sections.text)
        acoustic[item.kind.name] = synth
        try:
            acoustic_tokens[item.kind.name] = synth.encode(inputs.phrase.text)
        except UserError as error:
            raise UserError(f"benchmark.phrases {inputs.phrases_path}:{inputs.phrase.line}: {error}") from None
    return LoadedModels(main, others, speed_options, tokens, plan, acoustic, acoustic_tokens)


def run_benchmark(
    inputs: BenchmarkInputs,
    sections: BenchmarkSections,
    models: LoadedModels,
    device: torch.device,
    log_artifact: Callable[[Path, str], None],
) -> dict[str, Any]:
    """Every measurement, then the report (JSON-ready). ``log_artifact(path, folder)`` receives the
    listening test's figures and WAVs as they are written."""
    cfg, audio, inference_cfg = sections.benchmark, sections.audio, sections.inference
    main, others, plan = models.main, models.others, models.plan
    # What synthesis runs at inference.amp: with auto on a CPU, the paths measured (or cached) for these models.
    chosen = main.with_options(models.speed_options, inference_cfg.amp)
    training_rows = training_throughput(inputs.metrics)
    quality_options = SynthesisOptions(batch_size=inference_cfg.batch_size, fade_out_frames=0)
    vocoders = _copy_synthesizers(inputs, main, quality_options, audio, device)
    for item in inputs.other_vocoders:
        vocoders[item.kind.name] = (item.path, others[item.kind.name].vocoder_only(quality_options))
    validation = validation_set(inputs.manifest_dir, inputs.features_dir, cfg.n_quality, audio.n_mel_channels)

    faster = plan.judged_against_fp32()
    quality = {
        "vocoder_mel_l1": vocoder_quality(validation, inputs.fastpitch_mels_dir, vocoders, audio.n_mel_channels),
        "precision": {
            "note": PRECISION_NOTE,
            "rows": precision_quality(
                main.with_options(quality_options),
                {choice.name: main.with_options(quality_options, choice.amp) for choice in faster},
                validation.targets, validation.texts,
            ),
        },
        "synthesized": sentence_quality(
            inputs.reference, inputs.inference_manifest, inputs.manifest_dir, sections.demo,
            main.text_encoder.clean if main.text_encoder is not None else None, audio, sections.pitch,
        ),
    }  # fmt: skip
    pause_rows, pitch_rows, pause_ids = [], [], []
    if cfg.intelligibility_clips > 0:
        # What a user hears: every neural row at inference.amp, as `synthesize` runs the models.
        product_amp = inference_cfg.amp
        tts_options = SynthesisOptions.from_config(inference_cfg)
        tts = {"tts": main.with_options(tts_options, product_amp)}
        # every voice of a multi-speaker FastPitch, through the vocoder synthesis uses
        tts |= _speaker_synthesizers(
            inputs.fastpitch, others.get(inference_cfg.vocoder, main), tts_options, product_amp, sections
        )
        for item in inputs.other_vocoders:
            tts[tts_row(item.kind)] = main.with_options(tts_options, product_amp, vocoder_from=others[item.kind.name])
        for acoustic in inputs.other_acoustic_models:
            speaker = models.acoustic[acoustic.kind.name]
            tts[other_acoustic_models.tts_row(acoustic.kind)] = speaker.with_options(tts_options, product_amp)
            for item in inputs.other_vocoders:
                tts[other_acoustic_models.tts_row(acoustic.kind, item.kind)] = speaker.with_options(
                    tts_options, product_amp, vocoder_from=others[item.kind.name]
                )
        copy = {name: synth.with_options(quality_options, product_amp) for name, (_, synth) in vocoders.items()}
        listening = _listening(inputs, cfg, audio, tts, copy)
        quality["intelligibility"] = listening.section
        pause_rows, pitch_rows, pause_ids = listening.pauses, listening.pitch, listening.section["utterance_ids"]
        for path in listening.figures:
            log_artifact(path, "figures")
        for path in listening.wavs:
            log_artifact(path, "audio")
    product = _product_floor(inputs.inference_manifest, audio) if inputs.inference_manifest is not None else None
    quality["pauses"] = pause_section(pause_rows, product, pause_ids)
    for finding in quality["pauses"]["findings"]:
        log.warning("benchmark: %s", finding)
    quality["pitch"] = pitch_section(pitch_rows, pause_ids, audio)
    for finding in quality["pitch"]["findings"]:
        log.warning("benchmark: %s", finding)

    speed_options, tokens = models.speed_options, models.tokens

    def synthesizer_for(choice: PrecisionChoice) -> Synthesizer:
        return main if choice.amp == main.precision.amp else main.with_options(speed_options, choice.amp)

    rows = speed_rows(
        synthesizer_for, plan, tokens, cfg.batch_sizes, warmup=cfg.warmup, repeats=cfg.repeats, on_row=_log_row
    )
    other_speed = {}
    for item in inputs.other_vocoders:
        other = others[item.kind.name]
        other_speed[speed_key(item.kind)] = speed_rows(
            lambda choice, other=other: main.with_options(speed_options, choice.amp, vocoder_from=other),
            plan, tokens, cfg.batch_sizes, warmup=cfg.warmup, repeats=cfg.repeats,
            on_row=lambda row, label=item.kind.label: _log_row(row, label),
        )  # fmt: skip
    # each other acoustic model with the vocoder synthesis uses (NVIDIA's pairs: Tacotron 2 + WaveGlow)
    synthesis_vocoder = others.get(inference_cfg.vocoder)
    acoustic_speed = {}
    for acoustic in inputs.other_acoustic_models:
        speaker = models.acoustic[acoustic.kind.name]
        acoustic_speed[other_acoustic_models.speed_key(acoustic.kind)] = speed_rows(
            lambda choice, speaker=speaker: speaker.with_options(
                speed_options, choice.amp, vocoder_from=synthesis_vocoder
            ),
            plan, models.acoustic_tokens[acoustic.kind.name], cfg.batch_sizes, warmup=cfg.warmup,
            repeats=cfg.repeats, on_row=lambda row, label=acoustic.kind.label: _log_row(row, acoustic=label),
        )  # fmt: skip
    benchmarked = {item.kind.name: item.path for item in inputs.other_vocoders}
    acoustic_files = {item.kind.name: item.path for item in inputs.other_acoustic_models}
    report: dict[str, Any] = {
        "environment": environment(device, tf32_flags()),
        "settings": {
            "benchmark": cfg.model_dump(mode="json"),
            "phrase": {**_phrase_info(inputs.phrase), "tokens": len(tokens)},
            "warmup": cfg.warmup,
            "repeats": cfg.repeats,
            "pace": speed_options.pace,
            "pitch_transform": _describe(speed_options.pitch_transform),
            "denoising_strength": speed_options.denoising_strength,
            "vocoder_batching": speed_options.vocoder_batching,
            "reference": inputs.reference,
            "inference_precision": {
                "amp": inference_cfg.amp,
                "precision": chosen.precision.label,
                "reason": chosen.precision.reason,
                "auto": [choice.as_dict() for choice in chosen.auto_choices],
            },
            **vocoder_settings(inference_cfg.model_dump(), benchmarked),
            **other_acoustic_models.settings_of(inference_cfg.model_dump(), acoustic_files),
            "acoustic_models_vocoder": model_kinds.vocoder_kind(inference_cfg.vocoder).label,
        },
        "models": {
            "fastpitch": str(inputs.fastpitch),
            "hifigan": str(inputs.hifigan),
            "hifigan_base": _describe(inputs.hifigan_base),
            **{kind.name: _describe(benchmarked.get(kind.name)) for kind in other_kinds()},
            **{kind.name: _describe(acoustic_files.get(kind.name)) for kind in other_acoustic_models.other_kinds()},
        },
        "speed": {
            "rows": rows,
            "skipped_precisions": [item._asdict() for item in plan.skipped],
            "notes": LATENCY_NOTES,
            **{speed_key(kind): other_speed.get(speed_key(kind), []) for kind in other_kinds()},
            **{
                other_acoustic_models.speed_key(kind): acoustic_speed.get(other_acoustic_models.speed_key(kind), [])
                for kind in other_acoustic_models.other_kinds()
            },
        },
        "quality": quality,
        "training": {"units": THROUGHPUT_UNITS, "rows": training_rows},
        "nvidia": {"published": list(PUBLISHED), "published_acoustic_models": other_acoustic_models.published()},
    }
    return json_ready(report)


def _phrase_info(phrase: Any) -> dict[str, Any]:
    return {"name": phrase.name, "text": phrase.text, "characters": len(phrase.text)}


def _describe(value: object) -> str | None:
    return None if value is None else str(value)


def _log_row(row: dict[str, Any], vocoder: str = "HiFi-GAN", acoustic: str = "FastPitch") -> None:
    log.info(
        "benchmark: batch %d, %s: mean %.4f s, p99 %.4f s per call (%s %.4f s, %s %.4f s), %.1fx real time",
        row["batch_size"], row["precision_label"], row["latency_mean_s"], row["latency_p99_s"],
        acoustic, row["fastpitch_latency_mean_s"], vocoder, row["vocoder_latency_mean_s"], row["x_real_time"],
    )  # fmt: skip


def _copy_synthesizers(
    inputs: BenchmarkInputs, main: Synthesizer, options: SynthesisOptions, audio: AudioConfig, device: torch.device
) -> dict[str, tuple[Path, Synthesizer]]:
    """The vocoders measured on given mels, by name (``base`` when given, ``fine_tuned``): model file and
    a synthesizer with ``options`` (no denoiser, no fade-out: their raw audio is what is measured)."""
    vocoders = {}
    if inputs.hifigan_base is not None:
        base = Synthesizer.load(None, inputs.hifigan_base, options, audio=audio, device=device)
        vocoders["base"] = (inputs.hifigan_base, base)
    vocoders["fine_tuned"] = (inputs.hifigan, main.vocoder_only(options))
    return vocoders


def _speaker_synthesizers(
    fastpitch: Path, vocoder: Synthesizer, options: SynthesisOptions, amp: str, sections: BenchmarkSections
) -> dict[str, Synthesizer]:
    """The intelligibility table's row of each speaker of a multi-speaker FastPitch, by row name
    (:func:`tts_pipeline.benchmark.listening.speaker_row`): its model file loaded again speaking as that
    speaker (``options`` with ``inference.speaker`` set to it), with ``vocoder``'s vocoder, ``options``
    and ``amp``. The ``tts`` row judges one voice, ``inference.speaker``'s; these judge them all. A
    single-speaker model gets none (its one voice is the ``tts`` row), so its benchmark takes no longer."""
    from tts_pipeline.benchmark.listening import speaker_row
    from tts_pipeline.config.model_kinds import PIPELINE_ACOUSTIC_MODEL
    from tts_pipeline.inference import fastpitch_acoustic

    speakers = fastpitch_acoustic.voices(fastpitch, audio=sections.audio, text=sections.text)
    if len(speakers) < 2:
        return {}
    return {
        speaker_row(speaker): vocoder.with_acoustic_model(
            PIPELINE_ACOUSTIC_MODEL, fastpitch, options.speaking_as(speaker), amp, text=sections.text
        )
        for speaker in speakers
    }


def _product_floor(manifest: Path, audio: AudioConfig) -> dict[str, Any]:
    """The noise floor of the ``synthesize`` stage's WAVs listed in ``manifest`` (what a user gets)."""
    from tts_pipeline.audio import load_wav
    from tts_pipeline.benchmark.pauses import product_floor
    from tts_pipeline.benchmark.reference import read_inference_manifest

    sentences = read_inference_manifest(manifest)
    clips = [load_wav(sentence.wav, audio.sampling_rate, audio.max_wav_value) for sentence in sentences]
    return product_floor([sentence.name for sentence in sentences], clips, audio)


def _listening(
    inputs: BenchmarkInputs,
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

    splits = {}
    for split in ("train", "val", "test"):
        path = manifest_path(inputs.manifest_dir, split)
        splits[split] = read_manifest(path) if path.is_file() else []
    held_out = (splits["val"] + splits["test"])[: cfg.intelligibility_clips]
    if not held_out:
        raise UserError(f"benchmark: no validation or test utterance in {inputs.manifest_dir} to listen to")
    utterances = [
        Utterance(
            id=record.id,
            text=record.text,
            wav=Path(record.wav),
            mel=FeatureLayout(inputs.features_dir).mel(record.id),
        )
        for record in held_out
    ]
    for utterance in utterances:
        if not utterance.mel.is_file():
            raise UserError(f"utterance {utterance.id}: ground-truth mel not found: {utterance.mel}")
    closed_set = [record.text for records in splits.values() for record in records]
    return listening_test(
        utterances, closed_set, audio, tts, vocoders, inputs.out_dir, cfg.n_figures, cfg.threads,
        recognise_rows=cfg.recognise, open_clips=cfg.open_decode_clips,
    )  # fmt: skip
