"""Objective quality of the synthesised sentences of the ``synthesize`` stage against reference renderings
of the same texts (:class:`~tts_pipeline.benchmark.quality.SpeechQuality`: MCD-DTW, F0 RMSE, voicing
error, duration ratio).

Where the reference comes from (:data:`REFERENCE_KINDS`):

- ``espeak``: the demo corpus is eSpeak NG speech, so eSpeak NG renders each text again, a reference
  for text the models never heard. It speaks the text the way the corpus did (the text cleaners, then
  whitespace collapsed) with the corpus's voice at its *base* settings: the midpoints of the
  per-utterance rate, pitch and pitch-range ranges the corpus draws from
  (:func:`demo_base_voice`). Rendered in a fresh eSpeak process, so the references are the same bytes
  on every run.
- ``manifest``: a sentence whose name is the id of a validation utterance (``inference.phrases: null``
  synthesises the validation texts named by id, as NVIDIA's devset10 does for LJSpeech) is compared
  with that recording. Sentences with other names are skipped, and listed.
- ``none``: no comparison.

The inference manifest's ``wav`` paths are relative to the manifest's folder (absolute paths are kept).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from tts_pipeline.audio import load_wav
from tts_pipeline.benchmark.quality import SpeechQuality, average_quality
from tts_pipeline.config import AudioConfig, DemoCorpusConfig, PitchConfig
from tts_pipeline.data.espeak import SAMPLE_RATE, SynthRequest, VoiceSettings, synthesize_in_fresh_process
from tts_pipeline.data.manifest_record import ManifestRecord
from tts_pipeline.errors import UserError
from tts_pipeline.files import read_jsonl

log = logging.getLogger(__name__)

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

REFERENCE_KINDS = ("espeak", "manifest", "none")
NOT_A_VALIDATION_ID = "not the id of a validation utterance with a recording"


@dataclass(frozen=True)
class SynthesizedSentence:
    """One record of the inference manifest: output name, the text as written, and its WAV."""

    name: str
    text: str | None
    wav: Path


class ReferencePair(NamedTuple):
    """A synthesised sentence, its waveform and its reference waveform, both float ``(N,)`` in [-1, 1]."""

    sentence: SynthesizedSentence
    synthesized: np.ndarray
    reference: np.ndarray
    source: str


class Skipped(NamedTuple):
    """A sentence left out of the comparison, and why."""

    name: str
    reason: str


def read_inference_manifest(path: str | Path) -> list[SynthesizedSentence]:
    """The records of ``R/inference/manifest.jsonl``; errors name the file and line."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"inference manifest not found: {path}")
    sentences = []
    for number, record in enumerate(read_jsonl(path), start=1):
        if not isinstance(record, dict) or "name" not in record or "wav" not in record:
            raise UserError(f"{path}: record {number}: expected an object with 'name' and 'wav'")
        wav = Path(record["wav"])
        sentences.append(
            SynthesizedSentence(
                name=str(record["name"]),
                text=None if record.get("text") is None else str(record["text"]),
                wav=wav if wav.is_absolute() else path.parent / wav,
            )
        )
    if not sentences:
        raise UserError(f"{path}: the inference manifest lists no sentence")
    return sentences


def demo_base_voice(cfg: DemoCorpusConfig) -> VoiceSettings:
    """The centre of the demo corpus's voice ranges (rate, pitch, pitch range), rounded half up."""

    def middle(bounds: tuple[int, int]) -> int:
        return (bounds[0] + bounds[1] + 1) // 2

    return VoiceSettings(middle(cfg.rate_wpm), middle(cfg.pitch), middle(cfg.pitch_range))


def espeak_pairs(
    sentences: Sequence[SynthesizedSentence],
    audio_cfg: AudioConfig,
    demo_cfg: DemoCorpusConfig,
    normalize: Callable[[str], str],
) -> tuple[list[ReferencePair], list[Skipped]]:
    """Each sentence with text, paired with eSpeak NG's rendering of it (module docstring).

    ``normalize`` is the text cleaner the corpus and the model used (e.g. ``TextEncoder.clean``).
    """
    if audio_cfg.sampling_rate != SAMPLE_RATE:
        raise UserError(
            f"--reference espeak: eSpeak NG renders at {SAMPLE_RATE} Hz but audio.sampling_rate is "
            f"{audio_cfg.sampling_rate}"
        )
    voice = demo_base_voice(demo_cfg)
    with_text = [sentence for sentence in sentences if sentence.text]
    skipped = [Skipped(s.name, "no text in the inference manifest (a vocoded mel)") for s in sentences if not s.text]
    requests = [SynthRequest(" ".join(normalize(s.text or "").split()), voice) for s in with_text]
    source = f"eSpeak NG {demo_cfg.voice} (rate {voice.rate_wpm} wpm, pitch {voice.pitch}, range {voice.pitch_range})"
    pairs = [
        ReferencePair(sentence, _load(sentence.wav, audio_cfg), _scale(synthesis.audio, audio_cfg), source)
        for sentence, synthesis in zip(with_text, synthesize_in_fresh_process(requests, demo_cfg.voice), strict=True)
    ]
    return pairs, skipped


