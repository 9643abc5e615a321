"""The embedded demo corpus: the project's own sentences spoken by eSpeak NG, in LJSpeech layout.

A newcomer trains the whole pipeline on it in minutes on a CPU, with no download. What it writes
into ``out_dir``::

    wavs/DEMO-0001.wav              mono, 16-bit PCM, 22050 Hz
    alignments/DEMO-0001.TextGrid   ground-truth "words" and "phones" tiers from eSpeak's events
    metadata.csv                    id|raw text|normalized text   (UTF-8, no header; written last)

The audio speaks the *normalized* text (numbers, abbreviations expanded), so it says exactly the
transcript the models see. Each utterance gets its own speaking rate, base pitch and pitch range,
drawn from a seeded generator: the same config always gives byte-identical files. When more
utterances are asked for than there are sentences, the sentences are reused in order with new
voice draws (ids stay unique).

Typical use (the ``corpus`` stage)::

    summary = build_demo_corpus(resources_dir / cfg.corpus.name, cfg.corpus.demo, english_cleaners_v2)
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import soundfile as sf

from tts_pipeline import files
from tts_pipeline.config import DemoCorpusConfig
from tts_pipeline.data import espeak
from tts_pipeline.data.espeak import SAMPLE_RATE, SynthRequest, Timings, VoiceSettings
from tts_pipeline.data.textgrid import Interval, tile, write_textgrid
from tts_pipeline.errors import UserError

log = logging.getLogger(__name__)

SENTENCES_RESOURCE = "demo_sentences.txt"
ID_PREFIX = "DEMO"
METADATA_NAME = "metadata.csv"
WAVS_DIR = "wavs"
ALIGNMENTS_DIR = "alignments"


@dataclass(frozen=True)
class DemoUtterance:
    """One planned clip: its id, the sentence as written, the text spoken, and the voice."""

    id: str
    raw_text: str
    text: str
    voice: VoiceSettings


@dataclass(frozen=True)
class DemoCorpusSummary:
    """What a build produced: clip count, seconds of audio in all clips, wall-clock seconds taken."""

    n_utterances: int
    total_seconds: float
    build_seconds: float


def load_sentences(path: Path | None = None) -> list[str]:
    """The demo sentences, one per line (the packaged file unless ``path`` is given).

    Blank lines are skipped. A sentence holding '|' (the metadata separator) is an error naming the
    file and line.
    """
    if path is None:
        source = resources.files("tts_pipeline.data").joinpath(SENTENCES_RESOURCE)
        name, content = SENTENCES_RESOURCE, source.read_text(encoding="utf-8")
    else:
        name, content = str(path), Path(path).read_text(encoding="utf-8")
    sentences = []
    for number, line in enumerate(content.splitlines(), start=1):
        sentence = line.strip()
        if "|" in sentence:
            raise UserError(f"{name}:{number}: a sentence may not contain '|' (the metadata separator)")
        if sentence:
            sentences.append(sentence)
    if not sentences:
        raise UserError(f"{name}: no sentences")
    return sentences


def utterance_id(index: int, n_utterances: int) -> str:
    """``DEMO-0001`` for index 0; wider numbers when there are more than 9999 utterances."""
    width = max(4, len(str(n_utterances)))
    return f"{ID_PREFIX}-{index + 1:0{width}d}"


def draw_voices(cfg: DemoCorpusConfig, n: int) -> list[VoiceSettings]:
    """``n`` voice settings drawn uniformly (bounds included) from the config's ranges, seeded."""
    rng = np.random.default_rng(cfg.seed)
    rates = rng.integers(cfg.rate_wpm[0], cfg.rate_wpm[1], size=n, endpoint=True)
    pitches = rng.integers(cfg.pitch[0], cfg.pitch[1], size=n, endpoint=True)
    ranges = rng.integers(cfg.pitch_range[0], cfg.pitch_range[1], size=n, endpoint=True)
    return [VoiceSettings(int(r), int(p), int(g)) for r, p, g in zip(rates, pitches, ranges, strict=True)]


