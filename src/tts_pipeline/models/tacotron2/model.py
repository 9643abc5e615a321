"""Tacotron 2 as in NVIDIA's DeepLearningExamples recipe: characters to a log-mel, autoregressively,
with location-sensitive attention (the model FastPitch 1.0 takes its durations from).

embedding -> encoder (convolutions + BatchNorm + ReLU, then a bidirectional LSTM) -> decoder: each step
feeds the previous frame through the prenet, runs the attention LSTM, attends over the encoder output
(content + location of the previous and cumulative weights), runs the decoder LSTM and projects to a
mel frame and a stop-gate logit -> postnet (convolutions + BatchNorm + tanh) adds a residual.

Dropout is NVIDIA's: the prenet drops (p 0.5) in eval mode too, as the paper prescribes for variety at
inference; the encoder and postnet drop (p 0.5) in training only; the two LSTM outputs drop with
``p_attention_dropout`` / ``p_decoder_dropout`` in training only (no zoneout).

Module and parameter names give NVIDIA's state-dict keys, so one of their checkpoints loads with
``load_state_dict`` once a DistributedDataParallel ``module.`` prefix is stripped
(:mod:`tts_pipeline.models.tacotron2.foreign`). Mels are ``(B, n_mels, T)``, the project's convention.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any, NamedTuple

import torch
from torch import nn
from torch.nn import functional as F

log = logging.getLogger(__name__)

__all__ = [
    "Tacotron2",
    "Tacotron2Config",
    "Tacotron2Inference",
    "Tacotron2Output",
    "lengths_to_mask",
]

# Dropout of the encoder and postnet convolutions and of the prenet layers (fixed in NVIDIA's code).
_CONV_DROPOUT = 0.5
# The gate logit NVIDIA writes on padded frames with ``mask_padding`` (sigmoid 1: "stopped").
_PADDED_GATE = 1e3


@dataclass(frozen=True)
class Tacotron2Config:
    """Tacotron 2's hyperparameters, under NVIDIA's constructor names, with their published defaults.

    ``n_symbols`` 148 is the ``english_basic`` symbol set (pad, ``-``, punctuation, letters and the 84
    ``@`` ARPAbet phones), which :mod:`tts_pipeline.text` gives in NVIDIA's order.

    Two fields are this project's, not NVIDIA's:

    Attributes:
        p_prenet_dropout: Dropout of the prenet, always on (NVIDIA fixes it at 0.5). 0 makes
            inference deterministic (tests, reference comparisons).
        padding_invariant: Zero padded positions before every encoder and postnet convolution, so an
            item's outputs (in eval mode) do not depend on what it is batched with. NVIDIA's code
            does not: its encoder convolutions read the pad symbol's embedding past a shorter text,
            and its postnet reads the frames decoded past a shorter mel. False reproduces NVIDIA's
            outputs on padded batches exactly; on a batch of one both are the same.
    """

    mask_padding: bool = False
    n_mel_channels: int = 80
    n_symbols: int = 148
    symbols_embedding_dim: int = 512
    encoder_kernel_size: int = 5
    encoder_n_convolutions: int = 3
    encoder_embedding_dim: int = 512
    attention_rnn_dim: int = 1024
    attention_dim: int = 128
    attention_location_n_filters: int = 32
    attention_location_kernel_size: int = 31
    n_frames_per_step: int = 1
    decoder_rnn_dim: int = 1024
    prenet_dim: int = 256
    max_decoder_steps: int = 2000
    gate_threshold: float = 0.5
    p_attention_dropout: float = 0.1
    p_decoder_dropout: float = 0.1
    postnet_embedding_dim: int = 512
    postnet_kernel_size: int = 5
    postnet_n_convolutions: int = 5
    decoder_no_early_stopping: bool = False
    p_prenet_dropout: float = _CONV_DROPOUT
    padding_invariant: bool = True

    def __post_init__(self) -> None:
        problems = []
        if self.symbols_embedding_dim != self.encoder_embedding_dim:
            problems.append(
                f"symbols_embedding_dim ({self.symbols_embedding_dim}) must equal encoder_embedding_dim "
                f"({self.encoder_embedding_dim}): the encoder convolutions read the embeddings"
            )
        if self.encoder_embedding_dim % 2:
            problems.append(
                f"encoder_embedding_dim must be even (two LSTM directions), got {self.encoder_embedding_dim}"
            )
        for name in ("encoder_kernel_size", "attention_location_kernel_size", "postnet_kernel_size"):
            if getattr(self, name) % 2 == 0:
                problems.append(f"{name} must be odd (same-length convolution), got {getattr(self, name)}")
        if self.n_frames_per_step != 1:
            problems.append(f"n_frames_per_step must be 1 (as in NVIDIA's recipe), got {self.n_frames_per_step}")
        if self.postnet_n_convolutions < 2:
            problems.append(f"postnet_n_convolutions must be at least 2, got {self.postnet_n_convolutions}")
        if self.max_decoder_steps < 1:
            problems.append(f"max_decoder_steps must be at least 1, got {self.max_decoder_steps}")
        for name in ("p_attention_dropout", "p_decoder_dropout", "p_prenet_dropout"):
            if not 0.0 <= getattr(self, name) < 1.0:
                problems.append(f"{name} must be in [0, 1), got {getattr(self, name)}")
        if problems:
            raise ValueError("Tacotron 2 config: " + "; ".join(problems))

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> Tacotron2Config:
        """A config from a mapping of its fields; ValueError naming unknown keys."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"Tacotron 2 config: unknown keys {unknown}; expected some of {sorted(known)}")
        return cls(**values)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class Tacotron2Output(NamedTuple):
    """What the teacher-forced forward returns.

    Attributes:
        mel: ``(B, n_mels, T)`` decoder log-mel (before the postnet).
        mel_postnet: ``(B, n_mels, T)`` ``mel`` plus the postnet's residual: the model's output.
        gate: ``(B, T)`` stop-gate logits (sigmoid > threshold: the frame is the last one).
        alignments: ``(B, T, N)`` attention of each decoder step over the ``N = max(text_lengths)``
            encoder outputs; rows sum to 1 over the item's real symbols.

    With ``mask_padding`` and ``mel_lengths``, frames past each item's length hold 0 in both mels
    and 1000 in the gate (NVIDIA's values: the MSE and BCE against padded targets vanish).
    """

    mel: torch.Tensor
    mel_postnet: torch.Tensor
    gate: torch.Tensor
    alignments: torch.Tensor


