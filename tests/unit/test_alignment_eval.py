"""Word-boundary error: word grouping per symbol kind and known answers on synthetic utterances."""

from __future__ import annotations

import numpy as np
import pytest

from tts_pipeline.data.feature_layout import FeatureLayout
from tts_pipeline.data.textgrid import Interval, write_textgrid
from tts_pipeline.features.alignment_eval import (
    DurationSource,
    SplitReport,
    evaluate_split,
    format_summary,
    predicted_word_times,
    truth_word_times,
    word_errors,
    word_spans_from_symbols,
    word_spans_from_tiers,
)
from tts_pipeline.files import save_npy
from tts_pipeline.text import encode, get_symbols

HOP, SR = 256, 22050
FRAME = HOP / SR
SYMBOLS = get_symbols("english_basic")


def spans_of(text: str, kind: str = "characters") -> list[tuple[int, int]]:
    return word_spans_from_symbols([SYMBOLS[i] for i in encode(text, kind, "english_basic")])


def test_character_words_are_letter_runs():
    text = "it's a well-known, 'odd' road."
    words = [text[a:b] for a, b in spans_of(text)]
    assert words == ["it's", "a", "well-known", "odd", "road"]


def test_arpabet_chunks_are_words():
    # "the" stays graphemes (several pronunciations); cat / road become {...} chunks
    spans = spans_of("the cat, well-known road.", "arpabet")
    assert len(spans) == 4
    symbols = [SYMBOLS[i] for i in encode("the cat, well-known road.", "arpabet", "english_basic")]
    assert [symbols[a:b] for a, b in spans][1] == ["@K", "@AE1", "@T"]


def test_phones_join_words_by_midpoint():
    words = [Interval(0, 1, ""), Interval(1, 2, "hi"), Interval(2, 2.5, "sp"), Interval(2.5, 4, "you")]
    phones = [Interval(0, 1, ""), Interval(1, 1.5, "h"), Interval(1.5, 2, "i"), Interval(2, 2.5, ""),
              Interval(2.5, 3, "j"), Interval(3, 4, "u")]  # fmt: skip
    assert word_spans_from_tiers(phones, words) == [(1, 3), (4, 6)]


def test_predicted_times_from_durations():
    durations = np.array([2, 3, 1, 4])
    times = predicted_word_times(durations, [(0, 2), (3, 4)], HOP, SR)
    np.testing.assert_allclose(times, np.array([[0, 5], [6, 10]]) * FRAME)


def test_truth_times_skip_silences():
    words = [Interval(0, 0.2, ""), Interval(0.2, 0.5, "a"), Interval(0.5, 0.6, "sil"), Interval(0.6, 1.0, "b")]
    np.testing.assert_allclose(truth_word_times(words), [[0.2, 0.5], [0.6, 1.0]])


def test_summary_uses_measured_percentiles():
    report = SplitReport("val")
    errors = np.arange(1, 11) / 1000.0  # 1..10 ms
    report.utterances.append(word_errors("u", np.c_[errors, errors], np.zeros((10, 2))))
    summary = report.summary()
    assert summary["boundary_error_ms"]["median"] == pytest.approx(5.5)
    assert summary["boundary_error_ms"]["p90"] == pytest.approx(np.percentile(np.arange(1, 11), 90))
    assert summary["boundary_error_ms"]["max"] == pytest.approx(10.0)
    assert "median word-boundary error: 5.50 ms" in format_summary(summary)


# --------------------------------------------------------------------------------------------------
# whole splits from files, known answers
# --------------------------------------------------------------------------------------------------

TEXT = "a cat, the dog."