def plan_utterances(
    sentences: Sequence[str], cfg: DemoCorpusConfig, normalize: Callable[[str], str]
) -> list[DemoUtterance]:
    """Pair each of ``cfg.n_utterances`` clips with a sentence (cycling) and a voice draw."""
    voices = draw_voices(cfg, cfg.n_utterances)
    normalized = [_normalize_sentence(sentence, normalize) for sentence in sentences]
    plan = []
    for index, voice in enumerate(voices):
        which = index % len(sentences)
        plan.append(DemoUtterance(utterance_id(index, cfg.n_utterances), sentences[which], normalized[which], voice))
    return plan


def _normalize_sentence(sentence: str, normalize: Callable[[str], str]) -> str:
    text = " ".join(normalize(sentence).split())
    if not any(char.isalnum() for char in text):
        raise UserError(f"demo sentence {sentence!r} normalizes to {text!r}, which has nothing to speak")
    if "|" in text:
        raise UserError(f"demo sentence {sentence!r} normalizes to {text!r}, which contains the separator '|'")
    return text


def build_demo_corpus(
    out_dir: Path,
    cfg: DemoCorpusConfig,
    normalize: Callable[[str], str],
    sentences: Sequence[str] | None = None,
) -> DemoCorpusSummary:
    """Synthesise the demo corpus into ``out_dir`` (layout in the module docstring).

    ``normalize`` makes the third metadata column and the text spoken (the stage passes the
    project's cleaners). ``sentences`` replaces the packaged sentences (for tests).

    ``metadata.csv`` is removed first and written last, so it exists only after a complete build;
    clips and alignments left from an earlier, larger build are removed.
    """
    started = time.perf_counter()
    out_dir = Path(out_dir)
    plan = plan_utterances(load_sentences() if sentences is None else sentences, cfg, normalize)
    (out_dir / METADATA_NAME).unlink(missing_ok=True)
    _remove_stale(out_dir, {utterance.id for utterance in plan})

    requests = [SynthRequest(utterance.text, utterance.voice) for utterance in plan]
    total_samples = 0
    for utterance, synthesis in zip(plan, espeak.synthesize_in_fresh_process(requests, cfg.voice), strict=True):
        espeak.check_timings(synthesis, f"demo utterance {utterance.id} ({utterance.text!r})")
        if not np.any(synthesis.audio):
            raise espeak.EspeakError(f"demo utterance {utterance.id}: eSpeak NG produced silence")
        _write_wav(out_dir / WAVS_DIR / f"{utterance.id}.wav", synthesis.audio)
        _write_alignment(out_dir / ALIGNMENTS_DIR / f"{utterance.id}.TextGrid", synthesis.timings, len(synthesis.audio))
        total_samples += len(synthesis.audio)

    files.write_text(out_dir / METADATA_NAME, format_metadata(plan))
    summary = DemoCorpusSummary(len(plan), total_samples / SAMPLE_RATE, time.perf_counter() - started)
    log.info(
        "demo corpus: %d utterances, %.1f min of audio, built in %.1f s in %s",
        summary.n_utterances, summary.total_seconds / 60, summary.build_seconds, out_dir,
    )  # fmt: skip
    return summary


def format_metadata(plan: Iterable[DemoUtterance]) -> str:
    """LJSpeech ``metadata.csv`` text: ``id|raw text|normalized text`` per line, no header."""
    return "".join(f"{u.id}|{u.raw_text}|{u.text}\n" for u in plan)


def _write_wav(path: Path, audio: np.ndarray) -> None:
    with files.atomic_path(path) as tmp:
        sf.write(tmp, audio, SAMPLE_RATE, subtype="PCM_16", format="WAV")


def _write_alignment(path: Path, timings: Timings, n_samples: int) -> None:
    duration = n_samples / SAMPLE_RATE
    tiers = {
        name: tile([Interval(s.start / SAMPLE_RATE, s.end / SAMPLE_RATE, s.label) for s in segments], 0.0, duration)
        for name, segments in (("words", timings.words), ("phones", timings.phones))
    }
    write_textgrid(path, tiers, 0.0, duration)


def _remove_stale(out_dir: Path, keep: set[str]) -> None:
    """Delete this corpus's clips and alignments whose ids are not in ``keep``."""
    for folder, suffix in ((WAVS_DIR, ".wav"), (ALIGNMENTS_DIR, ".TextGrid")):
        for path in (out_dir / folder).glob(f"{ID_PREFIX}-*{suffix}"):
            if path.stem not in keep:
                path.unlink()
