"""The benchmark's intelligibility measure: scoring, findings in words, and PocketSphinx telling eSpeak
speech from a buzz, noise and silence (the kinds of output a broken vocoder gives)."""

from __future__ import annotations

import numpy as np
import pytest

from tts_pipeline.benchmark.document import intelligibility_markdown
from tts_pipeline.benchmark.intelligibility import (
    DECODES,
    Clip,
    Recognizer,
    RowResult,
    Scores,
    decode_all,
    findings,
    percent_with_error,
    recognise,
    score,
    standard_error,
    unknown_words,
    words_of,
)
from tts_pipeline.data.espeak import SynthRequest, VoiceSettings, synthesize_in_fresh_process
from tts_pipeline.process_pool import worth_a_pool
from tts_pipeline.text import normalize_text

RATE = 22050
SENTENCES = [
    "The morning train left the station exactly on time.",
    "Please close the kitchen window before the rain starts.",
    "Many birds fly south when the days grow short.",
    "The engine coughed twice and then started.",
    "The soup was thick, hot and full of vegetables.",
    "She planted tomatoes along the garden fence.",
]
DISTRACTORS = [
    "The library is closed on Sunday afternoons.",
    "We walked along the river until the sun went down.",
    "Mr. Okafor sold his old bicycle to a neighbour.",
]


def test_words_of_keeps_apostrophes_and_drops_punctuation():
    assert words_of("It's the clown's hat, isn't it?") == ["it's", "the", "clown's", "hat", "isn't", "it"]
    assert words_of("  ") == []


def test_score_counts_word_and_character_errors_over_all_clips():
    references = [["the", "cat", "sat"], ["a", "dog"], []]  # the empty reference is skipped
    hypotheses = [["the", "cat", "sat"], ["a", "log", "ran"], ["noise"]]
    scores = score(references, hypotheses)
    assert scores.clips == 2 and scores.reference_words == 5
    assert scores.wer == pytest.approx(2 / 5)  # one substitution, one insertion
    assert scores.sentence_accuracy == pytest.approx(0.5)
    assert 0 < scores.cer < 1
    silent = score(references, [[], [], []])
    assert silent.wer == 1.0 and silent.cer == 1.0 and silent.sentence_accuracy == 0.0
    with pytest.raises(ValueError, match="no reference"):
        score([[]], [["x"]])


def _row(name: str, accuracy: float, wer: float, clips: int = 10) -> RowResult:
    scores = Scores(wer=wer, cer=wer, sentence_accuracy=accuracy, clips=clips, reference_words=8 * clips)
    return RowResult(name=name, description=name.replace("_", " "), scores={"closed": scores, "open": scores})


def _counted(name: str, recognised: int, sentences: int) -> RowResult:
    """A row whose closed set recognised ``recognised`` of ``sentences`` sentences."""
    return _row(name, recognised / sentences, 0.1, clips=sentences)


def test_sentence_accuracy_carries_its_binomial_standard_error_in_the_json():
    assert standard_error(0.5, 100) == pytest.approx(0.05)
    assert standard_error(1.0, 24) == 0.0 and np.isnan(standard_error(0.5, 0))
    closed = _counted("tts", 21, 24).as_dict()["closed"]
    assert closed["sentence_accuracy_se"] == pytest.approx(np.sqrt(0.875 * 0.125 / 24))  # 0.0675
    assert closed["clips"] == 24  # the n of the error: sentences, not words
    assert percent_with_error(0.875, closed["sentence_accuracy_se"]) == "88 % ± 7"
    assert score([["a", "b"], ["c"]], [["a", "b"], ["d"]]).sentence_accuracy_se == pytest.approx(0.5 / np.sqrt(2))


def test_a_gap_within_the_error_is_no_worse_finding_and_a_gap_beyond_it_is():
    # 19 of 24 against 21 of 24: 79 % ± 8 vs 88 % ± 7, a gap of 8 points inside the error of 11.
    within = findings(
        [_counted("recordings", 23, 24), _counted("griffin_lim_fastpitch", 21, 24), _counted("tts", 19, 24)]
    )
    assert len(within) == 1 and not within[0].startswith("WORSE")
    assert within[0] == (
        "WITHIN THE ERROR: tts 79 % ± 8 vs Griffin-Lim on the same FastPitch mels 88 % ± 7 (24 sentences, "
        "closed set): the gap, 8 points, is within the error of the difference, 11; at this number of "
        "sentences the two are indistinguishable."
    )
    # The same rates over 96 sentences: the error of the difference shrinks to 5 points, below the gap.
    (beyond,) = findings([_counted("recordings", 92, 96), _counted("griffin_lim_fastpitch", 84, 96),
                          _counted("tts", 76, 96)])  # fmt: skip
    assert beyond.startswith("WORSE THAN GRIFFIN-LIM: tts is understood less well than Griffin-Lim")
    assert (
        "79 % ± 4 against 88 % ± 3 (96 sentences), a gap of 8 points, beyond the error of the difference, 5" in beyond
    )
    # A neural row at or above Griffin-Lim: nothing to say.
    assert findings([_counted("griffin_lim_fastpitch", 19, 24), _counted("tts", 21, 24)]) == []


