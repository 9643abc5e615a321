"""Several voices on the same held-out sentences: how intelligible each is, and whose voice it sounds like.

For adaptation (a voice warm-started on a few minutes of a new speaker, the same minutes trained from
scratch, the voice it started from) and for multi-speaker models (each speaker of one FastPitch), the
questions are the same: does the voice still speak, and is it the speaker it should be? Each
``--voice NAME=FASTPITCH,HIFIGAN[,SPEAKER]`` speaks the same sentences with the ``inference`` section's
options (``SPEAKER``: ``inference.speaker``, a speaker of a multi-speaker FastPitch); then

- the benchmark's recogniser (:mod:`tts_pipeline.benchmark.intelligibility`) decodes them against the
  closed set of ``--manifest-dir``'s sentences: sentence accuracy with its binomial standard error, WER;
- each ``--references CONFIG`` gives eSpeak NG reference voices (its demo corpus's speakers, or its one
  voice named by the config's experiment) that speak the same sentences; every voice's median MCD-DTW
  against each reference and its mean F0 beside theirs (:mod:`tts_pipeline.benchmark.likeness`), both
  measured on Griffin-Lim of the voice's mels as well as on its audio: a vocoder that buzzes or adds a
  tone hides the pitch its mels carry, and one that smears formants hides their timbre.

The sentences are the validation and test sentences of ``--manifest-dir`` (the first ``--n``), less any
that a ``--trained-on`` manifest folder trains on, so that no voice was trained on the text it is judged
by. For example, an adapted voice against the demo voice::

    tts-pipeline bench-voices --config config/demo.yaml --manifest-dir results/demo/data \\
        --voice demo=results/demo/fastpitch/model.pt,results/demo/hifigan_finetuned/model.pt \\
        --voice adapted=results/demo-adapt/fastpitch/model.pt,results/demo-adapt/hifigan_finetuned/model.pt \\
        --trained-on results/demo-adapt/data --references config/demo.yaml config/demo-adapt.yaml
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
from pathlib import Path
from typing import Any, NamedTuple

log = logging.getLogger(__name__)


class VoiceSpec(NamedTuple):
    """A ``--voice`` item: a name, the two model files, and a speaker of a multi-speaker FastPitch (or None)."""

    name: str
    fastpitch: Path
    hifigan: Path
    speaker: str | None


def parse_voice(value: str) -> VoiceSpec:
    """``NAME=FASTPITCH,HIFIGAN[,SPEAKER]`` -> :class:`VoiceSpec`; UserError naming the item otherwise."""
    from tts_pipeline.errors import UserError, name_and_value

    expected = "NAME=FASTPITCH,HIFIGAN[,SPEAKER]"
    name, files = name_and_value(value, "--voice", expected)
    parts = [part.strip() for part in files.split(",")]
    if len(parts) not in (2, 3) or not all(parts):
        raise UserError(f"--voice: expected {expected}, got {value!r}")
    return VoiceSpec(name, Path(parts[0]), Path(parts[1]), parts[2] if len(parts) == 3 else None)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", type=Path, required=True, help="pipeline YAML (audio, text, pitch, inference)")
    parser.add_argument(
        "--voice", type=parse_voice, action="append", required=True, metavar="NAME=FASTPITCH,HIFIGAN[,SPEAKER]",
        help="a voice to judge (repeat for each)",
    )  # fmt: skip
    parser.add_argument(
        "--manifest-dir", type=Path, required=True,
        help="folder of manifest.{train,val,test}.jsonl: the held-out sentences and the recogniser's closed set",
    )  # fmt: skip
    parser.add_argument(
        "--trained-on", type=Path, nargs="*", default=[],
        help="manifest folders whose training sentences are left out of the held-out ones",
    )  # fmt: skip
    parser.add_argument(
        "--references", type=Path, nargs="*", default=[],
        help="configs whose demo corpus voices are the references (their speakers, or one voice each)",
    )  # fmt: skip
    parser.add_argument("--n", type=int, default=None, help="held-out sentences (default: all)")
    parser.add_argument("--workers", type=int, default=2, help="recogniser processes (default 2)")
    parser.add_argument("--threads", type=int, default=2, help="torch intra-op threads (default 2)")
    parser.add_argument("--json", type=Path, help="also write the figures here")


def held_out_sentences(manifest_dir: Path, trained_on: list[Path], n: int | None) -> tuple[list[Any], list[str]]:
    """The validation then test records of ``manifest_dir`` whose text no ``trained_on`` folder trains on
    (the first ``n``), and every sentence of ``manifest_dir`` (the closed set)."""
    from tts_pipeline.data.manifest import manifest_path, read_manifest
    from tts_pipeline.errors import UserError

    def records(folder: Path, split: str) -> list[Any]:
        path = manifest_path(folder, split)
        return read_manifest(path) if path.is_file() else []

    splits = {split: records(manifest_dir, split) for split in ("train", "val", "test")}
    seen = {record.text for folder in trained_on for record in records(folder, "train")}
    held = [record for record in splits["val"] + splits["test"] if record.text not in seen]
    if not held:
        raise UserError(f"{manifest_dir}: no validation or test sentence left that no --trained-on folder trains on")
    return held[:n], [record.text for records in splits.values() for record in records]


def run(args: argparse.Namespace) -> None:
    import torch

    from tts_pipeline.benchmark.intelligibility import (
        Clip,
        Recognizer,
        decode_all,
        percent_with_error,
        recognise,
        words_of,
    )  # fmt: skip
    from tts_pipeline.benchmark.likeness import demo_voices, likeness, render
    from tts_pipeline.benchmark.quality import SpeechQuality
    from tts_pipeline.config import load_config
    from tts_pipeline.inference import SynthesisOptions, Synthesizer

    torch.set_num_threads(args.threads)
    cfg = load_config(args.config)
    held, closed_set = held_out_sentences(args.manifest_dir, args.trained_on, args.n)
    texts = [record.text for record in held]
    options = SynthesisOptions.from_config(cfg.inference)
    log.info("bench-voices: %d held-out sentences, %d voices", len(texts), len(args.voice))
    audio: dict[str, list[Any]] = {}
    mels: dict[str, list[Any]] = {}
    clean = None
    for voice in args.voice:
        settings = {**options.acoustic_settings, "speaker": voice.speaker}
        synth = Synthesizer.load(
            voice.fastpitch, voice.hifigan, dataclasses.replace(options, acoustic_settings=settings),
            audio=cfg.audio, text=cfg.text, amp=cfg.inference.amp,
        )  # fmt: skip
        assert synth.text_encoder is not None
        clean = synth.text_encoder.clean
        spoken = synth.synthesize(texts)
        audio[voice.name] = [utterance.audio for utterance in spoken]
        mels[voice.name] = [utterance.mel for utterance in spoken]
        log.info("bench-voices: %s spoke", voice.name)
    assert clean is not None
    closed = [words_of(clean(text)) for text in closed_set]
    recognizer = Recognizer(closed)
    rate = cfg.audio.sampling_rate
    results: dict[str, Any] = {"sentences": len(texts), "closed_set": recognizer.closed_set_size, "voices": {}}
    for name, clips_audio in audio.items():
        clips = [
            Clip(record.id, words_of(clean(record.text)), clip, rate, ("closed",))
            for record, clip in zip(held, clips_audio, strict=True)
        ]
        row = recognise(recognizer, name, name, clips, decode_all(closed, clips, args.workers))
        closed_scores = row.scores["closed"]
        results["voices"][name] = {
            "sentence_accuracy": closed_scores.sentence_accuracy,
            "sentence_accuracy_se": closed_scores.sentence_accuracy_se,
            "wer": closed_scores.wer,
        }
        print(f"{name}: closed-set sentence accuracy "
              f"{percent_with_error(closed_scores.sentence_accuracy, closed_scores.sentence_accuracy_se)}, "
              f"WER {100 * closed_scores.wer:.1f} % ({len(texts)} sentences)")  # fmt: skip

    references = {}
    for config_path in args.references:
        reference_cfg = load_config(config_path)
        for voice in demo_voices(reference_cfg.corpus.demo, reference_cfg.experiment):
            references[voice.name] = render(voice, [clean(text) for text in texts], cfg.audio)
    if references:
        from tts_pipeline.benchmark.listening import griffin_lim_all

        quality = SpeechQuality(cfg.audio, cfg.pitch)

        def progress(name: str) -> None:
            log.info("bench-voices: analysing %s", name)

        inverted = {name: griffin_lim_all(voice_mels, cfg.audio, args.workers) for name, voice_mels in mels.items()}
        rows = likeness(audio, references, quality, progress=progress, mel_clips=inverted)
        results["likeness"] = rows
        names = list(references)
        print("\nMedian MCD-DTW (dB) against each reference, of the audio and of Griffin-Lim of the mels (the "
              "acoustic model without the vocoder); F0 (Hz): the mean of the audio, of the mels and the median of "
              "the audio (a tone on a few frames does not move it):")  # fmt: skip
        closest = "closest (MCD) | closest (MCD of the mels) | closest (mean F0 of the mels) | closest (median F0)"
        columns = [*names, *(f"{n}, mels" for n in names), "F0 audio", "F0 mels", "median F0 audio", closest]
        print("| voice | " + " | ".join(columns) + " |")
        print("|---|" + "---:|" * (2 * len(names) + 3) + "---|---|---|---|")
        for row in rows:
            cells = " | ".join(f"{row[key][n]:.2f}" for key in ("mcd_db", "mcd_mels_db") for n in names)
            print(f"| {row['voice']} | {cells} | {row['f0_hz']:.0f} | {row['f0_clips_hz']:.0f} | "
                  f"{row['f0_median_hz']:.0f} | {row['closest_mcd']} | {row['closest_mcd_mels']} | "
                  f"{row['closest_f0']} | {row['closest_f0_median']} |")  # fmt: skip
        for label, key in (("mean", "reference_f0_hz"), ("median", "reference_f0_median_hz")):
            reference_f0 = rows[0][key]
            print(f"| (reference {label} F0) | " + " | ".join(f"{reference_f0[n]:.0f} Hz" for n in names)
                  + " |" * (len(names) + 8))  # fmt: skip
    if args.json is not None:
        from tts_pipeline.files import write_text

        write_text(args.json, json.dumps(results, indent=2) + "\n")
