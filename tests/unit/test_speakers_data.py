"""Speakers on the data side: the 4th metadata field, the manifests' ``speaker``, the speaker-balanced
split, the multi-speaker demo corpus and per-speaker pitch statistics."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile as sf
from pydantic import ValidationError

from tts_pipeline.config import DemoCorpusConfig, PitchConfig, SplitConfig
from tts_pipeline.data import espeak
from tts_pipeline.data.demo_corpus import (
    assign_speakers,
    build_demo_corpus,
    check_voices,
    draw_voices,
    plan_utterances,
)
from tts_pipeline.data.manifest import read_manifest, write_manifest
from tts_pipeline.data.manifest_record import ManifestRecord
from tts_pipeline.data.metadata import read_metadata
from tts_pipeline.data.speakers import corpus_speakers, speaker_ids, speaker_name_problem
from tts_pipeline.data.splits import SplitError, random_split, speaker_quotas, split_ids
from tts_pipeline.errors import UserError
from tts_pipeline.features.extract import ExtractionResult, Utterance, UtteranceSummary
from tts_pipeline.features.feature_set import pitch_statistics, read_manifest_utterances

from .test_manifest import build, make_corpus, tone

THREE_VOICES: list[dict[str, Any]] = [
    {"name": "low", "voice": "en-us+m1", "pitch": [20, 40]},
    {"name": "high", "voice": "en-us+f4", "pitch": [60, 80]},
    {"name": "british", "voice": "en+m3", "pitch": [45, 65]},
]


# --------------------------------------------------------------------------------------------------
# names and metadata.csv
# --------------------------------------------------------------------------------------------------


def test_speaker_names_are_safe_identifiers_and_ids_are_their_sorted_order() -> None:
    assert speaker_name_problem("spk_01-a") is None
    for bad in ("", "two words", "a/b", "é", "x" * 65, "a|b"):
        assert speaker_name_problem(bad) is not None, bad
    assert speaker_ids(["low", "high", "british", "low"]) == {"british": 0, "high": 1, "low": 2}


def test_mixed_records_are_refused_naming_the_utterances() -> None:
    assert corpus_speakers({"a": None, "b": None}, "here") == []
    assert corpus_speakers({"a": "y", "b": "x"}, "here") == ["x", "y"]
    with pytest.raises(UserError, match=r"here: 1 utterance\(s\) name no speaker \(b\)"):
        corpus_speakers({"a": "x", "b": None}, "here")


def test_a_fourth_field_is_the_speaker_and_three_fields_none(tmp_path: Path) -> None:
    path = tmp_path / "metadata.csv"
    path.write_text("a|Raw.|norm a|alice\nb|Raw b.||bob\n", encoding="utf-8")
    rows = read_metadata(path).rows
    assert [(row.id, row.transcript, row.speaker) for row in rows] == [("a", "norm a", "alice"), ("b", "Raw b.", "bob")]
    path.write_text("a|Raw.|norm a\nb|Raw b.\n", encoding="utf-8")
    assert [row.speaker for row in read_metadata(path).rows] == [None, None]


def test_bad_speaker_names_are_a_user_error_naming_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "metadata.csv"
    path.write_text("a|x|x|alice\nb|x|x|bob smith\nc|x|x| \n", encoding="utf-8")
    with pytest.raises(UserError) as error:
        read_metadata(path)
    message = str(error.value)
    assert f"{path}:2: the speaker name 'bob smith' is not a safe identifier" in message
    assert f"{path}:3: the speaker name is empty" in message and "2 bad speaker name(s)" in message


def test_lines_of_the_other_kind_are_malformed_lines(tmp_path: Path) -> None:
    path = tmp_path / "metadata.csv"
    # A stray '|' in a single-speaker corpus: the 4-field line is the odd one.
    path.write_text("a|x|x\nb|x|x\nc|x|x|y\n", encoding="utf-8")
    metadata = read_metadata(path)
    assert [row.id for row in metadata.rows] == ["a", "b"] and "c" in metadata.claimed_ids
    assert [(p.id, p.reason.value) for p in metadata.problems] == [("c", "malformed_line")]
    assert "a '|' inside the text?" in metadata.problems[0].detail
    # A multi-speaker corpus with one line lacking its speaker.
    path.write_text("a|x|x|s1\nb|x|x|s2\nc|x|x\n", encoding="utf-8")
    metadata = read_metadata(path)
    assert [row.id for row in metadata.rows] == ["a", "b"]
    assert "line 3: no speaker (a 4th field), but 2 other lines name theirs" in metadata.problems[0].detail


def test_manifest_records_carry_the_speaker_only_when_given() -> None:
    base = {"id": "a", "wav": "a.wav", "text": "a", "n_samples": 10}
    assert ManifestRecord.from_json(base, "m:1").to_json() == base
    record = ManifestRecord.from_json({**base, "speaker": "alice"}, "m:1")
    assert record.speaker == "alice" and list(record.to_json()) == [*base, "speaker"]
    with pytest.raises(UserError, match=r"m:3: manifest field 'speaker': the speaker name 'a b'"):
        ManifestRecord.from_json({**base, "speaker": "a b"}, "m:3")
    with pytest.raises(UserError, match=r"m:4: manifest field 'speaker' is 3 \(integer\)"):
        ManifestRecord.from_json({**base, "speaker": 3}, "m:4")


# --------------------------------------------------------------------------------------------------
# the split
# --------------------------------------------------------------------------------------------------


def test_quotas_are_proportional_and_sum_to_the_size() -> None:
    assert speaker_quotas({"a": 108, "b": 108, "c": 108}, 12) == {"a": 4, "b": 4, "c": 4}
    assert speaker_quotas({"a": 50, "b": 30, "c": 20}, 7) == {"a": 4, "b": 2, "c": 1}
    assert speaker_quotas({"a": 1, "b": 1}, 1) == {"a": 1, "b": 0}  # a tie goes to the first name
    assert sum(speaker_quotas({"a": 7, "b": 5, "c": 3}, 11).values()) == 11


def speakers_of(counts: dict[str, int]) -> dict[str, str]:
    return {f"{name}-{index:03d}": name for name, count in counts.items() for index in range(count)}


def test_a_speaker_corpus_splits_in_proportion_and_ignores_the_input_order() -> None:
    speakers = speakers_of({"x": 60, "y": 30, "z": 10})
    config = SplitConfig(scheme="random", val_size=10, test_size=20, seed=3)
    result = split_ids(sorted(speakers), config, speakers=speakers)
    assert result.sizes == {"train": 70, "val": 10, "test": 20}
    for split, expected in (("val", {"x": 6, "y": 3, "z": 1}), ("test", {"x": 12, "y": 6, "z": 2})):
        assert Counter(speakers[i] for i in result.splits[split]) == expected
    again = split_ids(sorted(speakers, reverse=True), config, speakers=speakers)
    assert again.splits == result.splits
    # Without speakers the split is the plain seeded one, as before.
    plain = random_split(sorted(speakers), val_size=10, test_size=20, seed=3)
    assert split_ids(sorted(speakers), config).splits == plain.splits


def test_a_speaker_left_without_training_utterances_is_named() -> None:
    speakers = speakers_of({"big": 40, "tiny": 2})
    config = SplitConfig(scheme="random", val_size=20, test_size=20, seed=0)
    with pytest.raises(SplitError, match=r"to speaker\(s\) tiny \(tiny: 2 utterance\(s\), 1 to val and 1 to test\)"):
        split_ids(sorted(speakers), config, speakers=speakers)


def test_the_manifest_stage_writes_speakers_and_counts_them_per_split(tmp_path: Path) -> None:
    names = ["bob", "alice", "carol"]
    ids = [f"u{k:02d}" for k in range(12)]
    lines = [f"{i}|Text {k}.|hello {'abcdefghijkl'[k]}.|{names[k % 3]}" for k, i in enumerate(ids)]
    corpus = make_corpus(tmp_path / "corpus", lines, {i: tone() for i in ids})
    result = build(corpus, split=SplitConfig(scheme="random", val_size=3, test_size=3, seed=0))
    per_split = result.validation["split"]["speakers"]
    assert per_split == {name: {"train": 2, "val": 1, "test": 1} for name in sorted(names)}
    written = write_manifest(result, tmp_path / "data")
    records = read_manifest(written["train"])
    assert {r.speaker for r in records} == set(names)
    assert all(r.speaker == names[int(r.id[1:]) % 3] for r in records)
    assert json.loads(written["train"].read_text().splitlines()[0])["speaker"] in names


# --------------------------------------------------------------------------------------------------
# the demo corpus
# --------------------------------------------------------------------------------------------------


def test_speakers_take_turns_and_shift_on_each_pass_through_the_sentences() -> None:
    order = assign_speakers(n_utterances=12, n_sentences=4, n_speakers=3, seed=0)
    assert Counter(order) == {0: 4, 1: 4, 2: 4}
    assert all(a != b for a, b in zip(order, order[1:], strict=False))  # neighbours differ
    for sentence in range(4):  # a sentence spoken again gets another voice
        assert len({order[sentence + 4 * rep] for rep in range(3)}) == 3
    assert order == assign_speakers(12, 4, 3, seed=0)


def test_each_utterance_draws_from_its_speakers_ranges() -> None:
    cfg = DemoCorpusConfig(n_utterances=30, seed=5, speakers=THREE_VOICES)
    plan = plan_utterances([f"Sentence {k}." for k in range(7)], cfg, str.lower)
    for utterance in plan:
        speaker = next(s for s in cfg.speakers if s.name == utterance.speaker)
        assert utterance.voice_name == speaker.voice
        assert speaker.pitch[0] <= utterance.voice.pitch <= speaker.pitch[1]
        assert speaker.rate_wpm[0] <= utterance.voice.rate_wpm <= speaker.rate_wpm[1]
    assert Counter(u.speaker for u in plan) == {"low": 10, "high": 10, "british": 10}
    # The single-voice draws are what they always were.
    single = DemoCorpusConfig(n_utterances=30, seed=5)
    assert [u.voice for u in plan_utterances(["A."], single, str.lower)] == draw_voices(single, 30)
    assert all(u.speaker is None and u.voice_name is None for u in plan_utterances(["A."], single, str.lower))


def test_speaker_config_errors_name_the_key() -> None:
    with pytest.raises(ValidationError, match="each name once, but 'a' appear"):
        DemoCorpusConfig(speakers=[{"name": "a", "voice": "en-us"}, {"name": "a", "voice": "en"}])
    with pytest.raises(ValidationError, match="3 speakers but n_utterances is 2"):
        DemoCorpusConfig(n_utterances=2, speakers=THREE_VOICES)
    with pytest.raises(ValidationError, match="pitch: expected values within 0..100"):
        DemoCorpusConfig(speakers=[{"name": "a", "voice": "en-us", "pitch": [50, 120]}])
    two = [{"name": "a", "voice": "en-us+f4"}, {"name": "b", "voice": "en-us+nosuch"}]
    with pytest.raises(UserError, match=r"speakers\[1\].voice: 'en-us\+nosuch': eSpeak NG has no voice variant"):
        check_voices(DemoCorpusConfig(speakers=two))
    with pytest.raises(UserError, match=r"corpus.demo.speakers\[0\].voice: 'en-gb\+m3'.*British English is 'en'"):
        check_voices(DemoCorpusConfig(speakers=[{"name": "a", "voice": "en-gb+m3"}]))
    assert "m3" in espeak.voice_variants() and "f4" in espeak.voice_variants()
    # Breath noise differs from run to run: such a variant would make the corpus irreproducible.
    with pytest.raises(UserError, match=r"speakers\[0\].voice: 'en-us\+f3': the voice variant 'f3' adds breath"):
        check_voices(DemoCorpusConfig(speakers=[{"name": "a", "voice": "en-us+f3"}]))


def test_a_three_voice_corpus_is_deterministic_and_its_voices_differ(tmp_path: Path) -> None:
    cfg = DemoCorpusConfig(n_utterances=6, seed=2, speakers=THREE_VOICES)
    sentences = ["The zebra slept in the sun.", "Is it raining today?"]
    summary = build_demo_corpus(tmp_path / "a", cfg, str.lower, sentences=sentences)
    build_demo_corpus(tmp_path / "b", cfg, str.lower, sentences=sentences)
    assert summary.clips_per_speaker == {"british": 2, "high": 2, "low": 2}
    rows = [line.split("|") for line in (tmp_path / "a" / "metadata.csv").read_text(encoding="utf-8").splitlines()]
    assert [len(row) for row in rows] == [4] * 6 and {row[3] for row in rows} == {"low", "high", "british"}
    for name in ("metadata.csv", *(f"wavs/{row[0]}.wav" for row in rows)):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    from tts_pipeline.config import AudioConfig
    from tts_pipeline.features.pitch import extract_pitch

    median: dict[str, float] = {}
    for row in rows:
        audio, _ = sf.read(tmp_path / "a" / "wavs" / f"{row[0]}.wav", dtype="float32")
        f0 = extract_pitch(audio, PitchConfig(floor_hz=60, ceiling_hz=500), AudioConfig())
        median.setdefault(row[3], float(np.median(f0[f0 > 0])))
    assert median["low"] < median["british"] < median["high"] and median["high"] > 1.8 * median["low"]


# --------------------------------------------------------------------------------------------------
# per-speaker pitch statistics
# --------------------------------------------------------------------------------------------------


def summary(utterance_id: str, pitch: list[float]) -> UtteranceSummary:
    voiced = np.array([p for p in pitch if p > 0], dtype=np.float64)
    moments = (float(voiced.sum()), float(np.square(voiced).sum()))
    return UtteranceSummary(utterance_id, len(pitch), voiced.size, *moments, True)


def test_pitch_stats_add_each_speakers_training_frames() -> None:
    utterances = [Utterance(i, split, f"{i}.wav", 10) for i, split in (("a", "train"), ("b", "train"), ("c", "val"))]
    summaries = [summary("a", [100, 110, 0]), summary("b", [200, 0, 220]), summary("c", [500, 500])]
    result = ExtractionResult(summaries, 3, 0, False, 1.0)
    stats = pitch_statistics(utterances, result, PitchConfig(), {"a": "lo", "b": "hi", "c": "hi"}).stats
    assert stats["mean"] == pytest.approx(157.5) and stats["n_voiced_frames"] == 4
    assert stats["speakers"]["lo"] == {"mean": 105.0, "std": 5.0, "n_voiced_frames": 2, "n_utterances": 1}
    assert stats["speakers"]["hi"]["mean"] == 210.0 and stats["speakers"]["hi"]["n_utterances"] == 1  # val not counted
    assert "speakers" not in pitch_statistics(utterances, result, PitchConfig()).stats
    silent = ExtractionResult([summary("a", [100]), summary("b", [0, 0]), summary("c", [1])], 3, 0, False, 1.0)
    with pytest.raises(UserError, match=r"speaker\(s\) hi: no voiced frame in the train split \(hi 1 utterance"):
        pitch_statistics(utterances, silent, PitchConfig(), {"a": "lo", "b": "hi", "c": "hi"})


def test_manifests_that_mix_named_and_unnamed_records_are_refused(tmp_path: Path) -> None:
    for split, records in {
        "train": [{"id": "a", "wav": "a.wav", "text": "a", "n_samples": 10, "speaker": "x"}],
        "val": [{"id": "b", "wav": "b.wav", "text": "a", "n_samples": 10}],
        "test": [],
    }.items():
        (tmp_path / f"manifest.{split}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    with pytest.raises(UserError, match=r"1 utterance\(s\) name no speaker \(b\)"):
        read_manifest_utterances(tmp_path, 22050)


def test_the_speakers_overlay_layers_over_the_demo_config() -> None:
    """config/demo-speakers.yaml merged over demo.yaml as Snakemake merges --configfile files: three
    reproducible eSpeak voices in their own corpus and experiment, and a FastPitch with a row for each."""
    import yaml
    from snakemake.utils import update_config

    from tts_pipeline.config import parse_config
    from tts_pipeline.workflow import Pipeline

    from ..conftest import REPO

    demo = yaml.safe_load((REPO / "config/demo.yaml").read_text())
    update_config(demo, yaml.safe_load((REPO / "config/demo-speakers.yaml").read_text()))
    cfg = parse_config(demo)
    speakers = cfg.corpus.demo.speakers
    assert cfg.experiment == "demo-speakers" and cfg.corpus.name == "demo-speakers"
    assert len(speakers) == 3 == cfg.fastpitch.n_speakers and len({s.voice for s in speakers}) == 3
    check_voices(cfg.corpus.demo)  # every voice exists and is reproducible
    assert Pipeline(demo).paths.corpus_record == "resources/demo-speakers/corpus.json"  # not the demo's corpus