def test_not_speech_too_is_stated_only_beyond_the_error():
    recordings = _counted("recordings", 22, 24)  # 92 %: the not-speech line is 23 % ± 1
    clear, borderline = _counted("noise", 0, 24), _counted("buzz", 4, 24)  # 0 % ± 0 and 17 % ± 8
    notes = findings([recordings, clear, borderline])
    assert notes[0].startswith("NOT SPEECH: noise: the recogniser found 0 % ± 0 of the sentences")
    assert notes[1].startswith("WITHIN THE ERROR: buzz 17 % ± 8 vs the not-speech line, 23 % ± 1")
    assert len(notes) == 2
    # Recordings the recogniser misses entirely are no line to fall below.
    (nothing,) = findings([_counted("recordings", 0, 24), clear])
    assert nothing.startswith("NOTHING RECOGNISED: the recogniser found none of the 24 sentences")


def test_the_table_shows_each_sentence_accuracy_with_its_error():
    rows = [_counted("recordings", 23, 24), _counted("griffin_lim_fastpitch", 21, 24), _counted("tts", 19, 24)]
    section = {"utterance_ids": [f"u{i}" for i in range(24)], "findings": findings(rows),
               "rows": [row.as_dict() for row in rows], "unknown_words": [], "recogniser": "PocketSphinx",
               "decodes": {"closed": "c", "open": "o"}}  # fmt: skip
    markdown = "\n".join(intelligibility_markdown(section))
    assert "| Closed-set sentences (± SE) |" in markdown
    table = {line.split("|")[1].strip(): line for line in markdown.splitlines() if line.startswith("| ")}
    assert "79 % ± 8" in table["tts"] and "88 % ± 7" in table["griffin lim fastpitch"]
    assert "96 % ± 4" in table["recordings"]
    assert "**WITHIN THE ERROR: tts 79 % ± 8" in markdown and "n = 24 sentences scored" in markdown


def test_findings_name_rows_that_are_not_speech_and_vocoders_worse_than_griffin_lim():
    rows = [
        _row("recordings", 0.9, 0.05),
        _row("griffin_lim_ground_truth", 0.8, 0.1),
        _row("hifigan_fine_tuned_ground_truth", 0.1, 0.9),
        _row("griffin_lim_fastpitch", 0.7, 0.2),
        _row("tts", 0.7, 0.15),
    ]
    notes = findings(rows)
    assert len(notes) == 2
    assert notes[0].startswith("NOT SPEECH: hifigan fine tuned ground truth")
    assert notes[1].startswith("WORSE THAN GRIFFIN-LIM: hifigan fine tuned ground truth")
    # The TTS row beats Griffin-Lim on FastPitch mels by WER at equal sentence accuracy: no finding.
    assert not any("tts" in note for note in notes)
    assert findings([_row("recordings", 0.9, 0.05), _row("griffin_lim_ground_truth", 0.85, 0.1)]) == []


@pytest.fixture(scope="module")
def spoken() -> list[Clip]:
    """eSpeak NG speaking the test sentences at the demo corpus's base voice, as clips at 22.05 kHz."""
    voice = VoiceSettings(rate_wpm=165, pitch=50, pitch_range=60)
    texts = [normalize_text(text) for text in SENTENCES]
    requests = [SynthRequest(text=text, voice=voice) for text in texts]
    renderings = synthesize_in_fresh_process(requests, "en-us")
    return [
        Clip(f"s{index}", words_of(text), synthesis.audio.astype(np.float32) / 32768.0, RATE)
        for index, (text, synthesis) in enumerate(zip(texts, renderings, strict=True))
    ]


@pytest.fixture(scope="module")
def recognizer() -> Recognizer:
    return Recognizer(words_of(normalize_text(text)) for text in [*SENTENCES, *DISTRACTORS])


