"""``report.md``: the benchmark report's JSON rendered as Markdown, in the layout of NVIDIA's published
inference tables (:mod:`tts_pipeline.benchmark.report`), with quality and training tables after it.

The Markdown is made from the same dict that ``report.json`` holds (keys documented at
:func:`render_markdown`), so the two files never disagree.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from tts_pipeline.benchmark import other_acoustic_models, other_vocoders
from tts_pipeline.benchmark.intelligibility import percent_with_error
from tts_pipeline.benchmark.report import (
    BENCHMARK_COLUMNS,
    LATENCY_NOTES,
    PUBLISHED_COLUMNS,
    QUALITY_COLUMNS,
    Column,
    component_columns,
    render_table,
)
from tts_pipeline.inference.precision_choice import FASTER_BY, MIN_SNR_DB, PathChoice

SPEED_COLUMNS: tuple[Column, ...] = (
    *(Column(c.header, "precision_label") if c.key == "precision" else c for c in BENCHMARK_COLUMNS),
    Column("RTF (compute / audio)", "rtf", ".4f"),
)
"""NVIDIA's columns (precision as labelled, see :mod:`tts_pipeline.benchmark.inference`) plus the usual RTF."""

COMPONENTS = ("fastpitch", "vocoder")
"""The models a speed row times apart (``{component}_latency_mean_s``, ...; see
:meth:`tts_pipeline.inference.Synthesizer.run_batch`): ``vocoder`` is whichever vocoder the section timed."""

HIFIGAN_NAMES = {"vocoder": "hifigan"}
"""A component's name in the main speed section's headers and in the tracker's metric names, where it
differs: that section's vocoder is HiFi-GAN, and its metrics keep the names earlier runs logged."""

VOCODER_COLUMNS: tuple[Column, ...] = (
    Column("Vocoder", "vocoder"),
    Column("Input mel", "input"),
    Column("Utterances", "utterances", "d"),
    Column("Mel L1", "mel_l1", ".4f"),
)

PRECISION_COLUMNS: tuple[Column, ...] = (
    Column("Precision", "precision"),
    Column("Utterances", "utterances", "d"),
    Column("Vocoder SNR vs fp32 (dB, median)", "vocoder_snr_db", ".1f"),
    Column("Vocoder SNR (dB, min)", "vocoder_snr_db_min", ".1f"),
    Column("Vocoder mel L1", "vocoder_mel_l1", ".4f"),
    Column("Vocoder mel L1, fp32", "vocoder_mel_l1_fp32", ".4f"),
    Column("FastPitch same length", "fastpitch_same_length", ".0%"),
    Column("FastPitch mel L1 vs fp32", "fastpitch_mel_l1", ".4f"),
)
"""What each faster precision costs (:mod:`tts_pipeline.benchmark.precision_quality`)."""

SENTENCE_COLUMNS: tuple[Column, ...] = (
    Column("Sentence", "name"),
    *(c for c in QUALITY_COLUMNS if c.key != "utterances"),
)
"""Quality per sentence; the last row is the mean, named with the sentence count."""

INTELLIGIBILITY_COLUMNS: tuple[Column, ...] = (
    Column("Audio", "description"),
    Column("Closed-set sentences (± SE)", "closed_sentence_accuracy"),
    Column("Closed-set WER", "closed_wer", ".1%"),
    Column("Closed-set CER", "closed_cer", ".1%"),
    Column("Open WER", "open_wer", ".1%"),
    Column("Open CER", "open_cer", ".1%"),
)
"""One row per kind of audio; sentence accuracy = clips whose words were all recognised, in order, with its
binomial standard error (a text cell, ``88 % ± 7``)."""

PAUSE_COLUMNS: tuple[Column, ...] = (
    Column("Audio", "description"),
    Column("Pause level (dB re speech, median)", "pause_level_db", ".1f"),
    Column("Q1", "pause_level_db_q1", ".1f"),
    Column("Q3", "pause_level_db_q3", ".1f"),
    Column("Sentences with a pause", "measured"),
    Column("Above Griffin-Lim (dB)", "above_griffin_lim_db", "+.1f"),
    Column("Noise floor (dB, median)", "noise_floor_db", ".1f"),
    Column("Flag", "flag"),
)
"""One row per kind of audio (:mod:`tts_pipeline.benchmark.pauses`), then the synthesised WAVs' floor."""

