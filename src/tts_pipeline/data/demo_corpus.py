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

Several speakers (``corpus.demo.speakers``): each is an eSpeak NG voice (``en-us+m3``, ``en-us+f3``,
``en+m3``, ...) with its own ranges, and ``metadata.csv`` gets the speaker's name as a 4th field
(``id|raw text|normalized text|speaker``). Utterances take the speakers in turn over the sentence
order, shifted by one speaker on each pass through the sentences (:func:`assign_speakers`), so every
speaker has about as many clips, neighbouring sentences have different speakers, and a sentence
spoken again in a later pass gets another voice. An empty list is the single voice above, byte for
byte what it was before speakers existed.

Typical use (the ``corpus`` stage)::

    summary = build_demo_corpus(resources_dir / cfg.corpus.name, cfg.corpus.demo, english_cleaners_v2)
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
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
    speaker: str | None = None  # the speaker's name in a multi-speaker corpus
    voice_name: str | None = None  # that speaker's eSpeak NG voice (None: corpus.demo.voice)


@dataclass(frozen=True)
class DemoCorpusSummary:
    """What a build produced: clip count, seconds of audio in all clips, wall-clock seconds taken, and
    clips per speaker (``{}`` for a single-speaker corpus)."""

    n_utterances: int
    total_seconds: float
    build_seconds: float
    clips_per_speaker: dict[str, int] = field(default_factory=dict)


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


def draw_voices(cfg: DemoCorpusConfig, n: int, speakers: Sequence[int] | None = None) -> list[VoiceSettings]:
    """``n`` voice settings drawn uniformly (bounds included), seeded: from the config's ranges, or with
    ``speakers`` (an index into ``cfg.speakers`` per utterance) from each utterance's speaker's ranges."""
    rng = np.random.default_rng(cfg.seed)
    if speakers is None:
        rates = rng.integers(cfg.rate_wpm[0], cfg.rate_wpm[1], size=n, endpoint=True)
        pitches = rng.integers(cfg.pitch[0], cfg.pitch[1], size=n, endpoint=True)
        ranges = rng.integers(cfg.pitch_range[0], cfg.pitch_range[1], size=n, endpoint=True)
    else:
        if len(speakers) != n:
            raise ValueError(f"draw_voices: {len(speakers)} speaker indices for {n} utterances")

        def draw(name: str) -> np.ndarray:
            # One draw per utterance between its own speaker's bounds (arrays of bounds, one stream).
            bounds = np.array([getattr(cfg.speakers[index], name) for index in speakers], dtype=np.int64)
            return rng.integers(bounds[:, 0], bounds[:, 1], endpoint=True)

        rates, pitches, ranges = draw("rate_wpm"), draw("pitch"), draw("pitch_range")
    return [VoiceSettings(int(r), int(p), int(g)) for r, p, g in zip(rates, pitches, ranges, strict=True)]


def assign_speakers(n_utterances: int, n_sentences: int, n_speakers: int, seed: int) -> list[int]:
    """The speaker (an index into ``corpus.demo.speakers``) of each utterance: in turn over the sentence
    order, starting at a speaker drawn from ``seed``, and one speaker further on each pass through the
    sentences. Counts differ by at most one per pass; a sentence spoken again gets another voice."""
    start = int(np.random.default_rng([seed, n_speakers]).integers(n_speakers))
    return [
        (start + index % n_sentences + index // n_sentences) % n_speakers for index in range(n_utterances)
    ]


def plan_utterances(
    sentences: Sequence[str], cfg: DemoCorpusConfig, normalize: Callable[[str], str]
) -> list[DemoUtterance]:
    """Pair each of ``cfg.n_utterances`` clips with a sentence (cycling), a speaker when the config has
    several (:func:`assign_speakers`) and a voice draw."""
    speakers = (
        assign_speakers(cfg.n_utterances, len(sentences), len(cfg.speakers), cfg.seed) if cfg.speakers else None
    )
    voices = draw_voices(cfg, cfg.n_utterances, speakers)
    normalized = [_normalize_sentence(sentence, normalize) for sentence in sentences]
    plan = []
    for index, voice in enumerate(voices):
        which = index % len(sentences)
        speaker = cfg.speakers[speakers[index]] if speakers is not None else None
        plan.append(
            DemoUtterance(
                utterance_id(index, cfg.n_utterances),
                sentences[which],
                normalized[which],
                voice,
                speaker=speaker.name if speaker else None,
                voice_name=speaker.voice if speaker else None,
            )
        )
    return plan


def check_voices(cfg: DemoCorpusConfig) -> None:
    """UserError naming the config key of a voice eSpeak NG lacks (:func:`espeak.voice_problem`), checked
    before anything is synthesised."""
    voices = [(f"corpus.demo.speakers[{index}].voice", s.voice) for index, s in enumerate(cfg.speakers)]
    for key, name in voices or [("corpus.demo.voice", cfg.voice)]:
        problem = espeak.voice_problem(name)
        if problem is not None:
            raise UserError(f"{key}: {name!r}: {problem}")


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
    check_voices(cfg)
    plan = plan_utterances(load_sentences() if sentences is None else sentences, cfg, normalize)
    (out_dir / METADATA_NAME).unlink(missing_ok=True)
    _remove_stale(out_dir, {utterance.id for utterance in plan})

    total_samples = 0
    # One fresh eSpeak process per voice (a single-voice corpus: one for all, as always), in the order
    # the voices first speak: a speaker's clips then depend on its own utterances only, not on what the
    # other voices said before them in the same process (eSpeak's hidden state, espeak module docstring).
    for voice_name in dict.fromkeys(utterance.voice_name or cfg.voice for utterance in plan):
        batch = [utterance for utterance in plan if (utterance.voice_name or cfg.voice) == voice_name]
        requests = [SynthRequest(utterance.text, utterance.voice) for utterance in batch]
        for utterance, synthesis in zip(batch, espeak.synthesize_in_fresh_process(requests, voice_name), strict=True):
            espeak.check_timings(synthesis, f"demo utterance {utterance.id} ({utterance.text!r})")
            if not np.any(synthesis.audio):
                raise espeak.EspeakError(f"demo utterance {utterance.id}: eSpeak NG produced silence")
            _write_wav(out_dir / WAVS_DIR / f"{utterance.id}.wav", synthesis.audio)
            alignment = out_dir / ALIGNMENTS_DIR / f"{utterance.id}.TextGrid"
            _write_alignment(alignment, synthesis.timings, len(synthesis.audio))
            total_samples += len(synthesis.audio)

    files.write_text(out_dir / METADATA_NAME, format_metadata(plan))
    per_speaker = {s.name: sum(u.speaker == s.name for u in plan) for s in sorted(cfg.speakers, key=lambda s: s.name)}
    summary = DemoCorpusSummary(len(plan), total_samples / SAMPLE_RATE, time.perf_counter() - started, per_speaker)
    log.info(
        "demo corpus: %d utterances%s, %.1f min of audio, built in %.1f s in %s",
        summary.n_utterances,
        f" ({', '.join(f'{name} {count}' for name, count in per_speaker.items())})" if per_speaker else "",
        summary.total_seconds / 60, summary.build_seconds, out_dir,
    )  # fmt: skip
    return summary


def format_metadata(plan: Iterable[DemoUtterance]) -> str:
    """LJSpeech ``metadata.csv`` text: ``id|raw text|normalized text`` per line, no header, and
    ``|speaker`` after it for an utterance of a multi-speaker corpus."""
    return "".join(f"{u.id}|{u.raw_text}|{u.text}{'' if u.speaker is None else '|' + u.speaker}\n" for u in plan)


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
