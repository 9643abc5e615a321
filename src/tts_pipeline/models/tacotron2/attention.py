"""Tacotron 2's location-sensitive attention: where each decoder step looks among the encoder outputs.

The energy of symbol ``j`` is ``v . tanh(W q + V m_j + U f_j)``: ``q`` the attention LSTM's output
``(B, attention_rnn_dim)``, ``m_j`` the encoder output ``(B, N, E)`` (``V m`` is computed once per
utterance), and ``f_j`` features of where the attention already was, a convolution over the last
step's weights and their running sum ``(B, 2, N)``. The location term is what keeps the alignment
moving forward monotonically. Padded symbols get ``-inf`` energy, hence no weight.

An optional log-prior ``(B, N)`` over the symbols is added to the energies before the softmax (not in
NVIDIA's model; see :mod:`.prior`): the weights become the model's softmax times the prior,
renormalised, the way the RAD-TTS aligner combines its attention with the beta-binomial prior.
:func:`teacher_forced_log_prior` builds it where the mel length is known (training, duration
extraction), :func:`expected_length_log_prior` where it is not (free-running inference).
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from tts_pipeline.models.aligner.prior import batch_prior, beta_binomial_prior
from tts_pipeline.models.tacotron2.config import Tacotron2Config
from tts_pipeline.models.tacotron2.layers import XavierConv1d, XavierLinear

__all__ = ["Attention", "LocationLayer", "expected_length_log_prior", "teacher_forced_log_prior"]

# Added to the prior before the log, as the RAD-TTS aligner does: a symbol the prior rules out gets
# about -18 (a factor 1e-8), large enough to silence it, finite so that no row is all -inf.
PRIOR_FLOOR = 1e-8


def teacher_forced_log_prior(
    text_lengths: torch.Tensor, mel_lengths: torch.Tensor, n_frames: int, n_symbols: int, scaling: float
) -> torch.Tensor:
    """The beta-binomial log-prior of a batch whose mel lengths are known (FastPitch 1.1's prior).

    Args:
        text_lengths: ``(B,)`` symbols per item.
        mel_lengths: ``(B,)`` frames per item.
        n_frames, n_symbols: Padded sizes ``T`` and ``N``.
        scaling: The prior's scaling (:func:`tts_pipeline.models.aligner.prior.beta_binomial_prior`).

    Returns:
        float32 ``(B, T, N)`` ``log(prior + 1e-8)`` on ``text_lengths``' device. Padded frames get the
        same value for every symbol, which leaves their softmax as it was.
    """
    prior = batch_prior(mel_lengths.tolist(), text_lengths.tolist(), scaling, max_frames=n_frames, max_tokens=n_symbols)
    return torch.log(prior + PRIOR_FLOOR).to(text_lengths.device)


def expected_length_log_prior(
    text_lengths: torch.Tensor, n_symbols: int, frames_per_symbol: float, scaling: float
) -> torch.Tensor:
    """The log-prior of free-running inference, where the mel length is unknown: each item's prior is
    built for an expected length of ``round(frames_per_symbol x N_b)`` frames.

    Args:
        text_lengths: ``(B,)`` symbols per item.
        n_symbols: Padded size ``N``.
        frames_per_symbol: The training corpus's mean frames per symbol (> 0).
        scaling: The prior's scaling.

    Returns:
        float32 ``(B, T_e, N)``, ``T_e`` the longest expected length; rows past an item's expected
        length repeat its last row (the prior on the last symbol), as do steps past ``T_e`` (the
        decoder clamps the row it reads), so an utterance spoken slower than expected can still end.
    """
    expected = [max(1, round(frames_per_symbol * int(n))) for n in text_lengths.tolist()]
    out = torch.full((len(expected), max(expected), n_symbols), PRIOR_FLOOR)
    for index, (n_frames, n_tokens) in enumerate(zip(expected, text_lengths.tolist(), strict=True)):
        prior = torch.from_numpy(beta_binomial_prior(n_frames, int(n_tokens), scaling).copy())
        out[index, :n_frames, :n_tokens] = prior + PRIOR_FLOOR
        out[index, n_frames:, :n_tokens] = prior[-1] + PRIOR_FLOOR
    return torch.log(out).to(text_lengths.device)


class LocationLayer(nn.Module):
    """Features of where the attention was: a convolution over the previous and cumulative weights."""

    def __init__(self, cfg: Tacotron2Config) -> None:
        super().__init__()
        self.location_conv = XavierConv1d(
            2, cfg.attention_location_n_filters, cfg.attention_location_kernel_size, bias=False
        )
        self.location_dense = XavierLinear(cfg.attention_location_n_filters, cfg.attention_dim, bias=False, gain="tanh")

    def forward(self, weights: torch.Tensor) -> torch.Tensor:
        """``(B, 2, N)`` previous and cumulative weights -> ``(B, N, attention_dim)``."""
        return self.location_dense(self.location_conv(weights).transpose(1, 2))


class Attention(nn.Module):
    """Location-sensitive additive attention: ``v . tanh(W q + V m_j + U f_j)`` over the symbols j."""

    def __init__(self, cfg: Tacotron2Config) -> None:
        super().__init__()
        self.query_layer = XavierLinear(cfg.attention_rnn_dim, cfg.attention_dim, bias=False, gain="tanh")
        self.memory_layer = XavierLinear(cfg.encoder_embedding_dim, cfg.attention_dim, bias=False, gain="tanh")
        self.v = XavierLinear(cfg.attention_dim, 1, bias=False)
        self.location_layer = LocationLayer(cfg)

    def forward(
        self,
        query: torch.Tensor,
        memory: torch.Tensor,
        processed_memory: torch.Tensor,
        previous_weights: torch.Tensor,
        padded: torch.Tensor,
        log_prior: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """One attention step.

        Args:
            query: ``(B, attention_rnn_dim)`` attention-LSTM output.
            memory: ``(B, N, E)`` encoder outputs.
            processed_memory: ``(B, N, attention_dim)`` ``memory_layer(memory)``, computed once.
            previous_weights: ``(B, 2, N)`` the last step's weights and their running sum.
            padded: ``(B, N)`` bool, True on padded symbols (they get no attention).
            log_prior: ``(B, N)`` log-prior added to the energies, or None (NVIDIA's attention).

        Returns:
            ``(B, E)`` context and ``(B, N)`` weights.
        """
        energies = self.v(
            torch.tanh(self.query_layer(query)[:, None, :] + self.location_layer(previous_weights) + processed_memory)
        ).squeeze(2)
        if log_prior is not None:
            energies = energies + log_prior
        weights = F.softmax(energies.masked_fill(padded, float("-inf")), dim=1)
        context = torch.bmm(weights[:, None, :], memory).squeeze(1)
        return context, weights