PITCH_COLUMNS: tuple[Column, ...] = (
    Column("Audio", "description"),
    Column("Pitch followed", "followed", ".0%"),
    Column("Voiced with the recording", "both_voiced", ".0%"),
    Column("Voiced where the recording is not", "voiced_where_unvoiced", ".0%"),
    Column("Median error (cents)", "median_error_cents", ".0f"),
    Column("Locked to the frame rate", "locked", ".0%"),
    Column("Voiced frames", "voiced_frames", "d"),
    Column("Flag", "flag"),
)
"""One row per kind of audio (:mod:`tts_pipeline.benchmark.pitch_fidelity`); rows not aligned with the
recording (full TTS) have only the lock figure."""

TRAINING_COLUMNS: tuple[Column, ...] = (
    Column("Stage", "stage"),
    Column("Mel frames/s", "frames_per_s", ",.0f"),
    Column("NVIDIA frames/s", "frames_per_s_nvidia_units", ",.0f"),
    Column("Steps/s", "steps_per_s", ".3f"),
    Column("Device", "device"),
    Column("Processes", "world_size", "d"),
    Column("AMP", "amp"),
    Column("Global batch", "global_batch_size", "d"),
)

NVIDIA_NOTE = (
    "NVIDIA's figures come from an A100 80 GB GPU with TorchScript, their trained LJSpeech models and "
    "the same 128-character sentence; ours come from the device named above, this run's models and "
    "PyTorch eager mode. Different devices and software: the numbers sit side by side for orientation, "
    "not as a like-for-like comparison."
)


