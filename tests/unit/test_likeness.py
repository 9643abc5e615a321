"""Whose voice a voice sounds like (benchmark/likeness.py) and the bench-voices command's inputs: the closest
reference by MCD-DTW and by mean F0, references rendered by eSpeak NG per demo voice, held-out sentences
that no voice trained on, and the --voice items."""

from __future__ import annotations

import numpy as np
import pytest

from tts_pipeline.benchmark.likeness import ReferenceVoice, demo_voices, likeness, render
from tts_pipeline.benchmark.quality import SpeechQuality
from tts_pipeline.commands.bench_voices import held_out_sentences, parse_voice
from tts_pipeline.config import AudioConfig, DemoCorpusConfig, PitchConfig
from tts_pipeline.errors import UserError
from tts_pipeline.files import write_jsonl

AUDIO = AudioConfig()


def voiced(f0: float, seconds: float, brightness: float, seed: int) -> np.ndarray:
    """A voiced-sounding clip: harmonics of ``f0`` whose level falls by ``brightness`` per harmonic."""
    t = np.arange(int(seconds * AUDIO.sampling_rate)) / AUDIO.sampling_rate
    wave = sum(brightness**k * np.sin(2 * np.pi * (k + 1) * f0 * t) for k in range(8))
    noise = 0.005 * np.random.default_rng(seed).standard_normal(t.size)
    return (0.3 * wave / np.abs(wave).max() + noise).astype(np.float32)


def test_each_voice_is_closest_to_the_reference_it_imitates():
    quality = SpeechQuality(AUDIO, PitchConfig())
    lengths = (0.6, 0.8, 0.7)
    references = {
        "low": [voiced(90.0, s, 0.8, i) for i, s in enumerate(lengths)],
        "high": [voiced(220.0, s, 0.4, i) for i, s in enumerate(lengths)],
    }
    voices = {  # a little off each reference, and longer: DTW aligns
        "like_low": [voiced(95.0, s * 1.2, 0.75, 10 + i) for i, s in enumerate(lengths)],
        "like_high": [voiced(210.0, s * 0.9, 0.45, 20 + i) for i, s in enumerate(lengths)],
    }
    rows = {row["voice"]: row for row in likeness(voices, references, quality)}
    assert rows["like_low"]["closest_mcd"] == "low" and rows["like_low"]["closest_f0"] == "low"
    assert rows["like_high"]["closest_mcd"] == "high" and rows["like_high"]["closest_f0"] == "high"
    assert rows["like_low"]["f0_hz"] == pytest.approx(95.0, rel=0.05)
    assert rows["like_high"]["reference_f0_hz"]["high"] == pytest.approx(220.0, rel=0.05)
    with pytest.raises(ValueError, match="same sentences"):
        likeness({"one": voices["like_low"][:2]}, references, quality)


def test_a_demo_corpus_gives_its_speakers_or_its_one_voice_and_espeak_renders_them():
    single = demo_voices(DemoCorpusConfig(), "demo")
    assert [(voice.name, voice.espeak_voice) for voice in single] == [("demo", "en-us")]
    several = DemoCorpusConfig(speakers=[
        {"name": "low", "voice": "en-us+m1", "pitch": [20, 30]},
        {"name": "high", "voice": "en-us+f4", "pitch": [70, 80]},
    ])  # fmt: skip
    assert [voice.name for voice in demo_voices(several, "ignored")] == ["low", "high"]
    clips = render(ReferenceVoice("demo", "en-us", DemoCorpusConfig()), ["one sentence.", "and another one."], AUDIO)
    assert len(clips) == 2 and all(clip.dtype == np.float32 and clip.size > 5000 for clip in clips)
    with pytest.raises(UserError, match="eSpeak NG renders at 22050 Hz"):
        render(single[0], ["x"], AudioConfig(sampling_rate=16000, n_mel_channels=80, mel_fmax=8000.0))


