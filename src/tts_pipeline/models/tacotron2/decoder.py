"""Tacotron 2's autoregressive decoder: ``r = n_frames_per_step`` mel frames and one stop-gate logit per
step (NVIDIA's recipe: r = 1).

Each step feeds the previous step's frames ``(B, r * n_mels)`` through the prenet, runs the attention LSTM on it
and the last context, attends over the encoder outputs ``(B, N, E)`` (:mod:`.attention`), runs the
decoder LSTM on the attention output and the new context, and projects ``[decoder output, context]``
to ``r`` frames and a gate logit. Training reads the ground-truth frames (teacher forcing, ``forward``);
inference reads its own (``infer``).

With r > 1 (Tacotron's reduction factor, not NVIDIA's recipe) the attention takes r times fewer steps
per utterance and each step sees only the frames of the step before, so the model must read the text
to predict the next r frames: attention forms in far fewer updates on little data. Both decodings
return per-frame tensors whatever r is: each step's gate logit and attention are repeated over its r
frames, so losses, duration extraction and inference read frames as with r = 1. A group of r frames
is ordered frame by frame (frame k's ``n_mels`` values, then frame k + 1's).

Dropout is NVIDIA's: the prenet drops (``p_prenet_dropout``, 0.5) in eval mode too, as the paper
prescribes for variety at inference; the two LSTM outputs drop with ``p_attention_dropout`` /
``p_decoder_dropout`` in training only (no zoneout).

Both decodings take an optional log-prior over the symbols per step (not NVIDIA's, see
:mod:`.attention`): None is NVIDIA's decoder.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch import nn
from torch.nn import functional as F

from tts_pipeline.models.tacotron2.attention import Attention
from tts_pipeline.models.tacotron2.config import Tacotron2Config
from tts_pipeline.models.tacotron2.layers import XavierLinear, lengths_to_mask

__all__ = ["Decoder", "DecoderState", "Prenet"]


class Prenet(nn.Module):
    """Two ReLU layers without bias, each followed by dropout that stays on in eval mode."""

    def __init__(self, cfg: Tacotron2Config) -> None:
        super().__init__()
        sizes = [cfg.n_mel_channels * cfg.n_frames_per_step, cfg.prenet_dim, cfg.prenet_dim]
        self.layers = nn.ModuleList(
            [XavierLinear(a, b, bias=False) for a, b in zip(sizes[:-1], sizes[1:], strict=True)]
        )
        self.p_dropout = cfg.p_prenet_dropout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``(..., n_mels)`` -> ``(..., prenet_dim)``."""
        for layer in self.layers:
            x = F.dropout(F.relu(layer(x)), self.p_dropout, training=True)
        return x


class DecoderState(NamedTuple):
    """The recurrent state between decoder steps (all ``(B, ...)``)."""

    attention_hidden: torch.Tensor
    attention_cell: torch.Tensor
    decoder_hidden: torch.Tensor
    decoder_cell: torch.Tensor
    weights: torch.Tensor  # (B, N) last step's attention
    weights_cum: torch.Tensor  # (B, N) sum of all steps' attention
    context: torch.Tensor  # (B, E) last step's attention context


