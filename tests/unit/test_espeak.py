"""eSpeak NG bindings: timings from events (pure), and real synthesis in a worker process."""

from __future__ import annotations

import numpy as np
import pytest

from tts_pipeline.data.espeak import (
    SAMPLE_RATE,
    Espeak,
    EspeakError,
    Segment,
    Synthesis,
    SynthEvent,
    SynthRequest,
    Timings,
    VoiceSettings,
    check_timings,
    synthesize_in_fresh_process,
    timings_from_events,
)
from tts_pipeline.errors import UserError

VOICE = VoiceSettings(rate_wpm=175, pitch=50, pitch_range=60)


def word(sample: int, position: int) -> SynthEvent:
    return SynthEvent("word", sample, round(sample * 1000 / SAMPLE_RATE), position)


def phone(sample: int, position: int, name: str) -> SynthEvent:
    return SynthEvent("phone", sample, round(sample * 1000 / SAMPLE_RATE), position, name)


def no_counts(token: str) -> int:
    raise AssertionError(f"phone count asked for {token!r} although no word event holds two words")


def test_timings_move_word_starts_back_and_turn_pauses_into_gaps() -> None:
    text = "don't stop!"
    events = [
        word(0, 1), phone(260, 1, "d"), phone(400, 1, "ˈoʊ"), phone(900, 1, "n"), phone(900, 1, "t"),
        phone(1200, 1, ""),  # a pause between the words
        word(1500, 7), phone(1800, 7, "s"), phone(2000, 7, "t"), phone(2300, 7, "ˈɑː"), phone(2900, 7, "p"),
        phone(3100, 11, ""),
    ]  # fmt: skip
    timings = timings_from_events(text, events, 4000, no_counts)
    # "don't": eSpeak's word length stops at the apostrophe; the label takes the whole token.
    assert timings.words == (Segment(0, 1200, "don't"), Segment(1500, 3100, "stop"))
    # The zero-length "n" is dropped, stress marks are removed, the first phone of each word
    # starts at its word event, and pauses leave gaps.
    assert timings.phones == (
        Segment(0, 400, "d"), Segment(400, 900, "oʊ"), Segment(900, 1200, "t"),
        Segment(1500, 2000, "s"), Segment(2000, 2300, "t"), Segment(2300, 2900, "ɑː"), Segment(2900, 3100, "p"),
    )  # fmt: skip


def test_a_word_event_holding_two_words_is_split_by_their_phone_counts() -> None:
    text = "sat in the sun"
    events = [
        word(0, 1), phone(0, 1, "s"), phone(100, 1, "æ"), phone(200, 1, "t"),
        word(300, 5), phone(300, 5, "ɪ"), phone(350, 5, "n"), phone(420, 5, "ð"), phone(470, 5, "ə"),
        word(520, 12), phone(520, 12, "s"), phone(600, 12, "ʌ"), phone(700, 12, "n"),
    ]  # fmt: skip
    counts = {"in": 2, "the": 2}
    timings = timings_from_events(text, events, 800, counts.__getitem__)
    assert [(w.label, w.start, w.end) for w in timings.words] == [
        ("sat", 0, 300), ("in", 300, 420), ("the", 420, 520), ("sun", 520, 800),
    ]  # fmt: skip


def test_a_unit_whose_counts_disagree_is_split_in_proportion() -> None:
    # eSpeak links "for a" as f ɚ ɹ ə: 4 phones, but the words alone count 2 + 1.
    events = [word(0, 1), phone(0, 1, "f"), phone(10, 1, "ɚ"), phone(20, 1, "ɹ"), phone(30, 1, "ə")]
    timings = timings_from_events("for a", events, 40, {"for": 2, "a": 1}.__getitem__)
    assert [(w.label, w.start, w.end) for w in timings.words] == [("for", 0, 30), ("a", 30, 40)]


def test_check_timings_rejects_events_whose_clocks_disagree() -> None:
    audio = np.ones(1000, dtype=np.int16)
    timings = Timings((Segment(0, 500, "a"),), (Segment(0, 500, "a"),))
    good = Synthesis(audio, (word(0, 1), phone(441, 1, "a")), timings)
    check_timings(good, "ok")
    bad = Synthesis(audio, (word(0, 1), SynthEvent("phone", 441, 90, 1, "a")), timings)
    with pytest.raises(EspeakError, match="90 ms"):
        check_timings(bad, "clip X")
    outside = Synthesis(audio, (), Timings((Segment(0, 1500, "a"),), ()))
    with pytest.raises(EspeakError, match="outside the audio"):
        check_timings(outside, "clip Y")


def test_real_synthesis_gives_audio_and_plausible_timings() -> None:
    texts = ["the quick brown fox, well-known to all.", "is it raining in the city?"]
    results = list(synthesize_in_fresh_process([SynthRequest(t, VOICE) for t in texts], "en-us"))
    assert len(results) == 2
    for text, synthesis in zip(texts, results, strict=True):
        assert synthesis.audio.dtype == np.int16 and synthesis.audio.ndim == 1
        assert 0.5 < len(synthesis.audio) / SAMPLE_RATE < 5
        assert np.abs(synthesis.audio).max() > 1000
        check_timings(synthesis, text)  # raises on disagreeing clocks, unordered or outside segments
        expected = [token.strip(",.?") for token in text.split()]
        assert [w.label for w in synthesis.timings.words] == expected
        # Words carry real speech: each word holds at least one phone.
        for segment in synthesis.timings.words:
            assert any(segment.start <= p.start < segment.end for p in synthesis.timings.phones)


def test_fresh_processes_repeat_byte_for_byte_and_voices_change_the_audio() -> None:
    requests = [SynthRequest("a short test.", VOICE), SynthRequest("a short test.", VoiceSettings(240, 20, 10))]
    first = list(synthesize_in_fresh_process(requests, "en-us"))
    again = list(synthesize_in_fresh_process(requests, "en-us"))
    assert [s.audio.tobytes() for s in first] == [s.audio.tobytes() for s in again]
    # The faster, lower voice is shorter and different.
    assert len(first[1].audio) < len(first[0].audio)


def test_an_unknown_voice_is_a_user_error_naming_the_config_key() -> None:
    with pytest.raises(UserError, match="corpus.demo.voice.*no-such-voice"):
        list(synthesize_in_fresh_process([SynthRequest("hello.", VOICE)], "no-such-voice"))


def test_phone_counts_of_single_words() -> None:
    engine = Espeak.instance()
    engine.set_voice("en-us")
    assert engine.count_phones("in") == 2
    assert engine.count_phones("from") == 4
