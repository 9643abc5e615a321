"""Does a faster precision change what a listener understands? Full TTS in fp32, in each faster
precision, and in fp32 with a control perturbation of the same size, through the benchmark's recogniser.

The benchmark's intelligibility table has a full-TTS row per precision over a few held-out sentences
(24 on the demo), where one or two sentences that flip between correct and wrong move the figures by
several points. This command asks the question with more sentences and a control:

- ``fp32``: FastPitch + HiFi-GAN in float32 on ``--n`` corpus sentences (the manifests' texts: test,
  then val, then train; ``--n`` beyond the held-out ones takes sentences the models trained on, which
  is fine for comparing precisions with each other);
- one row per faster precision the device runs (``benchmark.precisions``; bf16 on a CPU);
- ``fp32 + noise``: the fp32 audio of each sentence plus white noise at the faster precision's
  measured vocoder SNR (median over the sentences of the fine-tuned HiFi-GAN on the fp32 FastPitch mels,
  that precision against fp32). A difference of that size the recogniser should not care about: its
  change from the fp32 row shows the recogniser's own noise.

Each row prints the closed-set sentence accuracy with its binomial standard error, closed-set WER and
open WER (PocketSphinx, :mod:`tts_pipeline.benchmark.intelligibility`). The synthesizers use the
``inference`` section's options, as the ``synthesize`` stage does. For example::

    tts-pipeline bench-intelligibility --config config/demo.yaml --fastpitch results/demo/fastpitch/model.pt \\
        --hifigan results/demo/hifigan_finetuned/model.pt --manifest-dir results/demo/data --n 120
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from tts_pipeline.benchmark.intelligibility import Scores
    from tts_pipeline.data.manifest_record import ManifestRecord

SPLIT_ORDER = ("test", "val", "train")
"""Sentences are taken from the held-out splits first."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", type=Path, required=True, help="pipeline YAML (audio, text, inference, benchmark)")
    parser.add_argument("--fastpitch", type=Path, required=True, help="FastPitch model.pt")
    parser.add_argument("--hifigan", type=Path, required=True, help="the fine-tuned HiFi-GAN model.pt")
    parser.add_argument("--manifest-dir", type=Path, required=True, help="folder of manifest.{train,val,test}.jsonl")
    parser.add_argument("--n", type=int, default=120, help="sentences (default 120)")
    parser.add_argument("--workers", type=int, default=2, help="recogniser processes (default 2)")
    parser.add_argument("--threads", type=int, default=2, help="torch intra-op threads (default 2)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the control noise")
    parser.add_argument("--json", type=Path, help="also write the rows here")


@dataclass(frozen=True)
class Row:
    """One way of producing the sentences and what the recogniser made of them."""

    name: str
    closed: Scores
    open: Scores

    @property
    def sentence_error(self) -> float:
        """Binomial standard error of the closed-set sentence accuracy."""
        return self.closed.sentence_accuracy_se

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "closed_sentence_accuracy": self.closed.sentence_accuracy,
            "closed_sentence_accuracy_stderr": self.sentence_error,
            "closed_wer": self.closed.wer,
            "open_wer": self.open.wer,
            "clips": self.closed.clips,
            "words": self.closed.reference_words,
        }


def read_sentences(manifest_dir: Path, n: int) -> tuple[list[ManifestRecord], list[str]]:
    """The first ``n`` records in :data:`SPLIT_ORDER` order, and every text of the corpus (the closed set)."""
    from tts_pipeline.data.manifest import manifest_path, read_manifest

    records = [record for split in SPLIT_ORDER for record in read_manifest(manifest_path(manifest_dir, split))]
    if not records:
        from tts_pipeline.errors import UserError

        raise UserError(f"{manifest_dir}: the manifests list no utterances")
    return records[:n], [record.text for record in records]


