"""Durations from attention and TextGrids, per-symbol pitch, the TextGrid symbol table."""

from __future__ import annotations

import numpy as np
import pytest

from tts_pipeline.data.textgrid import Interval, write_textgrid
from tts_pipeline.errors import UserError
from tts_pipeline.features.durations import (
    PAD_SYMBOL,
    PAUSE_SYMBOL,
    UNKNOWN_SYMBOL,
    SymbolTable,
    durations_from_attention,
    durations_from_intervals,
    frame_boundaries,
    read_textgrid_durations,
    symbol_label,
    symbol_pitch,
)

HOP, SR = 256, 22050
FRAME = HOP / SR


# --------------------------------------------------------------------------------------------------
# attention
# --------------------------------------------------------------------------------------------------


def test_durations_from_attention_sum_to_frames():
    rng = np.random.default_rng(0)
    log_attn = np.log(rng.dirichlet(np.ones(9), size=50))
    durations = durations_from_attention(log_attn)
    assert durations.shape == (9,) and durations.dtype == np.int32
    assert durations.sum() == 50 and (durations >= 1).all()


# --------------------------------------------------------------------------------------------------
# per-symbol pitch
# --------------------------------------------------------------------------------------------------


def loop_symbol_pitch(pitch, durations):
    out, start = [], 0
    for d in durations:
        span = pitch[start : start + d]
        voiced = span[span > 0]
        out.append(voiced.mean() if voiced.size else 0.0)
        start += d
    return np.array(out, dtype=np.float32)


def test_symbol_pitch_known_values():
    pitch = np.array([100, 0, 200, 0, 0, 150, 150, 0], dtype=np.float32)
    durations = np.array([3, 2, 0, 3])
    np.testing.assert_allclose(symbol_pitch(pitch, durations), [150.0, 0.0, 0.0, 150.0])


@pytest.mark.parametrize("seed", range(5))
def test_symbol_pitch_matches_a_loop(seed):
    rng = np.random.default_rng(seed)
    durations = rng.integers(0, 8, size=30)
    pitch = rng.uniform(80, 300, size=durations.sum()) * (rng.random(durations.sum()) > 0.4)
    result = symbol_pitch(pitch, durations)
    assert result.dtype == np.float32 and result.shape == (30,)
    np.testing.assert_allclose(result, loop_symbol_pitch(pitch, durations), rtol=1e-6)


def test_symbol_pitch_rejects_mismatched_lengths():
    with pytest.raises(ValueError, match="sum to the 5 pitch frames"):
        symbol_pitch(np.ones(5), np.array([2, 2]))


# --------------------------------------------------------------------------------------------------
# seconds -> frames
# --------------------------------------------------------------------------------------------------


def test_boundaries_round_to_the_nearest_frame_centre():
    # a boundary at 2.4 frames starts at frame 2 (its centre, 2.5, is after the boundary); 2.6 -> 3
    times = np.array([0.0, 2.4, 2.6, 5.45, 7.0]) * FRAME
    np.testing.assert_array_equal(frame_boundaries(times, 7, HOP, SR), [0, 2, 3, 5, 7])


def test_boundaries_clamp_and_force_the_ends():
    times = np.array([0.3, 4.0, 40.0, 41.0]) * FRAME  # starts late, runs past T
    np.testing.assert_array_equal(frame_boundaries(times, 10, HOP, SR), [0, 4, 10, 10])


def test_every_frame_lands_in_the_interval_holding_its_centre():
    rng = np.random.default_rng(3)
    n_frames = 60
    times = np.concatenate([[0.0], np.sort(rng.uniform(0, n_frames * FRAME, 12)), [n_frames * FRAME]])
    bounds = frame_boundaries(times, n_frames, HOP, SR)
    centres = (np.arange(n_frames) + 0.5) * FRAME
    owner = np.searchsorted(times, centres, side="right") - 1  # interval whose [start, end) holds the centre
    np.testing.assert_array_equal(np.repeat(np.arange(len(times) - 1), np.diff(bounds)), owner)


def intervals(*spec):
    return [Interval(start, end, label) for start, end, label in spec]


def test_durations_from_intervals_sum_to_frames_and_map_silences():
    n_frames = 20
    tier = intervals((0.0, 3.2 * FRAME, ""), (3.2 * FRAME, 3.4 * FRAME, "t"), (3.4 * FRAME, 9.9 * FRAME, "a"),
                     (9.9 * FRAME, 15 * FRAME, "sp"), (15 * FRAME, 20.4 * FRAME, "spn"))  # fmt: skip
    result = durations_from_intervals(tier, n_frames, HOP, SR)
    assert result.labels == [PAUSE_SYMBOL, "t", "a", PAUSE_SYMBOL, PAUSE_SYMBOL]
    np.testing.assert_array_equal(result.durations, [3, 0, 7, 5, 5])
    assert result.durations.sum() == n_frames and result.durations.dtype == np.int32
    assert result.n_zero == 1


def test_symbol_labels():
    assert [symbol_label(x) for x in ["", " sil ", "SP", "spn", " a "]] == [PAUSE_SYMBOL] * 4 + ["a"]


def test_read_textgrid_durations(tmp_path):
    tier = intervals((0.0, 0.1, ""), (0.1, 0.3, "h"), (0.3, 0.5, "i"))
    path = tmp_path / "u.TextGrid"
    write_textgrid(path, {"phones": tier}, 0.0, 0.5)
    n_frames = int(0.5 * SR) // HOP
    result = read_textgrid_durations(path, "phones", n_frames, HOP, SR)
    assert result.durations.sum() == n_frames and result.labels == [PAUSE_SYMBOL, "h", "i"]
    with pytest.raises(UserError, match="no tier named 'phonemes'"):
        read_textgrid_durations(path, "phonemes", n_frames, HOP, SR)


# --------------------------------------------------------------------------------------------------
# symbol table
# --------------------------------------------------------------------------------------------------


def test_symbol_table_is_sorted_with_reserved_symbols_first():
    table = SymbolTable.from_labels(["b", "a", "", "sil", "a", "sp"])
    assert table.symbols == (PAD_SYMBOL, PAUSE_SYMBOL, UNKNOWN_SYMBOL, "a", "b")


def test_symbol_table_maps_unknown_labels():
    table = SymbolTable.from_labels(["a", "b"])
    ids, unknown = table.ids(["a", PAUSE_SYMBOL, "z", "b", "_"])
    np.testing.assert_array_equal(ids, [3, 1, 2, 4, 2])  # "z" and a stray pad label are unknown
    assert ids.dtype == np.int32 and unknown == ["z", "_"]