def recording_pairs(
    sentences: Sequence[SynthesizedSentence], val_records: Sequence[ManifestRecord], audio_cfg: AudioConfig
) -> tuple[list[ReferencePair], list[Skipped]]:
    """Each sentence named after a validation utterance, paired with that utterance's recording."""
    wavs = {record.id: record.wav for record in val_records}
    pairs, skipped = [], []
    for sentence in sentences:
        recording = wavs.get(sentence.name)
        if recording is None:
            skipped.append(Skipped(sentence.name, NOT_A_VALIDATION_ID))
            continue
        reference = _load(Path(recording), audio_cfg)
        pairs.append(ReferencePair(sentence, _load(sentence.wav, audio_cfg), reference, f"recording {recording}"))
    return pairs, skipped


class Scores(NamedTuple):
    """Per-sentence figures, their means (empty without a scored sentence) and the pairs too short to score."""

    rows: list[dict[str, Any]]
    average: dict[str, Any]
    skipped: list[Skipped]


def score_pairs(quality: SpeechQuality, pairs: Sequence[ReferencePair]) -> Scores:
    """Per-sentence figures (name, seconds of both, reference source, the metrics) and their means.

    A pair whose waveforms are shorter than one STFT window cannot be framed and is skipped.
    """
    rate, window = quality.audio_cfg.sampling_rate, quality.audio_cfg.filter_length
    rows, metrics, skipped = [], [], []
    scored = []
    for pair in pairs:
        if min(pair.synthesized.size, pair.reference.size) < window:
            skipped.append(Skipped(pair.sentence.name, f"audio shorter than one STFT window ({window} samples)"))
            continue
        scored.append(pair)
        figures = quality.compare(pair.synthesized, pair.reference, utterance=pair.sentence.name)
        metrics.append(figures)
        rows.append({
            "name": pair.sentence.name,
            "text": pair.sentence.text,
            "reference": pair.source,
            "synthesized_seconds": pair.synthesized.size / rate,
            "reference_seconds": pair.reference.size / rate,
            **figures.as_dict(),
        })  # fmt: skip
    average = average_quality(metrics) if metrics else {}
    if metrics:
        # The total duration ratio: all synthesised seconds over all reference seconds.
        synthesized, reference = sum(p.synthesized.size for p in scored), sum(p.reference.size for p in scored)
        average["total_duration_ratio"] = synthesized / reference
    return Scores(rows, average, skipped)


def _scale(pcm: np.ndarray, audio_cfg: AudioConfig) -> np.ndarray:
    """eSpeak's int16 samples at the level :func:`load_wav` gives the corpus files it wrote."""
    return (pcm.astype(np.float32) / np.float32(audio_cfg.max_wav_value)).astype(np.float32)


def _load(path: Path, audio_cfg: AudioConfig) -> np.ndarray:
    if not path.is_file():
        raise UserError(f"audio not found: {path}")
    return load_wav(path, audio_cfg.sampling_rate, audio_cfg.max_wav_value)


def sentence_quality(
    reference: str,
    inference_manifest: Path | None,
    manifest_dir: Path,
    demo: DemoCorpusConfig | None,
    clean: Callable[[str], str] | None,
    audio: AudioConfig,
    pitch: PitchConfig,
) -> dict[str, Any]:
    """The synthesised sentences of ``inference_manifest`` against their references.

    ``reference``: ``espeak`` (eSpeak NG at the ``demo`` corpus's base voice, texts cleaned with
    ``clean``), ``manifest`` (the validation recordings in ``manifest_dir`` of the same ids) or
    ``none`` (no rows).
    """
    from tts_pipeline.data.manifest import manifest_path, read_manifest

    result: dict[str, Any] = {"reference": reference, "description": REFERENCE_DESCRIPTIONS[reference]}
    if reference == "none":
        return {**result, "rows": [], "average": {}, "skipped": []}
    assert inference_manifest is not None
    sentences = read_inference_manifest(inference_manifest)
    if reference == "espeak":
        assert demo is not None and clean is not None
        pairs, skipped = espeak_pairs(sentences, audio, demo, clean)
        result["voice"] = {"name": demo.voice, **dataclasses.asdict(demo_base_voice(demo))}
    else:
        pairs, skipped = recording_pairs(sentences, read_manifest(manifest_path(manifest_dir, "val")), audio)
    scores = score_pairs(SpeechQuality(audio, pitch), pairs)
    if scores.average:
        log.info(
            "benchmark: %d sentences against %s: MCD-DTW %.2f dB, F0 RMSE %.1f Hz, voicing error %.1f%%, "
            "duration ratio %.3f",
            scores.average["utterances"], reference, scores.average["mcd_db"], scores.average["f0_rmse_hz"],
            100 * scores.average["voicing_error"], scores.average["total_duration_ratio"],
        )  # fmt: skip
    return {
        **result,
        "rows": scores.rows,
        "average": scores.average,
        "skipped": [item._asdict() for item in [*skipped, *scores.skipped]],
    }
