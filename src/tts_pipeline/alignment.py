"""Mel frames aligned to symbols: monotonic alignment search and per-symbol means.

The aligner's loss (:mod:`tts_pipeline.models.aligner`), FastPitch's per-token energy
(:mod:`tts_pipeline.models.fastpitch`) and the durations and per-symbol pitch of
:mod:`tts_pipeline.features.durations` all work on this alignment, so it sits below the models and the
features alike.

Monotonic alignment search (MAS, width 1) is the hard alignment of FastPitch 1.1 / RAD-TTS. Given log
attention probabilities ``log_attn`` of shape ``(T, L)`` (mel frames x symbols), find the path that
assigns every frame to exactly one symbol, starts on symbol 0, ends on symbol ``L - 1``, and at each
frame either stays on the same symbol or moves on by one, maximising the summed log probability.
Dynamic programme (reference section 3.3)::

    log_p[0, 0] = log_attn[0, 0];  log_p[0, j > 0] = -inf
    log_p[i, j] = log_attn[i, j] + max(log_p[i-1, j], log_p[i-1, j-1])

then backtrack from ``(T - 1, L - 1)``; on a tie the path moves back to symbol ``j - 1``. Every
symbol gets at least one frame, so ``T >= L`` is required.

Each frame's update is one numpy operation over all symbols; only the frame loop is Python, so an
``(800, 150)`` matrix takes milliseconds.

:func:`symbol_mean` averages frame values over each symbol's frames, given the durations.
"""

from __future__ import annotations

import numpy as np

from tts_pipeline.errors import UserError

# --------------------------------------------------------------------------------------------------
# monotonic alignment search
# --------------------------------------------------------------------------------------------------


class AlignmentError(UserError, ValueError):
    """An attention matrix MAS cannot align (fewer frames than symbols, NaN, wrong shape)."""


def _check(log_attn: np.ndarray) -> np.ndarray:
    log_attn = np.asarray(log_attn, dtype=np.float64)
    if log_attn.ndim != 2:
        raise AlignmentError(f"MAS expects a (frames, symbols) matrix, got shape {log_attn.shape}")
    n_frames, n_symbols = log_attn.shape
    if n_symbols < 1:
        raise AlignmentError(f"MAS needs at least one symbol, got shape {log_attn.shape}")
    if n_frames < n_symbols:
        raise AlignmentError(
            f"MAS needs at least one mel frame per symbol, got {n_frames} frames for {n_symbols} symbols"
        )
    if np.isnan(log_attn).any():
        raise AlignmentError("MAS input holds NaN log probabilities")
    return log_attn


def mas_tokens(log_attn: np.ndarray) -> np.ndarray:
    """The symbol index of every frame on the best monotonic path.

    Args:
        log_attn: ``(T, L)`` log attention probabilities (``-inf`` allowed), ``T >= L``.

    Returns:
        ``(T,)`` int64, non-decreasing by steps of 0 or 1, from 0 to ``L - 1``.
    """
    log_attn = _check(log_attn)
    n_frames, n_symbols = log_attn.shape
    # from_previous[i, j]: the best way into (i, j) comes from symbol j - 1 at frame i - 1.
    from_previous = np.zeros((n_frames, n_symbols), dtype=bool)
    log_p = np.full(n_symbols, -np.inf)
    log_p[0] = log_attn[0, 0]
    shifted = np.empty(n_symbols)
    for i in range(1, n_frames):
        shifted[0] = -np.inf
        shifted[1:] = log_p[:-1]
        step = shifted >= log_p  # ">=": a tie moves to j - 1, as the reference
        step[0] = False  # symbol 0 has no predecessor symbol
        from_previous[i] = step
        log_p = log_attn[i] + np.where(step, shifted, log_p)

    tokens = np.empty(n_frames, dtype=np.int64)
    j = n_symbols - 1
    for i in range(n_frames - 1, -1, -1):
        tokens[i] = j
        j -= int(from_previous[i, j])
    return tokens


def mas_path(log_attn: np.ndarray) -> np.ndarray:
    """The hard alignment as a 0/1 matrix.

    Args:
        log_attn: ``(T, L)`` log attention probabilities, ``T >= L``.

    Returns:
        ``(T, L)`` int32 with exactly one 1 per row (frame), monotonic, ``[0, 0] == [T-1, L-1] == 1``.
    """
    tokens = mas_tokens(log_attn)
    path = np.zeros(np.shape(log_attn), dtype=np.int32)
    path[np.arange(tokens.size), tokens] = 1
    return path


def mas_durations(log_attn: np.ndarray) -> np.ndarray:
    """Frames per symbol on the MAS path (the column sums of :func:`mas_path`).

    Args:
        log_attn: ``(T, L)`` log attention probabilities, ``T >= L``.

    Returns:
        ``(L,)`` int32, every entry >= 1, summing to ``T``.
    """
    n_symbols = np.shape(log_attn)[1] if np.ndim(log_attn) == 2 else 0
    return np.bincount(mas_tokens(log_attn), minlength=n_symbols).astype(np.int32)


def path_score(log_attn: np.ndarray, tokens: np.ndarray) -> float:
    """Summed log probability of a path given as the symbol index of every frame, ``(T,)``."""
    log_attn = np.asarray(log_attn, dtype=np.float64)
    return float(log_attn[np.arange(len(tokens)), tokens].sum())


# --------------------------------------------------------------------------------------------------
# per-symbol means
# --------------------------------------------------------------------------------------------------


def symbol_mean(values: np.ndarray, durations: np.ndarray, *, what: str = "frames") -> np.ndarray:
    """Mean of the non-zero frame values inside each symbol's span; 0 when none is non-zero.

    Cumulative sums gathered at the duration boundaries, no loop over symbols. Zero marks a frame
    without a value (an unvoiced pitch frame), so it counts neither in the sum nor in the count
    (reference section 3.5; FastPitch averages pitch and energy this way).

    Args:
        values: ``(T,)`` frame values, 0 = no value.
        durations: ``(L,)`` non-negative frames per symbol, summing to ``T``.
        what: What the frames are, for error messages.

    Returns:
        ``(L,)`` float32. A zero-length symbol gets 0.
    """
    values = np.asarray(values, dtype=np.float64)
    durations = np.asarray(durations)
    if values.ndim != 1 or durations.ndim != 1:
        raise ValueError(f"expected values (T,) and durations (L,), got {values.shape} and {durations.shape}")
    if (durations < 0).any() or int(durations.sum()) != values.size:
        raise ValueError(f"durations must be >= 0 and sum to the {values.size} {what}, sum {durations.sum()}")
    present = values != 0
    value_sum = np.concatenate(([0.0], np.cumsum(np.where(present, values, 0.0))))
    present_count = np.concatenate(([0], np.cumsum(present)))
    ends = np.cumsum(durations)
    starts = ends - durations
    total = value_sum[ends] - value_sum[starts]
    count = present_count[ends] - present_count[starts]
    return np.where(count > 0, total / np.maximum(count, 1), 0.0).astype(np.float32)
