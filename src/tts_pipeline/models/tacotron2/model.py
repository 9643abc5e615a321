"""Tacotron 2 as in NVIDIA's DeepLearningExamples recipe: characters to a log-mel, autoregressively,
with location-sensitive attention (the model FastPitch 1.0 takes its durations from).

embedding ``(B, L)`` -> ``(B, E, L)`` -> encoder (:mod:`.encoder`) ``(B, N, E)`` -> decoder
(:mod:`.decoder`, attending with :mod:`.attention`) ``(B, n_mels, T)`` frames and ``(B, T)`` stop-gate
logits -> postnet (:mod:`.postnet`) adds a residual ``(B, n_mels, T)``. Hyperparameters are
:class:`~tts_pipeline.models.tacotron2.config.Tacotron2Config`.

Module and parameter names give NVIDIA's state-dict keys, so one of their checkpoints loads with
``load_state_dict`` once a DistributedDataParallel ``module.`` prefix is stripped
(:mod:`tts_pipeline.models.tacotron2.foreign`). Mels are ``(B, n_mels, T)``, the project's convention.
Dropout is NVIDIA's: see the encoder, decoder and postnet modules for where it applies.

With ``attention_prior_scaling`` > 0 and ``attention_prior_weight`` > 0 (not NVIDIA's) the attention
energies get a beta-binomial log-prior, times the weight: in the teacher-forced forward when
``mel_lengths`` is given, and in :meth:`Tacotron2.infer` only with
``attention_prior_frames_per_symbol`` > 0 (a prior for the expected length); see
:class:`~tts_pipeline.models.tacotron2.config.Tacotron2Config`.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Mapping
from typing import Any, NamedTuple

import torch
from torch import nn

from tts_pipeline.models.tacotron2.attention import expected_length_log_prior, teacher_forced_log_prior
from tts_pipeline.models.tacotron2.config import Tacotron2Config
from tts_pipeline.models.tacotron2.decoder import Decoder
from tts_pipeline.models.tacotron2.encoder import Encoder
from tts_pipeline.models.tacotron2.layers import lengths_to_mask, masked
from tts_pipeline.models.tacotron2.postnet import Postnet

log = logging.getLogger(__name__)

__all__ = ["Tacotron2", "Tacotron2Inference", "Tacotron2Output"]

# The gate logit NVIDIA writes on padded frames with ``mask_padding`` (sigmoid 1: "stopped").
_PADDED_GATE = 1e3


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

    def uses_prior(self) -> bool:
        """Whether the attention energies get the alignment prior (never in NVIDIA's model)."""
        return self.cfg.attention_prior_scaling > 0 and self.cfg.attention_prior_weight > 0

    def set_attention_prior_weight(self, weight: float) -> None:
        """Change the prior's weight (training's schedule); the model file records the last one."""
        self.cfg = dataclasses.replace(self.cfg, attention_prior_weight=float(weight))

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
                ``mask_padding``, ``padding_invariant`` and the attention prior (without it, no prior).

        Returns:
            :class:`Tacotron2Output`.
        """
        if mels.dim() != 3 or mels.shape[1] != self.cfg.n_mel_channels or mels.shape[0] != text.shape[0]:
            raise ValueError(f"mels: expected ({text.shape[0]}, {self.cfg.n_mel_channels}, T), got {tuple(mels.shape)}")
        memory = self._encode(text, text_lengths)
        log_prior = None
        if self.uses_prior() and mel_lengths is not None:
            log_prior = self.cfg.attention_prior_weight * teacher_forced_log_prior(
                text_lengths, mel_lengths, mels.shape[2], memory.shape[1], self.cfg.attention_prior_scaling
            ).to(memory.dtype)
        mel, gate, alignments = self.decoder(memory, mels, text_lengths, log_prior)
        frame_mask = None
        if mel_lengths is not None:
            frame_mask = lengths_to_mask(mel_lengths, mels.shape[2])
        postnet_mask = frame_mask if self.cfg.padding_invariant else None
        mel_postnet = mel + self.postnet(masked(mel, postnet_mask), postnet_mask)
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
        log_prior = None
        if self.uses_prior() and self.cfg.attention_prior_frames_per_symbol > 0:
            log_prior = self.cfg.attention_prior_weight * expected_length_log_prior(
                text_lengths,
                memory.shape[1],
                self.cfg.attention_prior_frames_per_symbol,
                self.cfg.attention_prior_scaling,
            ).to(memory.dtype)
        mel, gate, alignments, lengths, stopped = self.decoder.infer(
            memory,
            text_lengths,
            max_decoder_steps=max_steps,
            gate_threshold=self.cfg.gate_threshold if gate_threshold is None else float(gate_threshold),
            early_stopping=not self.cfg.decoder_no_early_stopping,
            log_prior=log_prior,
        )
        mask = lengths_to_mask(lengths, mel.shape[2]) if self.cfg.padding_invariant else None
        mel_postnet = mel + self.postnet(masked(mel, mask), mask)
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
