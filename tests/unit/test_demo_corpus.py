"""The demo corpus: LJSpeech layout, audio format, alignments, determinism, the sentence file."""

from __future__ import annotations

import re
import string
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from tts_pipeline.config import DemoCorpusConfig
from tts_pipeline.data.demo_corpus import (
    build_demo_corpus,
    draw_voices,
    load_sentences,
    plan_utterances,
    utterance_id,
)
from tts_pipeline.data.textgrid import read_textgrid
from tts_pipeline.errors import UserError

SENTENCES = [
    "Dr. Lee reads a book.",
    "Is it raining today?",
    "Well-known roads lead home; quick foxes don't wait.",
    "Seven jars, six boxes and a quiz!",
    "The zebra slept.",
]


def simple_normalize(text: str) -> str:
    """A stand-in for the project's cleaners: lower case and one abbreviation."""
    return text.lower().replace("dr.", "doctor")


def words_of(text: str) -> list[str]:
    return [token.strip(string.punctuation) for token in text.split() if token.strip(string.punctuation)]


def build(root: Path, name: str, **overrides: object) -> tuple[Path, object]:
    cfg = DemoCorpusConfig(**{"n_utterances": len(SENTENCES), "seed": 7, **overrides})
    out = root / name
    return out, build_demo_corpus(out, cfg, simple_normalize, sentences=SENTENCES)