class Tacotron2Inference(NamedTuple):
    """What :meth:`Tacotron2.infer` returns.

    Attributes:
        mel: ``(B, n_mels, T)`` log-mel after the postnet, ``T`` the steps decoded.
        mel_lengths: ``(B,)`` int64 frames of each item: up to and including the first whose gate
            passed the threshold (``T`` when it never did). NVIDIA's ``infer`` counts one fewer, leaving
            out that frame although its training targets mark it as the last real one. Frames from
            ``mel_lengths`` on are not speech.
        gate: ``(B, T)`` stop-gate logits.
        alignments: ``(B, T, N)`` attention of each step over the encoder outputs.
        stopped: ``(B,)`` bool, False for an item whose gate never fired within ``max_decoder_steps``
            (its mel is cut, not finished).
    """

    mel: torch.Tensor
    mel_lengths: torch.Tensor
    gate: torch.Tensor
    alignments: torch.Tensor
    stopped: torch.Tensor


def lengths_to_mask(lengths: torch.Tensor, max_len: int | None = None) -> torch.Tensor:
    """``(B, max_len)`` bool, True on the first ``lengths[b]`` positions of each row."""
    max_len = int(lengths.max()) if max_len is None else max_len
    return torch.arange(max_len, device=lengths.device)[None, :] < lengths[:, None]


# --------------------------------------------------------------------------------------------------
# layers (the wrapper attribute names, ``linear_layer`` and ``conv``, are NVIDIA's state-dict names)
# --------------------------------------------------------------------------------------------------


class _Linear(nn.Module):
    """A Linear layer with Xavier-uniform weights scaled for the activation that follows."""

    def __init__(self, in_dim: int, out_dim: int, *, bias: bool = True, gain: str = "linear") -> None:
        super().__init__()
        self.linear_layer = nn.Linear(in_dim, out_dim, bias=bias)
        nn.init.xavier_uniform_(self.linear_layer.weight, gain=nn.init.calculate_gain(gain))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear_layer(x)


