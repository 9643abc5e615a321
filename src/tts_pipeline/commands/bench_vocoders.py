"""Several vocoders on the same held-out recordings' mels (copy synthesis): do they keep the words, the
pitch and the quiet of the pauses?

Choosing between vocoder settings means training each one and hearing them side by side, without the
acoustic model between them and the recordings. Each ``--vocoder NAME=FILE`` turns the ground-truth
mels of ``--manifest-dir``'s validation and test utterances (the first ``--n``; the mels from
``--features-dir``) into audio with the ``inference`` section's options, as the benchmark's copy
synthesis does. Every row, beside the recordings and Griffin-Lim on the same mels, gets the benchmark's
own measures:

- closed-set sentence accuracy with its binomial standard error (:mod:`tts_pipeline.benchmark.intelligibility`);
- pitch followed, median F0 error, frames locked to the frame rate and the recording's unvoiced frames the
  vocoder voices (:mod:`tts_pipeline.benchmark.pitch_fidelity`);
- the level in the recording's pauses relative to its speech (:mod:`tts_pipeline.benchmark.pauses`).

A gap in sentence accuracy between a row and the first ``--vocoder`` is called a difference only when it
exceeds the standard error of the difference. For example, two settings of the demo's vocoder::

    tts-pipeline bench-vocoders --config config/demo.yaml --manifest-dir results/demo/data \\
        --features-dir results/demo/features \\
        --vocoder every-stage=results/demo/hifigan/model.pt --vocoder from-stage-1=results/demo-s1/hifigan/model.pt
"""

from __future__ import annotations

import argparse
import json
import logging
import math
from pathlib import Path
from typing import Any, NamedTuple

log = logging.getLogger(__name__)

RECORDINGS = "recordings"
GRIFFIN_LIM = "griffin-lim"


class VocoderSpec(NamedTuple):
    """A ``--vocoder`` item: a row name and the generator's model file."""

    name: str
    path: Path


def parse_vocoder(value: str) -> VocoderSpec:
    """``NAME=FILE`` -> :class:`VocoderSpec`; UserError naming the item otherwise."""
    from tts_pipeline.errors import UserError, name_and_value

    name, path = name_and_value(value, "--vocoder", "NAME=FILE")
    if name in (RECORDINGS, GRIFFIN_LIM):
        raise UserError(f"--vocoder: {name!r} names a reference row; choose another name")
    return VocoderSpec(name, Path(path))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", type=Path, required=True, help="pipeline YAML (audio, inference)")
    parser.add_argument(
        "--vocoder", type=parse_vocoder, action="append", required=True, metavar="NAME=FILE",
        help="a HiFi-GAN model file to judge (repeat for each; the first is the one the others are compared with)",
    )  # fmt: skip
    parser.add_argument(
        "--manifest-dir", type=Path, required=True,
        help="folder of manifest.{train,val,test}.jsonl: the held-out recordings and the recogniser's closed set",
    )  # fmt: skip
    parser.add_argument("--features-dir", type=Path, required=True, help="the features folder with their mels")
    parser.add_argument("--n", type=int, default=None, help="held-out utterances (default: all)")
    parser.add_argument("--workers", type=int, default=2, help="recogniser and Griffin-Lim processes (default 2)")
    parser.add_argument("--threads", type=int, default=2, help="torch intra-op threads (default 2)")
    parser.add_argument("--json", type=Path, help="also write the figures here")


def difference(row: dict[str, Any], first: dict[str, Any]) -> str:
    """How ``row``'s sentence accuracy stands against ``first``'s: a difference only beyond the standard
    error of the difference (the two errors added in quadrature)."""
    gap = row["sentence_accuracy"] - first["sentence_accuracy"]
    error = math.hypot(row["sentence_accuracy_se"], first["sentence_accuracy_se"])
    if abs(gap) <= error:
        return f"within the error of {first['name']} ({100 * gap:+.0f} points, error {100 * error:.0f})"
    word = "above" if gap > 0 else "below"
    return f"{100 * abs(gap):.0f} points {word} {first['name']} (error {100 * error:.0f})"