def test_the_closed_set_recognises_espeak_speech_and_nothing_in_a_buzz_noise_or_silence(spoken, recognizer):
    def like(clip: Clip, audio: np.ndarray) -> Clip:  # the closed decode only: it is what is asserted
        return Clip(clip.id, clip.words, audio.astype(np.float32), RATE, ("closed",))

    speech = recognise(recognizer, "speech", "eSpeak NG", [like(c, c.audio) for c in spoken])
    assert speech.scores["closed"].sentence_accuracy >= 0.8
    assert speech.scores["closed"].wer < 0.2
    rng = np.random.default_rng(0)

    def buzz(n: int) -> np.ndarray:  # a steady harmonic comb at one pitch, as the broken demo vocoder made
        t = np.arange(n) / RATE
        return 0.03 * sum(np.sin(2 * np.pi * 120 * k * t) / k for k in range(1, 30))

    broken = {
        "buzz": [like(c, buzz(len(c.audio))) for c in spoken],
        "noise": [like(c, rng.normal(0, 0.05, len(c.audio))) for c in spoken],
        "silence": [like(c, np.zeros(len(c.audio))) for c in spoken],
    }
    rows = [speech, *(recognise(recognizer, name, name, clips) for name, clips in broken.items())]
    for row in rows[1:]:
        assert row.scores["closed"].sentence_accuracy == 0.0, row.hypotheses
        assert row.scores["closed"].wer > 0.8
    rows[0].name = "recordings"
    notes = findings(rows)
    assert [note.split(":")[1].strip() for note in notes] == ["buzz", "noise", "silence"]
    assert all(note.startswith("NOT SPEECH") for note in notes)
    # ... and the benchmark report says so in words, above its table.
    section = {"utterance_ids": [c.id for c in spoken], "findings": notes, "rows": [r.as_dict() for r in rows],
               "unknown_words": [], "recogniser": "PocketSphinx", "decodes": {"closed": "c", "open": "o"}}  # fmt: skip
    markdown = "\n".join(intelligibility_markdown(section))
    assert markdown.count("**NOT SPEECH") == 3 and markdown.index("NOT SPEECH") < markdown.index("| Audio")


def test_unknown_words_are_counted_and_left_out_never_a_crash(spoken, recognizer):
    clip = Clip("x", ["mister", "okafor", "zzyzxq", "sold"], spoken[0].audio, RATE)
    assert unknown_words(recognizer, [clip.words]) == ["okafor", "zzyzxq"]
    assert recognizer.known(clip.words) == ["mister", "sold"]
    row = recognise(recognizer, "x", "x", [clip])  # a reference of known words only
    assert row.scores["closed"].reference_words == 2
    nan_clip = Clip("n", spoken[0].words, np.full(RATE, np.nan, dtype=np.float32), RATE)
    assert recognizer.transcribe(nan_clip.audio, RATE, "closed") == []
    with pytest.raises(ValueError, match="search"):
        recognizer.transcribe(spoken[0].audio, RATE, "other")


def test_decoding_on_two_processes_gives_what_one_process_gives(spoken, recognizer):
    sentences = [words_of(normalize_text(text)) for text in [*SENTENCES, *DISTRACTORS]]
    # Enough clips to be worth a pool of two (closed decodes: the open one costs five).
    clips = [Clip(c.id, c.words, c.audio, RATE, ("closed",)) for c in spoken * 3]
    assert worth_a_pool(len(clips), 2)
    assert decode_all(sentences, clips, workers=2) == decode_all(sentences, clips, workers=1)


def test_the_open_decode_of_the_first_clips_only_is_scored_over_those_and_shown_as_such(spoken, recognizer):
    clips = [Clip(c.id, c.words, c.audio, RATE, DECODES if i < 2 else ("closed",)) for i, c in enumerate(spoken)]
    row = recognise(recognizer, "speech", "eSpeak NG", clips)
    assert row.scores["closed"].clips == len(spoken) and row.scores["open"].clips == 2
    assert set(row.hypotheses["open"]) == {clips[0].id, clips[1].id}
    closed_clips = [Clip(c.id, c.words, c.audio, RATE, ("closed",)) for c in spoken]
    closed_only = recognise(recognizer, "speech", "eSpeak NG", closed_clips)
    assert "open" not in closed_only.scores
    section = {"utterance_ids": [c.id for c in spoken], "findings": [], "rows": [closed_only.as_dict()],
               "unknown_words": [], "recogniser": "PocketSphinx", "decodes": {"closed": "c", "open": "o"}}  # fmt: skip
    lines = "\n".join(intelligibility_markdown(section)).splitlines()
    table_row = next(line for line in lines if line.startswith("| eSpeak NG"))
    assert table_row.rstrip(" |").endswith("-"), table_row  # no open figure: a dash, not a crash


def test_the_closed_set_grammar_shares_prefixes_and_accepts_exactly_the_sentences():
    from tts_pipeline.benchmark.intelligibility import prefix_tree_rule

    assert prefix_tree_rule(["a b", "a c", "d"]) == "( a ( b | c ) | d )"
    # a sentence that is the prefix of another ends where the other goes on
    assert prefix_tree_rule(["a", "a b"]) == "a ( <NULL> | b )"
    assert prefix_tree_rule(["x y z"]) == "x y z"
    with pytest.raises(ValueError, match="no sentence"):
        prefix_tree_rule([""])