class _Conv(nn.Module):
    """A same-length Conv1d (odd kernel) with Xavier-uniform weights scaled for what follows."""

    def __init__(
        self, in_channels: int, out_channels: int, kernel_size: int, *, bias: bool = True, gain: str = "linear"
    ) -> None:
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, padding=(kernel_size - 1) // 2, bias=bias)
        nn.init.xavier_uniform_(self.conv.weight, gain=nn.init.calculate_gain(gain))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def _conv_bn(in_channels: int, out_channels: int, kernel_size: int, gain: str) -> nn.Sequential:
    """Convolution then BatchNorm, as ``Sequential`` children 0 and 1 (NVIDIA's key layout)."""
    return nn.Sequential(_Conv(in_channels, out_channels, kernel_size, gain=gain), nn.BatchNorm1d(out_channels))


def _masked(x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """``x`` ``(B, C, L)`` with the positions where ``mask`` ``(B, L)`` is False set to 0."""
    return x if mask is None else x * mask[:, None, :].to(x.dtype)


class Encoder(nn.Module):
    """Convolutions over the symbol embeddings, then a bidirectional LSTM over the real symbols."""

    def __init__(self, cfg: Tacotron2Config) -> None:
        super().__init__()
        dim = cfg.encoder_embedding_dim
        self.convolutions = nn.ModuleList(
            [_conv_bn(dim, dim, cfg.encoder_kernel_size, "relu") for _ in range(cfg.encoder_n_convolutions)]
        )
        self.lstm = nn.LSTM(dim, dim // 2, 1, batch_first=True, bidirectional=True)

    def forward(self, x: torch.Tensor, lengths: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        """``(B, E, L)`` embeddings and ``(B,)`` lengths -> ``(B, max(lengths), E)``, 0 past each length.

        ``mask`` ``(B, L)``: zero padded positions before each convolution (None: NVIDIA's way).
        """
        for layer in self.convolutions:
            x = F.dropout(F.relu(layer(_masked(x, mask))), _CONV_DROPOUT, self.training)
        packed = nn.utils.rnn.pack_padded_sequence(
            x.transpose(1, 2), lengths.cpu(), batch_first=True, enforce_sorted=False
        )
        outputs, _ = self.lstm(packed)
        outputs, _ = nn.utils.rnn.pad_packed_sequence(outputs, batch_first=True)
        return outputs


class Prenet(nn.Module):
    """Two ReLU layers without bias, each followed by dropout that stays on in eval mode."""

    def __init__(self, cfg: Tacotron2Config) -> None:
        super().__init__()
        sizes = [cfg.n_mel_channels * cfg.n_frames_per_step, cfg.prenet_dim, cfg.prenet_dim]
        self.layers = nn.ModuleList([_Linear(a, b, bias=False) for a, b in zip(sizes[:-1], sizes[1:], strict=True)])
        self.p_dropout = cfg.p_prenet_dropout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``(..., n_mels)`` -> ``(..., prenet_dim)``."""
        for layer in self.layers:
            x = F.dropout(F.relu(layer(x)), self.p_dropout, training=True)
        return x


class LocationLayer(nn.Module):
    """Features of where the attention was: a convolution over the previous and cumulative weights."""

    def __init__(self, cfg: Tacotron2Config) -> None:
        super().__init__()
        self.location_conv = _Conv(
            2, cfg.attention_location_n_filters, cfg.attention_location_kernel_size, bias=False
        )
        self.location_dense = _Linear(cfg.attention_location_n_filters, cfg.attention_dim, bias=False, gain="tanh")

    def forward(self, weights: torch.Tensor) -> torch.Tensor:
        """``(B, 2, N)`` previous and cumulative weights -> ``(B, N, attention_dim)``."""
        return self.location_dense(self.location_conv(weights).transpose(1, 2))


class Attention(nn.Module):
    """Location-sensitive additive attention: ``v . tanh(W q + V m_j + U f_j)`` over the symbols j."""

    def __init__(self, cfg: Tacotron2Config) -> None:
        super().__init__()
        self.query_layer = _Linear(cfg.attention_rnn_dim, cfg.attention_dim, bias=False, gain="tanh")
        self.memory_layer = _Linear(cfg.encoder_embedding_dim, cfg.attention_dim, bias=False, gain="tanh")
        self.v = _Linear(cfg.attention_dim, 1, bias=False)
        self.location_layer = LocationLayer(cfg)

    def forward(
        self,
        query: torch.Tensor,
        memory: torch.Tensor,
        processed_memory: torch.Tensor,
        previous_weights: torch.Tensor,
        padded: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """One attention step.

        Args:
            query: ``(B, attention_rnn_dim)`` attention-LSTM output.
            memory: ``(B, N, E)`` encoder outputs.
            processed_memory: ``(B, N, attention_dim)`` ``memory_layer(memory)``, computed once.
            previous_weights: ``(B, 2, N)`` the last step's weights and their running sum.
            padded: ``(B, N)`` bool, True on padded symbols (they get no attention).

        Returns:
            ``(B, E)`` context and ``(B, N)`` weights.
        """
        energies = self.v(
            torch.tanh(self.query_layer(query)[:, None, :] + self.location_layer(previous_weights) + processed_memory)
        ).squeeze(2)
        weights = F.softmax(energies.masked_fill(padded, float("-inf")), dim=1)
        context = torch.bmm(weights[:, None, :], memory).squeeze(1)
        return context, weights


class _DecoderState(NamedTuple):
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
        self.linear_projection = _Linear(cfg.decoder_rnn_dim + enc, cfg.n_mel_channels * cfg.n_frames_per_step)
        self.gate_layer = _Linear(cfg.decoder_rnn_dim + enc, 1, gain="sigmoid")

    def initial_state(self, memory: torch.Tensor) -> _DecoderState:
        """All-zero state for ``(B, N, E)`` memory."""
        batch, n_symbols, _ = memory.shape

        def zeros(*shape: int) -> torch.Tensor:
            return memory.new_zeros(batch, *shape)

        return _DecoderState(
            zeros(self.cfg.attention_rnn_dim),
            zeros(self.cfg.attention_rnn_dim),
            zeros(self.cfg.decoder_rnn_dim),
            zeros(self.cfg.decoder_rnn_dim),
            zeros(n_symbols),
            zeros(n_symbols),
            zeros(self.cfg.encoder_embedding_dim),
        )

    def step(
        self,
        prenet_out: torch.Tensor,
        state: _DecoderState,
        memory: torch.Tensor,
        processed_memory: torch.Tensor,
        padded: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor, _DecoderState]:
        """One decoder step from the prenet output of the previous frame, ``(B, prenet_dim)``.

        Returns ``(B, n_mels)`` frame, ``(B,)`` gate logit and the new state.
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
        )
        decoder_hidden, decoder_cell = self.decoder_rnn(
            torch.cat((attention_hidden, context), -1), (state.decoder_hidden, state.decoder_cell)
        )
        decoder_hidden = F.dropout(decoder_hidden, self.cfg.p_decoder_dropout, self.training)
        features = torch.cat((decoder_hidden, context), dim=1)
        frame = self.linear_projection(features)
        gate = self.gate_layer(features).squeeze(1)
        weights_cum = state.weights_cum + weights
        new_state = _DecoderState(
            attention_hidden, attention_cell, decoder_hidden, decoder_cell, weights, weights_cum, context
        )
        return frame, gate, new_state

    def forward(
        self, memory: torch.Tensor, mels: torch.Tensor, memory_lengths: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Teacher-forced decoding: step t reads ground-truth frame t - 1 (an all-zero frame at t = 0).

        Args:
            memory: ``(B, N, E)`` encoder outputs.
            mels: ``(B, n_mels, T)`` target log-mels.
            memory_lengths: ``(B,)`` real symbols per item.

        Returns:
            ``(B, n_mels, T)`` frames, ``(B, T)`` gate logits and ``(B, T, N)`` attention weights.
        """
        # The prenet of the all-zero frame and every target frame at once, time first: the same
        # dropout draws as NVIDIA's code (which also passes the last frame, though no step reads it).
        inputs = torch.cat((mels.new_zeros(mels.shape[0], mels.shape[1], 1), mels), dim=2)
        prenet_out = self.prenet(inputs.permute(2, 0, 1))  # (T + 1, B, prenet_dim)
        padded = ~lengths_to_mask(memory_lengths, memory.shape[1])
        processed_memory = self.attention_layer.memory_layer(memory)
        state = self.initial_state(memory)
        frames, gates, alignments = [], [], []
        for t in range(mels.shape[2]):
            frame, gate, state = self.step(prenet_out[t], state, memory, processed_memory, padded)
            frames.append(frame)
            gates.append(gate)
            alignments.append(state.weights)
        return torch.stack(frames, dim=2), torch.stack(gates, dim=1), torch.stack(alignments, dim=1)

    def infer(
        self,
        memory: torch.Tensor,
        memory_lengths: torch.Tensor,
        *,
        max_decoder_steps: int,
        gate_threshold: float,
        early_stopping: bool,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """Free-running decoding: each step reads the frame the last one made.

        Stops when every item's gate has passed ``gate_threshold`` (with ``early_stopping``) or after
        ``max_decoder_steps``. Returns ``(B, n_mels, T)`` frames, ``(B, T)`` gate logits, ``(B, T, N)``
        weights, ``(B,)`` int64 lengths and ``(B,)`` bool stopped (see :class:`Tacotron2Inference`).
        """
        batch = memory.shape[0]
        padded = ~lengths_to_mask(memory_lengths, memory.shape[1])
        processed_memory = self.attention_layer.memory_layer(memory)
        state = self.initial_state(memory)
        frame = memory.new_zeros(batch, self.cfg.n_mel_channels * self.cfg.n_frames_per_step)
        lengths = torch.zeros(batch, dtype=torch.long, device=memory.device)
        stopped = torch.zeros(batch, dtype=torch.bool, device=memory.device)
        frames, gates, alignments = [], [], []
        while True:
            frame, gate, state = self.step(self.prenet(frame), state, memory, processed_memory, padded)
            frames.append(frame)
            gates.append(gate)
            alignments.append(state.weights)
            lengths += (~stopped).long()
            stopped |= torch.sigmoid(gate) > gate_threshold
            if early_stopping and bool(stopped.all()):
                break
            if len(frames) == max_decoder_steps:
                break
        return torch.stack(frames, dim=2), torch.stack(gates, dim=1), torch.stack(alignments, dim=1), lengths, stopped


class Postnet(nn.Module):
    """Convolutions (tanh after all but the last) predicting a residual for the decoder's mel."""

    def __init__(self, cfg: Tacotron2Config) -> None:
        super().__init__()
        n_mels, dim, kernel = cfg.n_mel_channels, cfg.postnet_embedding_dim, cfg.postnet_kernel_size
        n_middle = cfg.postnet_n_convolutions - 2
        self.convolutions = nn.ModuleList(
            [
                _conv_bn(n_mels, dim, kernel, "tanh"),
                *(_conv_bn(dim, dim, kernel, "tanh") for _ in range(n_middle)),
                _conv_bn(dim, n_mels, kernel, "linear"),
            ]
        )

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        """``(B, n_mels, T)`` -> ``(B, n_mels, T)`` residual; ``mask`` ``(B, T)`` zeroes padded frames
        before each convolution (None: NVIDIA's way)."""
        last = len(self.convolutions) - 1
        for i, layer in enumerate(self.convolutions):
            x = layer(_masked(x, mask))
            x = F.dropout(x if i == last else torch.tanh(x), _CONV_DROPOUT, self.training)
        return x


# --------------------------------------------------------------------------------------------------
# the model
# --------------------------------------------------------------------------------------------------


class Tacotron2(nn.Module):
    """NVIDIA's Tacotron 2 (see the module docstring).

    Args:
        cfg: Hyperparameters (NVIDIA's defaults).
    """

    def __init__(self, cfg: Tacotron2Config | None = None) -> None:
        super().__init__()
        self.cfg = cfg = cfg or Tacotron2Config()
        self.embedding = nn.Embedding(cfg.n_symbols, cfg.symbols_embedding_dim)
        bound = math.sqrt(3.0) * math.sqrt(2.0 / (cfg.n_symbols + cfg.symbols_embedding_dim))
        nn.init.uniform_(self.embedding.weight, -bound, bound)
        self.encoder = Encoder(cfg)
        self.decoder = Decoder(cfg)
        self.postnet = Postnet(cfg)
        # NVIDIA's training starts every BatchNorm scale uniform in [0, 1) (their default init_bn).
        for module in self.modules():
            if isinstance(module, nn.BatchNorm1d):
                nn.init.uniform_(module.weight)

    def model_config(self) -> dict[str, Any]:
        """The constructor arguments as plain values: :meth:`from_config` rebuilds the network."""
        return self.cfg.as_dict()

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> Tacotron2:
        return cls(Tacotron2Config.from_mapping(config))

    def _encode(self, text: torch.Tensor, text_lengths: torch.Tensor) -> torch.Tensor:
        """``(B, L)`` ids -> ``(B, max(text_lengths), E)`` encoder outputs."""
        if text.dim() != 2 or text_lengths.shape != text.shape[:1]:
            raise ValueError(
                f"text (B, L) and text_lengths (B,) expected, got {tuple(text.shape)} and {tuple(text_lengths.shape)}"
            )
        if int(text_lengths.min()) < 1 or int(text_lengths.max()) > text.shape[1]:
            raise ValueError(f"text_lengths must be in [1, {text.shape[1]}], got {text_lengths.tolist()}")
        mask = lengths_to_mask(text_lengths, text.shape[1]) if self.cfg.padding_invariant else None
        return self.encoder(self.embedding(text).transpose(1, 2), text_lengths, mask)

    def forward(
        self,
        text: torch.Tensor,
        text_lengths: torch.Tensor,
        mels: torch.Tensor,
        mel_lengths: torch.Tensor | None = None,
    ) -> Tacotron2Output:
        """Teacher-forced forward (training, validation, alignment extraction).

        Args:
            text: ``(B, L)`` int64 symbol ids, padded with any id (NVIDIA's collate uses 0).
            text_lengths: ``(B,)`` real symbols per item, any order (NVIDIA's code needs them sorted
                longest first; the result is the same).
            mels: ``(B, n_mels, T)`` target log-mels, zero-padded.
            mel_lengths: ``(B,)`` real frames per item, or None (every frame is real). Needed for
                ``mask_padding`` and ``padding_invariant``.

        Returns:
            :class:`Tacotron2Output`.
        """
        if mels.dim() != 3 or mels.shape[1] != self.cfg.n_mel_channels or mels.shape[0] != text.shape[0]:
            raise ValueError(
                f"mels: expected ({text.shape[0]}, {self.cfg.n_mel_channels}, T), got {tuple(mels.shape)}"
            )
        memory = self._encode(text, text_lengths)
        mel, gate, alignments = self.decoder(memory, mels, text_lengths)
        frame_mask = None
        if mel_lengths is not None:
            frame_mask = lengths_to_mask(mel_lengths, mels.shape[2])
        postnet_mask = frame_mask if self.cfg.padding_invariant else None
        mel_postnet = mel + self.postnet(_masked(mel, postnet_mask), postnet_mask)
        if self.cfg.mask_padding and frame_mask is not None:
            padded = ~frame_mask
            mel = mel.masked_fill(padded[:, None, :], 0.0)
            mel_postnet = mel_postnet.masked_fill(padded[:, None, :], 0.0)
            gate = gate.masked_fill(padded, _PADDED_GATE)
        return Tacotron2Output(mel, mel_postnet, gate, alignments)

    @torch.no_grad()
    def infer(
        self,
        text: torch.Tensor,
        text_lengths: torch.Tensor | None = None,
        *,
        max_decoder_steps: int | None = None,
        gate_threshold: float | None = None,
    ) -> Tacotron2Inference:
        """Synthesise log-mels autoregressively, until the stop gate fires.

        Args:
            text: ``(B, L)`` int64 symbol ids.
            text_lengths: ``(B,)`` real symbols per item; None: all ``L``.
            max_decoder_steps: Most frames to decode (default: the config's).
            gate_threshold: Gate probability that ends an item (default: the config's).

        Returns:
            :class:`Tacotron2Inference`. An item whose gate never fires is cut at
            ``max_decoder_steps``: a warning is logged and its ``stopped`` is False.
        """
        if text_lengths is None:
            text_lengths = torch.full((text.shape[0],), text.shape[1], dtype=torch.long, device=text.device)
        max_steps = self.cfg.max_decoder_steps if max_decoder_steps is None else int(max_decoder_steps)
        if max_steps < 1:
            raise ValueError(f"max_decoder_steps: expected >= 1, got {max_steps}")
        memory = self._encode(text, text_lengths)
        mel, gate, alignments, lengths, stopped = self.decoder.infer(
            memory,
            text_lengths,
            max_decoder_steps=max_steps,
            gate_threshold=self.cfg.gate_threshold if gate_threshold is None else float(gate_threshold),
            early_stopping=not self.cfg.decoder_no_early_stopping,
        )
        mask = lengths_to_mask(lengths, mel.shape[2]) if self.cfg.padding_invariant else None
        mel_postnet = mel + self.postnet(_masked(mel, mask), mask)
        if not bool(stopped.all()):
            log.warning(
                "Tacotron 2: the stop gate never fired for %d of %d item(s) within max_decoder_steps=%d; "
                "their mels are cut there (items %s)",
                int((~stopped).sum()),
                len(stopped),
                max_steps,
                (~stopped).nonzero().flatten().tolist(),
            )
        return Tacotron2Inference(mel_postnet, lengths, gate, alignments, stopped)