def with_noise(audio: np.ndarray, snr_db: float, rng: np.random.Generator) -> np.ndarray:
    """``audio`` float ``(N,)`` plus white noise ``snr_db`` below its RMS, float32 ``(N,)``."""
    rms = float(np.sqrt(np.mean(np.square(audio, dtype=np.float64)))) if audio.size else 0.0
    noise = rng.standard_normal(audio.size) * rms * 10.0 ** (-snr_db / 20.0)
    return (audio + noise).astype(np.float32)


def format_rows(rows: list[Row], n_sentences: int, n_words: int) -> str:
    lines = [
        f"intelligibility of full TTS by precision: {n_sentences} sentences, {n_words} words; PocketSphinx "
        "(closed: the corpus's sentences as a grammar; open: its trigram model)",
        "",
        f"{'row':<34}{'closed sentences':>20}{'closed WER':>12}{'open WER':>10}",
    ]
    for row in rows:
        accuracy = f"{100 * row.closed.sentence_accuracy:.1f}% +- {100 * row.sentence_error:.1f}"
        lines.append(f"{row.name:<34}{accuracy:>20}{100 * row.closed.wer:>11.1f}%{100 * row.open.wer:>9.1f}%")
    lines += ["", "+-: binomial standard error of the sentence accuracy"]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> None:
    import torch

    from tts_pipeline.benchmark.inference import plan_precisions
    from tts_pipeline.benchmark.intelligibility import Clip, decode_all, score, words_of
    from tts_pipeline.benchmark.precision_quality import snr_db
    from tts_pipeline.config import load_config
    from tts_pipeline.errors import UserError
    from tts_pipeline.inference import SynthesisOptions, Synthesizer

    if args.n < 1:
        raise UserError(f"--n: expected >= 1, got {args.n}")
    torch.set_num_threads(args.threads)
    config = load_config(args.config)
    device = torch.device("cpu")
    options = SynthesisOptions.from_config(config.inference)
    fp32 = Synthesizer.load(
        args.fastpitch, args.hifigan, options, audio=config.audio, text=config.text, device=device, amp="off"
    )
    assert fp32.text_encoder is not None, "Synthesizer.load with a FastPitch file has a text encoder"
    plan = plan_precisions(config.benchmark.precisions, device)
    faster = [choice for choice in plan.runnable if choice.name != "fp32"]
    records, corpus = read_sentences(args.manifest_dir, args.n)
    clean = fp32.text_encoder.clean
    references = [words_of(clean(record.text)) for record in records]
    closed_set = [words_of(clean(text)) for text in corpus]

    spoken = fp32.synthesize([record.text for record in records])
    audio = {"fp32": [utterance.audio for utterance in spoken]}
    mels = [utterance.mel for utterance in spoken]
    rng = np.random.default_rng(args.seed)
    for choice in faster:
        synth = fp32.with_options(options, choice.amp)
        audio[choice.name] = [utterance.audio for utterance in synth.synthesize([r.text for r in records])]
        # The vocoder's own difference on identical mels (FastPitch may round a duration differently).
        reference, other = fp32.vocode(mels), synth.vocode(mels)
        snr = float(np.median([snr_db(a.audio, b.audio) for a, b in zip(reference, other, strict=True)]))
        audio[f"fp32 + noise at {snr:.1f} dB ({choice.name})"] = [with_noise(a, snr, rng) for a in audio["fp32"]]

    rate = config.audio.sampling_rate
    clips = [
        Clip(record.id, words, clip, rate)
        for clips_audio in audio.values()
        for record, words, clip in zip(records, references, clips_audio, strict=True)
    ]
    heard = iter(decode_all(closed_set, clips, args.workers))
    rows = []
    for name in audio:
        decoded = [next(heard) for _ in records]
        rows.append(
            Row(
                name,
                score(references, [words["closed"] for words in decoded]),
                score(references, [words["open"] for words in decoded]),
            )
        )
    print(format_rows(rows, len(records), rows[0].closed.reference_words))
    if args.json is not None:
        from tts_pipeline.files import write_json

        write_json(args.json, {"sentences": len(records), "rows": [row.as_dict() for row in rows]})
