"""Beta-binomial alignment prior (RAD-TTS / FastPitch 1.1).

The prior nudges the aligner towards a near-diagonal path early in training: mel frame ``i`` of
``M`` (1-based) gets a beta-binomial distribution over the ``P`` text tokens with ``a = s * i`` and
``b = s * (M + 1 - i)``, so its mass slides from the first token to the last as ``i`` grows.

Unlike the reference, each row is renormalised to sum to 1: the reference evaluates a
``betabinom(P, a, b)`` (support ``0..P``) on ``0..P-1`` and so drops the mass of ``k = P``. The
difference is a per-frame constant in log space, which the softmax over text removes.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import torch
from scipy.special import gammaln

# Enough for every utterance of a small corpus (each epoch then reuses them); for a large one the
# cache mostly helps the validation set. 256 priors of LJSpeech's longest size are about 120 MB.
_CACHE_SIZE = 256


def beta_binomial_prior(n_frames: int, n_tokens: int, scaling: float = 1.0) -> np.ndarray:
    """The prior of one utterance.

    Args:
        n_frames: Mel frames ``M`` (>= 1).
        n_tokens: Text tokens ``P`` (>= 1).
        scaling: ``s`` in ``a = s * i``, ``b = s * (M + 1 - i)``; larger is sharper (> 0).

    Returns:
        float32 ``(M, P)``, each row a distribution over tokens (sums to 1). Read-only: it is cached
        and shared, so copy it before changing it.
    """
    if n_frames < 1 or n_tokens < 1:
        raise ValueError(f"beta_binomial_prior: expected >= 1 frames and tokens, got {n_frames} x {n_tokens}")
    if not scaling > 0:
        raise ValueError(f"beta_binomial_prior: expected scaling > 0, got {scaling}")
    return _cached_prior(int(n_frames), int(n_tokens), float(scaling))


@lru_cache(maxsize=_CACHE_SIZE)
def _cached_prior(n_frames: int, n_tokens: int, scaling: float) -> np.ndarray:
    # log pmf of betabinom(n, a, b) at k is log C(n, k) + log B(k + a, n - k + b) - log B(a, b). Terms
    # constant along a row cancel in the normalisation, which leaves four log-gammas; evaluating
    # them directly is several times faster than scipy.stats.betabinom (same values, see tests).
    n = float(n_tokens)
    frame = np.arange(1, n_frames + 1, dtype=np.float64)[:, None]
    k = np.arange(n_tokens, dtype=np.float64)[None, :]
    a, b = scaling * frame, scaling * (n_frames + 1 - frame)
    log_pmf = gammaln(k + a) + gammaln(n - k + b) - gammaln(k + 1) - gammaln(n - k + 1)
    log_pmf -= log_pmf.max(axis=1, keepdims=True)
    pmf = np.exp(log_pmf)
    prior = (pmf / pmf.sum(axis=1, keepdims=True)).astype(np.float32)
    prior.setflags(write=False)
    return prior


def batch_prior(
    mel_lengths: torch.Tensor | list[int],
    text_lengths: torch.Tensor | list[int],
    scaling: float = 1.0,
    *,
    max_frames: int | None = None,
    max_tokens: int | None = None,
) -> torch.Tensor:
    """Priors of a padded batch.

    Args:
        mel_lengths: ``(B,)`` frames per item.
        text_lengths: ``(B,)`` tokens per item.
        scaling: As in :func:`beta_binomial_prior`.
        max_frames, max_tokens: Padded sizes; default the longest item.

    Returns:
        float32 ``(B, T_mel, T_text)``, zero outside each item's ``(mel_len, text_len)`` block.
    """
    mel_lengths = [int(n) for n in mel_lengths]
    text_lengths = [int(n) for n in text_lengths]
    if len(mel_lengths) != len(text_lengths):
        raise ValueError(f"batch_prior: {len(mel_lengths)} mel lengths but {len(text_lengths)} text lengths")
    frames = max_frames if max_frames is not None else max(mel_lengths, default=0)
    tokens = max_tokens if max_tokens is not None else max(text_lengths, default=0)
    out = np.zeros((len(mel_lengths), frames, tokens), dtype=np.float32)
    for index, (n_frames, n_tokens) in enumerate(zip(mel_lengths, text_lengths, strict=True)):
        out[index, :n_frames, :n_tokens] = beta_binomial_prior(n_frames, n_tokens, scaling)
    return torch.from_numpy(out)
