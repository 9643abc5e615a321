"""Monotonic alignment search against brute force over every monotonic path."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tts_pipeline.alignment import AlignmentError, mas_durations, mas_path, mas_tokens, path_score


def all_monotonic_paths(n_frames: int, n_symbols: int):
    """Every frame -> symbol assignment that starts at 0, ends at L-1 and steps by 0 or 1."""
    for moves in itertools.combinations(range(1, n_frames), n_symbols - 1):
        tokens = np.zeros(n_frames, dtype=np.int64)
        for frame in moves:
            tokens[frame:] += 1
        yield tokens


def brute_force(log_attn: np.ndarray) -> tuple[np.ndarray, float]:
    best, best_score = None, -np.inf
    for tokens in all_monotonic_paths(*log_attn.shape):
        score = path_score(log_attn, tokens)
        if best is None or score > best_score:
            best, best_score = tokens, score
    return best, best_score


@pytest.mark.parametrize("seed", range(40))
def test_matches_brute_force_on_random_matrices(seed):
    rng = np.random.default_rng(seed)
    n_symbols = int(rng.integers(1, 5))
    n_frames = int(rng.integers(n_symbols, 8))
    # log-softmax over symbols, as the aligner's attention
    logits = rng.normal(size=(n_frames, n_symbols)) * 2
    log_attn = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))

    expected, expected_score = brute_force(log_attn)
    tokens = mas_tokens(log_attn)
    np.testing.assert_array_equal(tokens, expected)
    assert path_score(log_attn, tokens) == pytest.approx(expected_score)


def test_brute_force_enumerates_every_path():
    # C(T-1, L-1) monotonic paths, all distinct
    paths = {tuple(p) for p in all_monotonic_paths(7, 4)}
    assert len(paths) == 20


@pytest.mark.parametrize("shape", [(1, 1), (5, 1), (4, 4), (7, 3), (200, 37)])
def test_path_properties(shape):
    rng = np.random.default_rng(0)
    log_attn = np.log(rng.dirichlet(np.ones(shape[1]), size=shape[0]))
    path = mas_path(log_attn)
    assert path.shape == shape and path.dtype == np.int32
    assert set(np.unique(path)) <= {0, 1}
    np.testing.assert_array_equal(path.sum(axis=1), 1)  # one symbol per frame
    tokens = path.argmax(axis=1)
    assert tokens[0] == 0 and tokens[-1] == shape[1] - 1
    assert set(np.diff(tokens)) <= {0, 1}  # monotonic, no skipped symbol
    durations = mas_durations(log_attn)
    assert durations.dtype == np.int32 and durations.sum() == shape[0]
    assert (durations >= 1).all()
    np.testing.assert_array_equal(durations, path.sum(axis=0))


def test_ties_move_to_the_previous_symbol():
    # All paths score the same: backtracking moves back a symbol at every frame it can, so the path
    # stays on symbol 0 longest and walks the diagonal at the end.
    tokens = mas_tokens(np.zeros((6, 3)))
    np.testing.assert_array_equal(tokens, [0, 0, 0, 0, 1, 2])


def test_follows_a_clear_diagonal():
    n_frames, n_symbols = 12, 4
    truth = np.repeat(np.arange(n_symbols), 3)
    log_attn = np.full((n_frames, n_symbols), np.log(0.01))
    log_attn[np.arange(n_frames), truth] = np.log(0.97)
    np.testing.assert_array_equal(mas_tokens(log_attn), truth)


def test_minus_infinity_cells_are_avoided():
    log_attn = np.zeros((5, 2))
    log_attn[1:, 0] = -np.inf  # only frame 0 may sit on symbol 0
    np.testing.assert_array_equal(mas_tokens(log_attn), [0, 1, 1, 1, 1])
    assert list(mas_durations(log_attn)) == [1, 4]


def test_fewer_frames_than_symbols_is_a_clear_error():
    with pytest.raises(AlignmentError, match="3 frames for 5 symbols"):
        mas_durations(np.zeros((3, 5)))


@pytest.mark.parametrize("bad", [np.zeros(4), np.zeros((4, 0)), np.full((3, 2), np.nan)])
def test_bad_input_is_rejected(bad):
    with pytest.raises(AlignmentError):
        mas_path(bad)


def reference_loop(log_attn: np.ndarray) -> np.ndarray:
    """The reference rule written cell by cell (slow, obvious): ties go to j - 1."""
    n_frames, n_symbols = log_attn.shape
    log_p = np.full((n_frames, n_symbols), -np.inf)
    back = np.zeros((n_frames, n_symbols), dtype=np.int64)
    log_p[0, 0] = log_attn[0, 0]
    for i in range(1, n_frames):
        for j in range(n_symbols):
            best, came_from = log_p[i - 1, j], j
            if j > 0 and log_p[i - 1, j - 1] >= best:
                best, came_from = log_p[i - 1, j - 1], j - 1
            log_p[i, j] = log_attn[i, j] + best
            back[i, j] = came_from
    tokens = np.empty(n_frames, dtype=np.int64)
    j = n_symbols - 1
    for i in range(n_frames - 1, -1, -1):
        tokens[i] = j
        j = back[i, j]
    return tokens


@pytest.mark.parametrize("seed", range(10))
def test_matches_cell_by_cell_reference_with_many_ties(seed):
    rng = np.random.default_rng(seed)
    # few distinct values: ties everywhere, so the tie rule decides the path
    log_attn = -rng.integers(0, 3, size=(40, 12)).astype(float)
    np.testing.assert_array_equal(mas_tokens(log_attn), reference_loop(log_attn))