def make_utterance(tmp_path, utterance_id: str, shift_frames: int = 0):
    """Character durations whose words sit exactly on a ground-truth words tier (in whole frames).

    ``shift_frames`` moves the boundary between the first symbol and the rest of the predicted
    durations, which moves the first word's end and every later boundary by that many frames.
    """
    ids = encode(TEXT, "characters", "english_basic")
    rng = np.random.default_rng(len(utterance_id))
    durations = rng.integers(2, 6, size=len(ids))
    bounds = np.concatenate(([0], np.cumsum(durations)))
    n_frames = int(bounds[-1])
    spans = spans_of(TEXT)
    segments = [Interval(bounds[a] * FRAME, bounds[b] * FRAME, TEXT[a:b]) for a, b in spans]
    tiers = []
    cursor = 0.0
    for segment in segments:
        if segment.start > cursor:
            tiers.append(Interval(cursor, segment.start, ""))
        tiers.append(segment)
        cursor = segment.end
    if cursor < n_frames * FRAME:
        tiers.append(Interval(cursor, n_frames * FRAME, ""))
    write_textgrid(tmp_path / "truth" / f"{utterance_id}.TextGrid", {"words": tiers}, 0.0, n_frames * FRAME)
    predicted = durations.copy()
    predicted[0] += shift_frames
    predicted[-1] -= shift_frames
    layout = FeatureLayout(tmp_path)
    save_npy(layout.durations(utterance_id), predicted.astype(np.int32))
    save_npy(layout.symbols(utterance_id), np.array(ids, dtype=np.int32))


def evaluate(tmp_path, ids):
    how = DurationSource("aligner", SYMBOLS, HOP, SR)
    return evaluate_split("val", ids, FeatureLayout(tmp_path), tmp_path / "truth", how).summary()


def test_perfect_durations_have_zero_error(tmp_path):
    make_utterance(tmp_path, "u1")
    make_utterance(tmp_path, "u22")
    summary = evaluate(tmp_path, ["u1", "u22"])
    assert summary["n_evaluated"] == 2 and summary["n_words"] == 8
    assert summary["boundary_error_ms"]["max"] == pytest.approx(0.0, abs=1e-6)


def test_a_one_frame_shift_costs_one_hop(tmp_path):
    make_utterance(tmp_path, "u1", shift_frames=1)
    summary = evaluate(tmp_path, ["u1"])
    hop_ms = 1000 * HOP / SR
    # the first word starts at 0 in both; every other boundary (7 of 8) is one frame late
    assert summary["start_error_ms"]["max"] == pytest.approx(hop_ms, abs=1e-3)
    assert summary["boundary_error_ms"]["median"] == pytest.approx(hop_ms, abs=1e-3)
    assert summary["boundary_error_ms"]["mean"] == pytest.approx(hop_ms * 7 / 8, abs=1e-3)


def test_word_count_mismatch_is_skipped_and_counted(tmp_path):
    make_utterance(tmp_path, "u1")
    make_utterance(tmp_path, "u22")
    # u22's truth loses a word
    truth = tmp_path / "truth" / "u22.TextGrid"
    write_textgrid(truth, {"words": [Interval(0.0, 0.1, "a"), Interval(0.1, 0.2, "cat"), Interval(0.2, 0.3, "dog")]},
                   0.0, 0.3)  # fmt: skip
    summary = evaluate(tmp_path, ["u1", "u22"])
    assert summary["n_evaluated"] == 1 and summary["n_skipped"] == 1
    assert summary["skipped"][0] == {"id": "u22", "reason": "4 predicted words, 3 ground-truth words"}


def test_missing_truth_file_is_skipped(tmp_path):
    make_utterance(tmp_path, "u1")
    (tmp_path / "truth" / "u1.TextGrid").unlink()
    summary = evaluate(tmp_path, ["u1"])
    assert summary["n_skipped"] == 1 and summary["boundary_error_ms"] is None
    assert "no ground-truth TextGrid" in summary["skipped"][0]["reason"]
    assert "median word-boundary error" not in format_summary(summary)


def test_a_lone_space_can_join_the_following_word():
    from tts_pipeline.features.alignment_eval import word_spans_from_symbols

    symbols = list("ab cd, ef")
    assert word_spans_from_symbols(symbols) == [(0, 2), (3, 5), (7, 9)]
    # the space between "ab" and "cd" joins "cd"; the one after the comma stays outside "ef"
    assert word_spans_from_symbols(symbols, space_joins_next_word=True) == [(0, 2), (2, 5), (7, 9)]