def test_held_out_sentences_leave_out_what_a_voice_trained_on(tmp_path):
    def manifest(folder, split, texts):
        records = [{"id": f"{split}{i}", "wav": "x.wav", "text": text, "n_samples": 1} for i, text in enumerate(texts)]
        write_jsonl(folder / f"manifest.{split}.jsonl", records)

    manifest(tmp_path / "demo", "train", ["a one.", "a two."])
    manifest(tmp_path / "demo", "val", ["b one."])
    manifest(tmp_path / "demo", "test", ["c one.", "c two.", "c three."])
    manifest(tmp_path / "adapt", "train", ["c two.", "a one."])
    held, closed = held_out_sentences(tmp_path / "demo", [tmp_path / "adapt"], None)
    assert [record.text for record in held] == ["b one.", "c one.", "c three."]
    assert closed == ["a one.", "a two.", "b one.", "c one.", "c two.", "c three."]
    assert [record.text for record in held_out_sentences(tmp_path / "demo", [], 2)[0]] == ["b one.", "c one."]


def test_a_voice_item_names_its_files_and_maybe_a_speaker():
    spec = parse_voice("adapted=a/fastpitch.pt,a/hifigan.pt")
    assert spec.name == "adapted" and spec.fastpitch.name == "fastpitch.pt" and spec.speaker is None
    assert parse_voice("low=m.pt,v.pt,low").speaker == "low"
    for bad in ("adapted", "x=one.pt", "x=a,b,c,d", "=a,b"):
        with pytest.raises(UserError, match="--voice: expected NAME=FASTPITCH,HIFIGAN"):
            parse_voice(bad)


def test_a_voice_can_also_be_judged_without_its_vocoder():
    """A vocoder buzzing at its frame rate hides the pitch, and one that dulls every voice alike hides the
    timbre: both are judged on Griffin-Lim of the mels as well."""
    quality = SpeechQuality(AUDIO, PitchConfig())
    references = {"low": [voiced(100.0, 0.7, 0.8, 0)], "high": [voiced(220.0, 0.7, 0.3, 1)]}
    buzz = {"voice": [voiced(86.13, 0.7, 0.8, 2)]}
    rows = likeness(buzz, references, quality, mel_clips={"voice": [voiced(215.0, 0.7, 0.3, 3)]})
    assert rows[0]["f0_hz"] == pytest.approx(86.13, rel=0.03) and rows[0]["closest_mcd"] == "low"
    assert rows[0]["f0_clips_hz"] == pytest.approx(215.0, rel=0.03) and rows[0]["closest_f0"] == "high"
    assert rows[0]["closest_mcd_mels"] == "high" and rows[0]["closest_f0_median"] == "low"
    assert rows[0]["mcd_mels_db"]["high"] < rows[0]["mcd_mels_db"]["low"]
    alone = likeness(buzz, references, quality)[0]
    assert alone["f0_clips_hz"] is None and alone["mcd_mels_db"] is None and alone["closest_mcd_mels"] is None


def test_the_median_f0_is_the_voices_pitch_under_a_tone_on_a_few_frames():
    """A 95 Hz voice with a 345 Hz tone on a quarter of its length: the mean F0 moves towards the tone and
    lands nearer a 160 Hz speaker; the median stays at the voice's pitch."""
    quality = SpeechQuality(AUDIO, PitchConfig())
    voice = np.concatenate([voiced(95.0, 0.9, 0.7, 4), voiced(344.5, 0.3, 0.2, 5)])
    references = {"low": [voiced(95.0, 1.0, 0.7, 6)], "mid": [voiced(160.0, 1.0, 0.7, 7)]}
    row = likeness({"voice": [voice]}, references, quality)[0]
    assert row["f0_hz"] > 140.0 and row["closest_f0"] == "mid"
    assert row["f0_median_hz"] == pytest.approx(95.0, rel=0.05) and row["closest_f0_median"] == "low"
    assert row["reference_f0_median_hz"]["mid"] == pytest.approx(160.0, rel=0.05)