@pytest.fixture(scope="module")
def corpora(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Three builds shared by the tests: a reference, the same config again, another seed."""
    root = tmp_path_factory.mktemp("demo")
    reference, summary = build(root, "reference")
    again, _ = build(root, "again")
    other_seed, _ = build(root, "other_seed", seed=8)
    return {"reference": reference, "again": again, "other_seed": other_seed, "summary": summary}


def metadata_rows(out: Path) -> list[list[str]]:
    return [line.split("|") for line in (out / "metadata.csv").read_text(encoding="utf-8").splitlines()]


def test_wavs_are_mono_16bit_22050_and_not_silent(corpora: dict) -> None:
    wavs = sorted((corpora["reference"] / "wavs").glob("*.wav"))
    assert [w.stem for w in wavs] == [f"DEMO-{i:04d}" for i in range(1, 6)]
    for wav in wavs:
        info = sf.info(wav)
        assert (info.samplerate, info.channels, info.subtype, info.format) == (22050, 1, "PCM_16", "WAV")
        audio, _ = sf.read(wav, dtype="int16")
        assert np.abs(audio).max() > 3000, f"{wav.name} is (nearly) silent"
        assert np.abs(audio).max() < 32000, f"{wav.name} reaches full scale"


def test_metadata_rows_match_wavs_and_hold_raw_and_normalized_text(corpora: dict) -> None:
    out = corpora["reference"]
    rows = metadata_rows(out)
    assert [len(row) for row in rows] == [3] * len(SENTENCES)
    assert [row[1] for row in rows] == SENTENCES
    assert [row[2] for row in rows] == [simple_normalize(s) for s in SENTENCES]
    assert {row[0] for row in rows} == {p.stem for p in (out / "wavs").glob("*.wav")}
    assert {row[0] for row in rows} == {p.stem for p in (out / "alignments").glob("*.TextGrid")}
    assert not list(out.rglob(".*.tmp")), "a temporary file was left behind"


def test_summary_counts_utterances_and_audio(corpora: dict) -> None:
    summary = corpora["summary"]
    durations = [sf.info(p).duration for p in (corpora["reference"] / "wavs").glob("*.wav")]
    assert summary.n_utterances == len(SENTENCES)
    assert summary.total_seconds == pytest.approx(sum(durations))
    assert summary.build_seconds > 0


def test_textgrids_tile_the_audio_and_speak_the_normalized_words(corpora: dict) -> None:
    out = corpora["reference"]
    for utt_id, _, text in metadata_rows(out):
        duration = sf.info(out / "wavs" / f"{utt_id}.wav").frames / 22050
        tiers = read_textgrid(out / "alignments" / f"{utt_id}.TextGrid")
        assert list(tiers) == ["words", "phones"]
        for name, intervals in tiers.items():
            assert intervals[0].start == 0.0 and intervals[-1].end == pytest.approx(duration, abs=1e-9), name
            assert all(a.end == b.start for a, b in pairwise(intervals)), f"{utt_id} {name} has gaps"
            assert all(i.end > i.start for i in intervals), f"{utt_id} {name} has empty intervals"
        # The audio says the normalized transcript ("doctor", not "dr."), word for word, in order.
        assert [i.label for i in tiers["words"] if i.label] == words_of(text)
        phones = [i.label for i in tiers["phones"] if i.label]
        assert len(phones) >= len(words_of(text))
        assert not any(mark in "".join(phones) for mark in "ˈˌ"), "stress marks left in phone labels"


def test_same_config_gives_identical_bytes(corpora: dict) -> None:
    reference, again = corpora["reference"], corpora["again"]
    produced = sorted(p.relative_to(reference) for p in reference.rglob("*") if p.is_file())
    assert produced == sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    for relative in produced:
        assert (reference / relative).read_bytes() == (again / relative).read_bytes(), relative


def test_another_seed_gives_other_audio(corpora: dict) -> None:
    reference, other = corpora["reference"], corpora["other_seed"]
    assert (reference / "metadata.csv").read_bytes() == (other / "metadata.csv").read_bytes()
    for wav in (reference / "wavs").glob("*.wav"):
        assert wav.read_bytes() != (other / "wavs" / wav.name).read_bytes(), wav.name


def test_more_utterances_than_sentences_cycle_with_new_voices(tmp_path: Path) -> None:
    sentences = SENTENCES[:2]
    cfg = DemoCorpusConfig(n_utterances=5, seed=3)
    out = tmp_path / "cycle"
    build_demo_corpus(out, cfg, simple_normalize, sentences=sentences)
    rows = metadata_rows(out)
    assert len({row[0] for row in rows}) == 5
    assert [row[1] for row in rows] == [sentences[i % 2] for i in range(5)]
    plan = plan_utterances(sentences, cfg, simple_normalize)
    assert len({(u.raw_text, u.voice) for u in plan}) == 5, "a repeated sentence reused a voice"
    # A smaller rebuild into the same folder removes the clips it no longer lists.
    build_demo_corpus(out, DemoCorpusConfig(n_utterances=2, seed=3), simple_normalize, sentences=sentences)
    assert sorted(p.stem for p in (out / "wavs").glob("*.wav")) == ["DEMO-0001", "DEMO-0002"]
    assert sorted(p.stem for p in (out / "alignments").glob("*")) == ["DEMO-0001", "DEMO-0002"]


def test_voice_draws_are_seeded_and_inside_the_ranges() -> None:
    cfg = DemoCorpusConfig(seed=11, rate_wpm=(150, 160), pitch=(40, 41), pitch_range=(0, 100))
    voices = draw_voices(cfg, 200)
    assert voices == draw_voices(cfg, 200)
    assert voices != draw_voices(cfg.model_copy(update={"seed": 12}), 200)
    assert {v.rate_wpm for v in voices} == set(range(150, 161))
    assert {v.pitch for v in voices} == {40, 41}
    assert all(0 <= v.pitch_range <= 100 for v in voices)


def test_ids_widen_past_9999() -> None:
    assert utterance_id(0, 240) == "DEMO-0001"
    assert utterance_id(12344, 20000) == "DEMO-12345"


def test_bad_sentences_are_user_errors(tmp_path: Path) -> None:
    path = tmp_path / "sentences.txt"
    path.write_text("fine\nnot | fine\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"sentences.txt:2"):
        load_sentences(path)
    with pytest.raises(UserError, match="nothing to speak"):
        plan_utterances(["?!"], DemoCorpusConfig(n_utterances=1), simple_normalize)


def test_the_packaged_sentences_cover_what_the_models_must_learn() -> None:
    sentences = load_sentences()
    text = " ".join(sentences)
    assert len(sentences) >= 240
    assert len(set(sentences)) == len(sentences), "duplicate sentences"
    assert set(string.ascii_lowercase) <= set(text.lower())
    assert all(sentence.isascii() for sentence in sentences)
    lengths = [len(s.split()) for s in sentences]
    assert min(lengths) >= 3 and max(lengths) <= 25
    assert sum(n <= 5 for n in lengths) >= 10 and sum(n >= 15 for n in lengths) >= 10, "lengths do not vary"
    assert sum("?" in s for s in sentences) >= 10
    for pattern in (r"\b\d\b", r"\b1\d{3}\b", r"\$\d+\.\d\d", r"\b\d+(st|nd|rd|th)\b", r"\d,\d{3}", r"\d%"):
        assert re.search(pattern, text), f"no number like {pattern}"
    for abbreviation in ("Mr.", "Mrs.", "Dr.", "St.", "etc."):
        assert abbreviation in text
    for mark in ',;:"()-!':
        assert mark in text, f"no {mark!r}"