class Decoder(nn.Module):
    """The autoregressive decoder: prenet, attention LSTM, attention, decoder LSTM, frame and gate."""

    def __init__(self, cfg: Tacotron2Config) -> None:
        super().__init__()
        self.cfg = cfg
        enc = cfg.encoder_embedding_dim
        self.prenet = Prenet(cfg)
        self.attention_rnn = nn.LSTMCell(cfg.prenet_dim + enc, cfg.attention_rnn_dim)
        self.attention_layer = Attention(cfg)
        self.decoder_rnn = nn.LSTMCell(cfg.attention_rnn_dim + enc, cfg.decoder_rnn_dim)
        self.linear_projection = XavierLinear(cfg.decoder_rnn_dim + enc, cfg.n_mel_channels * cfg.n_frames_per_step)
        self.gate_layer = XavierLinear(cfg.decoder_rnn_dim + enc, 1, gain="sigmoid")

    def initial_state(self, memory: torch.Tensor) -> DecoderState:
        """All-zero state for ``(B, N, E)`` memory."""
        batch, n_symbols, _ = memory.shape

        def zeros(*shape: int) -> torch.Tensor:
            return memory.new_zeros(batch, *shape)

        return DecoderState(
            zeros(self.cfg.attention_rnn_dim),
            zeros(self.cfg.attention_rnn_dim),
            zeros(self.cfg.decoder_rnn_dim),
            zeros(self.cfg.decoder_rnn_dim),
            zeros(n_symbols),
            zeros(n_symbols),
            zeros(self.cfg.encoder_embedding_dim),
        )

    @property
    def frames_per_step(self) -> int:
        return self.cfg.n_frames_per_step

    def _frames(self, grouped: torch.Tensor) -> torch.Tensor:
        """``(B, S, r * n_mels)`` step outputs -> ``(B, n_mels, S * r)`` frames."""
        batch, steps, _ = grouped.shape
        return grouped.reshape(batch, steps * self.frames_per_step, self.cfg.n_mel_channels).transpose(1, 2)

    def _per_frame(self, per_step: torch.Tensor) -> torch.Tensor:
        """``(B, S, ...)`` -> ``(B, S * r, ...)``: each step's value on each of its frames."""
        return per_step.repeat_interleave(self.frames_per_step, dim=1) if self.frames_per_step > 1 else per_step

    def step(
        self,
        prenet_out: torch.Tensor,
        state: DecoderState,
        memory: torch.Tensor,
        processed_memory: torch.Tensor,
        padded: torch.Tensor,
        log_prior: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, DecoderState]:
        """One decoder step from the prenet output of the previous step's frames, ``(B, prenet_dim)``;
        ``log_prior`` ``(B, N)`` (or None) is added to the attention energies.

        Returns ``(B, r * n_mels)`` frames, ``(B,)`` gate logit and the new state.
        """
        attention_hidden, attention_cell = self.attention_rnn(
            torch.cat((prenet_out, state.context), -1), (state.attention_hidden, state.attention_cell)
        )
        attention_hidden = F.dropout(attention_hidden, self.cfg.p_attention_dropout, self.training)
        context, weights = self.attention_layer(
            attention_hidden,
            memory,
            processed_memory,
            torch.stack((state.weights, state.weights_cum), dim=1),
            padded,
            log_prior,
        )
        decoder_hidden, decoder_cell = self.decoder_rnn(
            torch.cat((attention_hidden, context), -1), (state.decoder_hidden, state.decoder_cell)
        )
        decoder_hidden = F.dropout(decoder_hidden, self.cfg.p_decoder_dropout, self.training)
        features = torch.cat((decoder_hidden, context), dim=1)
        frame = self.linear_projection(features)
        gate = self.gate_layer(features).squeeze(1)
        weights_cum = state.weights_cum + weights
        new_state = DecoderState(
            attention_hidden, attention_cell, decoder_hidden, decoder_cell, weights, weights_cum, context
        )
        return frame, gate, new_state

    def forward(
        self,
        memory: torch.Tensor,
        mels: torch.Tensor,
        memory_lengths: torch.Tensor,
        log_prior: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Teacher-forced decoding: step k reads the ground-truth frames of step k - 1 (all-zero frames
        at k = 0), frames ``[(k - 1) r, k r)``.

        Args:
            memory: ``(B, N, E)`` encoder outputs.
            mels: ``(B, n_mels, T)`` target log-mels.
            memory_lengths: ``(B,)`` real symbols per item.
            log_prior: ``(B, T, N)`` log-prior of each frame over the symbols, or None (step k reads
                the row of its first frame).

        Returns:
            ``(B, n_mels, T)`` frames, ``(B, T)`` gate logits and ``(B, T, N)`` attention weights
            (per frame: see the module docstring).
        """
        r = self.frames_per_step
        batch, n_mels, n_frames = mels.shape
        n_steps = -(-n_frames // r)
        # Steps' inputs, time first: the all-zero group, then each group of r target frames (the last
        # one zero-padded to r). The prenet runs on all of them at once: the same dropout draws as
        # NVIDIA's code, which also passes the last group though no step reads it.
        frames = F.pad(mels, (0, n_steps * r - n_frames)).transpose(1, 2)  # (B, S * r, n_mels)
        groups = frames.reshape(batch, n_steps, r * n_mels)
        inputs = torch.cat((groups.new_zeros(batch, 1, r * n_mels), groups), dim=1)
        prenet_out = self.prenet(inputs.transpose(0, 1))  # (S + 1, B, prenet_dim)
        padded = ~lengths_to_mask(memory_lengths, memory.shape[1])
        processed_memory = self.attention_layer.memory_layer(memory)
        state = self.initial_state(memory)
        outputs, gates, alignments = [], [], []
        for k in range(n_steps):
            prior_k = None if log_prior is None else log_prior[:, k * r]
            output, gate, state = self.step(prenet_out[k], state, memory, processed_memory, padded, prior_k)
            outputs.append(output)
            gates.append(gate)
            alignments.append(state.weights)
        mel = self._frames(torch.stack(outputs, dim=1))[:, :, :n_frames]
        gate = self._per_frame(torch.stack(gates, dim=1))[:, :n_frames]
        return mel, gate, self._per_frame(torch.stack(alignments, dim=1))[:, :n_frames]

    def infer(
        self,
        memory: torch.Tensor,
        memory_lengths: torch.Tensor,
        *,
        max_decoder_steps: int,
        gate_threshold: float,
        early_stopping: bool,
        log_prior: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """Free-running decoding: each step reads the frames the last one made.

        Stops when every item's gate has passed ``gate_threshold`` (with ``early_stopping``) or after
        ``max_decoder_steps`` frames (rounded up to whole steps). ``log_prior`` ``(B, T_e, N)`` (or None):
        step ``k`` adds row ``min(k r, T_e - 1)`` to the energies (the mel length is unknown, so the last
        row holds on). Returns ``(B, n_mels, T)`` frames, ``(B, T)`` gate logits, ``(B, T, N)`` weights
        (per frame, see the module docstring), ``(B,)`` int64 lengths in frames (whole steps) and ``(B,)``
        bool stopped (see :class:`~tts_pipeline.models.tacotron2.model.Tacotron2Inference`).
        """
        r = self.frames_per_step
        batch = memory.shape[0]
        padded = ~lengths_to_mask(memory_lengths, memory.shape[1])
        processed_memory = self.attention_layer.memory_layer(memory)
        state = self.initial_state(memory)
        output = memory.new_zeros(batch, self.cfg.n_mel_channels * r)
        lengths = torch.zeros(batch, dtype=torch.long, device=memory.device)
        stopped = torch.zeros(batch, dtype=torch.bool, device=memory.device)
        max_steps = -(-max_decoder_steps // r)
        outputs, gates, alignments = [], [], []
        while True:
            prior_k = None if log_prior is None else log_prior[:, min(len(outputs) * r, log_prior.shape[1] - 1)]
            output, gate, state = self.step(self.prenet(output), state, memory, processed_memory, padded, prior_k)
            outputs.append(output)
            gates.append(gate)
            alignments.append(state.weights)
            lengths += (~stopped).long() * r
            stopped |= torch.sigmoid(gate) > gate_threshold
            if early_stopping and bool(stopped.all()):
                break
            if len(outputs) == max_steps:
                break
        mel = self._frames(torch.stack(outputs, dim=1))
        gate = self._per_frame(torch.stack(gates, dim=1))
        return mel, gate, self._per_frame(torch.stack(alignments, dim=1)), lengths, stopped