def _published_rows(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """NVIDIA's published rows, then ours at the batch sizes they publish."""
    published = list(report["nvidia"]["published"])
    sizes = {row["batch_size"] for row in published}
    device = report["environment"]["device_name"]
    ours = [
        {**row, "precision": row["precision_label"], "source": f"this run ({device})"}
        for row in report["speed"]["rows"]
        if row["batch_size"] in sizes
    ]
    return [*published, *ours]


def _speed_section(report: Mapping[str, Any]) -> list[str]:
    speed, settings, env = report["speed"], report["settings"], report["environment"]
    phrase = settings["phrase"]
    lines = [
        "## Inference speed: FastPitch + HiFi-GAN",
        "",
        f"Phrase {phrase['name']!r} ({phrase['characters']} characters, {phrase['tokens']} symbols): "
        f"warm-up calls {settings['warmup']}, then timed calls {settings['repeats']} per row; batch = B copies "
        f"of the phrase; pace {settings['pace']:g}, denoising strength {settings['denoising_strength']:g}.",
        "",
    ]
    chosen = settings.get("inference_precision")
    if chosen:
        lines += [
            f"What `synthesize` runs (inference.amp = {chosen['amp']}): {chosen['precision']} ({chosen['reason']}).",
            "",
        ]
        choices = [PathChoice.from_dict(record, cached=record["cached"]) for record in chosen.get("auto", [])]
        if choices:
            lines += [
                "`auto` chose by these figures (median seconds per call on a short probe; SNR of the output "
                f"against plain fp32, at least {MIN_SNR_DB:g} dB; at most {FASTER_BY:g} x plain fp32's time):",
                "",
                *(f"- {choice.describe()}" for choice in choices),
                "",
            ]
    if speed["rows"]:
        lines += [render_table(speed["rows"], SPEED_COLUMNS), LATENCY_NOTES, ""]
        per_model = component_columns(COMPONENTS, HIFIGAN_NAMES)
        lines += ["Per model (seconds per call):", "", render_table(speed["rows"], per_model)]
    else:
        lines += ["No precision could run on this device.", ""]
    if speed["skipped_precisions"]:
        lines += ["Precisions skipped:", ""]
        lines += [f"- {item['precision']}: {item['reason']}" for item in speed["skipped_precisions"]]
        lines.append("")
    tf32 = env.get("tf32") or {}
    if env["device"].startswith("cuda"):
        lines += [
            f"TF32 switches during the run: matmul {tf32.get('cuda_matmul')}, cuDNN {tf32.get('cudnn')} "
            "(the precision label says what float32 work ran as).",
            "",
        ]
    lines += [
        "### NVIDIA's published figures beside ours",
        "",
        render_table(_published_rows(report), PUBLISHED_COLUMNS),
    ]
    lines += [NVIDIA_NOTE, ""]
    return lines


def _quality_section(report: Mapping[str, Any]) -> list[str]:
    quality = report["quality"]
    lines = ["## Quality", ""]
    vocoder = quality.get("vocoder_mel_l1")
    if vocoder:
        lines += ["### Vocoder mel L1", "", render_table(vocoder["rows"], VOCODER_COLUMNS), vocoder["target"], ""]
    precision = quality.get("precision") or {}
    if precision.get("rows"):
        lines += ["### Faster precisions against fp32", "", render_table(precision["rows"], PRECISION_COLUMNS)]
        lines += [precision["note"], ""]
    synthesized = quality.get("synthesized") or {}
    lines += [f"### Synthesised sentences against a reference ({synthesized.get('reference', 'none')})", ""]
    rows = synthesized.get("rows") or []
    if rows:
        average = {**synthesized["average"], "name": f"mean of {synthesized['average']['utterances']}"}
        lines += [render_table([*rows, average], SENTENCE_COLUMNS), synthesized["description"], ""]
        ratio = average["total_duration_ratio"]
        lines += [f"Total duration ratio (all synthesised / all reference seconds): {ratio:.3f}", ""]
    else:
        lines += [synthesized.get("description", "No reference: no comparison."), ""]
    skipped = synthesized.get("skipped") or []
    if skipped:
        lines += ["Sentences not compared:", ""]
        lines += [f"- {item['name']}: {item['reason']}" for item in skipped]
        lines.append("")
    intelligibility = quality.get("intelligibility")
    if intelligibility:
        lines += intelligibility_markdown(intelligibility)
    pauses = quality.get("pauses")
    if pauses and (pauses["rows"] or pauses["product"]):
        lines += pauses_markdown(pauses)
    pitch = quality.get("pitch")
    if pitch and pitch["rows"]:
        lines += pitch_markdown(pitch)
    return lines


def intelligibility_markdown(section: Mapping[str, Any]) -> list[str]:
    """The intelligibility table (``report.json``'s ``quality.intelligibility``) as Markdown lines, the
    findings in words first."""
    n_clips = len(section["utterance_ids"])
    if not section.get("recognised", True):
        return [
            f"### Intelligibility: not measured here ({n_clips} held-out sentences synthesised, not recognised)",
            "",
            "`benchmark.recognise` is false: the rows' pauses are measured below and their spectrograms and WAVs "
            "are in the report, but no recogniser heard them.",
            "",
        ]
    lines = [f"### Intelligibility: what a speech recogniser hears ({n_clips} held-out sentences)", ""]
    findings = section["findings"] or [
        "Every row is recognised as speech, and no neural vocoder is below Griffin-Lim on the same mels."
    ]
    lines += [f"- **{finding}**" for finding in findings]
    lines.append("")
    figures = ("wer", "cer")
    table = [
        {
            "description": row["description"],
            "closed_sentence_accuracy": percent_with_error(
                row["closed"]["sentence_accuracy"], row["closed"]["sentence_accuracy_se"]
            ),
            **{f"{d}_{key}": (row.get(d) or {}).get(key) for d in ("closed", "open") for key in figures},
        }
        for row in section["rows"]
    ]
    lines += [render_table(table, INTELLIGIBILITY_COLUMNS), ""]
    # Clips whose reference has no word the recogniser knows are not scored: n can be below n_clips.
    n_scored = section["rows"][0]["closed"]["clips"] if section["rows"] else n_clips
    unknown = section["unknown_words"]
    lines += [
        f"Recogniser: {section['recogniser']}. Closed set: {section['decodes']['closed']}; open: "
        f"{section['decodes']['open']}. Griffin-Lim rows are the reference points: a neural vocoder should "
        "be at least as intelligible as Griffin-Lim on the same mels, and the recordings bound every row. "
        "The open decode is strict (the stock model knows read American English, not this corpus's voice); "
        f"the closed set tells speech from noise. ±: the binomial standard error sqrt(p(1-p)/n) over the "
        f"n = {n_scored} sentences scored; two rows differ only where their gap exceeds the error of the "
        "difference, sqrt(se1² + se2²). WER and CER are pooled over words and characters (insertions can "
        "take them above 100 %) and carry no error: the words of one sentence are not independent trials.",
        "",
        f"Words the recogniser's dictionary lacks, left out of references and grammar: {len(unknown)}"
        + (f" ({', '.join(sorted(set(unknown)))})" if unknown else "")
        + ".",
        "",
    ]
    for example in section.get("examples", []):
        lines += [f"Spectrograms of {example['id']} side by side: `{example['figure']}`", ""]
    return lines


def pauses_markdown(section: Mapping[str, Any]) -> list[str]:
    """The pause table (``report.json``'s ``quality.pauses``) as Markdown lines, the flags in words first;
    the caption states the definitions and the limits."""
    limits = section["limits"]
    lines = ["### Pauses and noise floor: is there a sound where the speech stops?", ""]
    findings = section["findings"] or [
        f"No vocoder row's pauses are above {limits['pause_level_db']:g} dB (or far above Griffin-Lim's on the "
        f"same mels), and no synthesised WAV's noise floor is above {limits['noise_floor_db']:g} dB."
    ]
    lines += [f"- **{finding}**" for finding in findings]
    lines.append("")
    table = [{**row, "measured": f"{row['measured']} of {row['utterances']}"} for row in section["rows"]]
    product = section["product"]
    if product is not None:
        # No pause level (these WAVs have no mel beside them): the other cells stay empty.
        table.append({
            **dict.fromkeys(column.key for column in PAUSE_COLUMNS),
            "description": f"Synthesised WAVs (`synthesize`, {product['wavs']} phrases: what a user gets)",
            "noise_floor_db": product["noise_floor_db"],
            "flag": product["flag"],
        })  # fmt: skip
    lines += [
        render_table(table, PAUSE_COLUMNS),
        f"{section['definition']} Quiet enough: pauses at most {limits['pause_level_db']:g} dB (median over the "
        f"sentences) for copy synthesis and full TTS; the synthesised WAVs' noise floor at most "
        f"{limits['noise_floor_db']:g} dB. The recordings and Griffin-Lim rows are reference points, never flagged.",
        "",
    ]
    return lines


def pitch_markdown(section: Mapping[str, Any]) -> list[str]:
    """The pitch table (``report.json``'s ``quality.pitch``) as Markdown lines, the flags in words first;
    the caption says how to read it and states the definitions and the limits."""
    n_clips = len(section["utterance_ids"])
    lines = [f"### Pitch: does the audio follow the voice, or buzz at the frame rate? ({n_clips} held-out sentences)",
             ""]  # fmt: skip
    limits = section["limits"]
    findings = section["findings"] or [
        f"No vocoder row has more than {100 * limits['locked']:.0f} % of its voiced frames locked to the frame "
        f"rate ({section['frame_rate_hz']:.2f} Hz), and no copy-synthesis row follows the recordings' pitch more "
        f"than {100 * limits['below_griffin_lim']:.0f} points less than Griffin-Lim on the same mels."
    ]
    lines += [f"- **{finding}**" for finding in findings]
    lines += ["", render_table(section["rows"], PITCH_COLUMNS), section["how_to_read"], "", section["definition"], ""]
    return lines


def _training_section(report: Mapping[str, Any]) -> list[str]:
    training = report["training"]
    lines = ["## Training throughput", ""]
    if not training["rows"]:
        return [*lines, "No training metrics were given.", ""]
    lines += [render_table(training["rows"], TRAINING_COLUMNS)]
    lines += [f"- `{key}`: {unit}" for key, unit in training["units"].items()]
    return [*lines, ""]


def render_markdown(report: Mapping[str, Any]) -> str:
    """The Markdown document of a benchmark report.

    Reads ``environment`` (``device``, ``device_name``, ``torch``, ``threads``, ``tf32``), ``settings``
    (``phrase`` with ``name``/``characters``/``tokens``, ``warmup``, ``repeats``, ``pace``,
    ``denoising_strength``), ``speed`` (``rows``, ``skipped_precisions``), ``nvidia.published``,
    ``quality`` (``vocoder_mel_l1`` with ``rows`` and ``target``; ``precision`` with ``rows`` and
    ``note``; ``synthesized`` with ``reference``,
    ``description``, ``rows``, ``average``, ``skipped``; optionally ``intelligibility``, ``pauses``
    (:func:`pauses_markdown`) and ``pitch`` (:func:`pitch_markdown`)) and ``training`` (``rows``, ``units``).
    """
    env = report["environment"]
    header = [
        "# Inference benchmark and quality",
        "",
        f"Device: {env['device_name']} ({env['device']}); PyTorch {env['torch']}; CPU threads: {env['threads']}.",
        "",
    ]
    others = [
        *other_vocoders.speed_markdown(report, SPEED_COLUMNS, LATENCY_NOTES),
        *other_acoustic_models.speed_markdown(report, SPEED_COLUMNS, LATENCY_NOTES),
    ]
    return "\n".join([*header, *_speed_section(report), *others, *_quality_section(report), *_training_section(report)])


def headline_metrics(report: Mapping[str, Any]) -> dict[str, float]:
    """Flat figures for the tracker: per speed row, the vocoders' mel L1, the intelligibility, pause and
    pitch tables' figures per row and the sentence means."""
    metrics: dict[str, float] = {}
    for row in report["speed"]["rows"]:
        prefix = f"b{row['batch_size']}_{row['precision']}"
        for key in ("latency_mean_s", "latency_p90_s", "latency_p99_s", "x_real_time", "rtf", "samples_per_s"):
            metrics[f"{prefix}_{key}"] = row[key]
        for component in COMPONENTS:
            name = HIFIGAN_NAMES.get(component, component)
            key = f"{component}_latency_mean_s"
            # The workflow's summary (run_summary) also reads a report.json an older version left on disk,
            # whose rows name the vocoder's time hifigan_latency_mean_s.
            metrics[f"{prefix}_{name}_latency_mean_s"] = row[key] if key in row else row[f"{name}_latency_mean_s"]
    metrics.update(other_vocoders.headline_metrics(report))
    metrics.update(other_acoustic_models.headline_metrics(report))
    for row in (report["quality"].get("vocoder_mel_l1") or {}).get("rows", []):
        metrics[f"mel_l1_{row['vocoder']}_{row['input_key']}"] = row["mel_l1"]
    for row in (report["quality"].get("precision") or {}).get("rows", []):
        for key in ("vocoder_snr_db", "vocoder_mel_l1", "fastpitch_mel_l1"):
            metrics[f"{row['precision']}_{key}"] = row.get(key)
    for row in (report["quality"].get("intelligibility") or {}).get("rows", []):
        for decode in ("closed", "open"):
            for key in ("sentence_accuracy", "sentence_accuracy_se", "wer", "cer"):
                # .get: a report.json an older version left on disk has no standard error.
                metrics[f"asr_{decode}_{key}_{row['name']}"] = (row.get(decode) or {}).get(key)
    pauses = report["quality"].get("pauses") or {}
    for row in pauses.get("rows", []):
        metrics[f"pause_level_db_{row['name']}"] = row["pause_level_db"]
        metrics[f"noise_floor_db_{row['name']}"] = row["noise_floor_db"]
    if pauses.get("product"):
        metrics["noise_floor_db_synthesized"] = pauses["product"]["noise_floor_db"]
    for row in (report["quality"].get("pitch") or {}).get("rows", []):
        for key in ("followed", "median_error_cents", "locked"):
            metrics[f"pitch_{key}_{row['name']}"] = row[key]
    average = (report["quality"].get("synthesized") or {}).get("average") or {}
    for key in ("mcd_db", "f0_rmse_hz", "f0_rmse_cents", "voicing_error", "duration_ratio", "total_duration_ratio"):
        if average.get(key) is not None:
            metrics[f"quality_{key}"] = average[key]
    return {key: float(value) for key, value in metrics.items() if _finite(value)}


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value)