def run(args: argparse.Namespace) -> None:
    import numpy as np
    import soundfile as sf
    import torch

    from tts_pipeline.benchmark import pauses, pitch_fidelity
    from tts_pipeline.benchmark.intelligibility import (
        Clip,
        Recognizer,
        decode_all,
        percent_with_error,
        recognise,
        words_of,
    )  # fmt: skip
    from tts_pipeline.benchmark.listening import griffin_lim_all
    from tts_pipeline.commands.bench_voices import held_out_sentences
    from tts_pipeline.config import load_config
    from tts_pipeline.data.feature_layout import FeatureLayout
    from tts_pipeline.errors import UserError
    from tts_pipeline.inference import SynthesisOptions, Synthesizer
    from tts_pipeline.text.cleaners import CLEANERS

    torch.set_num_threads(args.threads)
    cfg = load_config(args.config)
    rate = cfg.audio.sampling_rate
    held, closed_set = held_out_sentences(args.manifest_dir, [], args.n)
    layout = FeatureLayout(args.features_dir)
    mels = []
    for record in held:
        path = layout.mel(record.id)
        if not path.is_file():
            raise UserError(f"{path}: no mel for held-out utterance {record.id} (is --features-dir the run's?)")
        mels.append(np.load(path))
    ids = [record.id for record in held]
    recordings = []
    for record in held:
        samples, sampling_rate = sf.read(record.wav, dtype="float32")
        if sampling_rate != rate:
            raise UserError(f"{record.wav}: {sampling_rate} Hz, the config's audio.sampling_rate is {rate}")
        recordings.append(samples)
    log.info("bench-vocoders: %d held-out utterances, %d vocoders", len(held), len(args.vocoder))

    audio: dict[str, list[Any]] = {RECORDINGS: recordings, GRIFFIN_LIM: griffin_lim_all(mels, cfg.audio, args.workers)}
    options = SynthesisOptions.from_config(cfg.inference)
    for vocoder in args.vocoder:
        synth = Synthesizer.load(None, vocoder.path, options, audio=cfg.audio, amp=cfg.inference.amp)
        audio[vocoder.name] = [utterance.audio for utterance in synth.vocode(mels)]
        log.info("bench-vocoders: %s vocoded", vocoder.name)

    # the words as the text front end spells them out ("2" -> "two"): what a listener should hear
    clean = CLEANERS[cfg.text.cleaners]
    closed = [words_of(clean(text)) for text in closed_set]
    recognizer = Recognizer(closed)
    frequencies = pitch_fidelity.lock_frequencies(cfg.audio)
    reference_tracks = [pitch_fidelity.track_pitch(clip, rate) for clip in recordings]
    rows = []
    for name, clips_audio in audio.items():
        reference = name in (RECORDINGS, GRIFFIN_LIM)
        clips = [
            Clip(record.id, words_of(clean(record.text)), clip, rate, ("closed",))
            for record, clip in zip(held, clips_audio, strict=True)
        ]
        scores = recognise(recognizer, name, name, clips, decode_all(closed, clips, args.workers)).scores["closed"]
        tracks = [pitch_fidelity.track_pitch(clip, rate) for clip in clips_audio]
        pitch = pitch_fidelity.pitch_row(name, name, ids, tracks, reference_tracks, frequencies, reference)
        quiet = pauses.pause_row(name, name, ids, clips_audio, mels, cfg.audio, reference)
        rows.append({
            "name": name,
            "model": None if reference else str(dict(args.vocoder)[name]),
            "sentence_accuracy": scores.sentence_accuracy,
            "sentence_accuracy_se": scores.sentence_accuracy_se,
            "wer": scores.wer,
            "pitch_followed": pitch["followed"],
            "median_error_cents": pitch["median_error_cents"],
            "locked": pitch["locked"],
            "voiced_where_unvoiced": pitch["voiced_where_unvoiced"],
            "pause_level_db": quiet["pause_level_db"],
        })  # fmt: skip

    def percent(value: float | None) -> str:
        return "-" if value is None else f"{100 * value:.0f} %"

    def number(value: float | None) -> str:
        return "-" if value is None else f"{value:.0f}"

    size = recognizer.closed_set_size
    print(f"Copy synthesis of {len(held)} held-out utterances ({size} sentences in the closed set):")
    print("| row | sentences | pitch followed | median error (cents) | locked | voiced where the recording is not "
          "| pauses (dB re speech) |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        accuracy = percent_with_error(row["sentence_accuracy"], row["sentence_accuracy_se"])
        print(f"| {row['name']} | {accuracy} | {percent(row['pitch_followed'])} | {number(row['median_error_cents'])} "
              f"| {percent(row['locked'])} | {percent(row['voiced_where_unvoiced'])} "
              f"| {number(row['pause_level_db'])} |")  # fmt: skip
    first, *others = rows[2:]
    for row in others:
        print(f"{row['name']}: {difference(row, first)}")
    if args.json is not None:
        from tts_pipeline.files import write_text

        write_text(args.json, json.dumps({"utterances": len(held), "rows": rows}, indent=2) + "\n")
