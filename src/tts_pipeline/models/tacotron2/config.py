"""Tacotron 2's hyperparameters: NVIDIA's constructor names and published defaults, checked on creation.

The config is the whole of what rebuilds a network (:meth:`Tacotron2.model_config
<tts_pipeline.models.tacotron2.model.Tacotron2.model_config>` writes it into the model file, and
NVIDIA's checkpoints carry the same names under ``config``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

__all__ = ["CONV_DROPOUT", "Tacotron2Config"]

# Dropout of the encoder and postnet convolutions and of the prenet layers (fixed in NVIDIA's code).
CONV_DROPOUT = 0.5


@dataclass(frozen=True)
class Tacotron2Config:
    """Tacotron 2's hyperparameters, under NVIDIA's constructor names, with their published defaults.

    ``n_symbols`` 148 is the ``english_basic`` symbol set (pad, ``-``, punctuation, letters and the 84
    ``@`` ARPAbet phones), which :mod:`tts_pipeline.text` gives in NVIDIA's order.

    Five fields are this project's, not NVIDIA's (their defaults are NVIDIA's model):

    Attributes:
        p_prenet_dropout: Dropout of the prenet, always on (NVIDIA fixes it at 0.5). 0 makes
            inference deterministic (tests, reference comparisons).
        padding_invariant: Zero padded positions before every encoder and postnet convolution, so an
            item's outputs (in eval mode) do not depend on what it is batched with. NVIDIA's code
            does not: its encoder convolutions read the pad symbol's embedding past a shorter text,
            and its postnet reads the frames decoded past a shorter mel. False reproduces NVIDIA's
            outputs on padded batches exactly; on a batch of one both are the same.
        attention_prior_scaling: 0 (NVIDIA's attention) or the scaling of a beta-binomial alignment
            prior (FastPitch 1.1's, 1.0 there) whose log is added to the attention energies wherever
            the mel length is known: teacher-forced training, validation and duration extraction.
            It tells the attention where along the text each frame roughly is, so the alignment
            forms in few steps on little data.
        attention_prior_weight: Factor of that log-prior (1: the prior as it is; 0: none). Training
            may fade it out (``tacotron2.attention_prior_epochs``); the model file records the weight
            the model was last trained with, which duration extraction then uses.
        attention_prior_frames_per_symbol: Free-running inference with the prior: 0 decodes without
            it (the attention is on its own, as it is in NVIDIA's model); > 0 builds it for an
            expected length of this many frames per symbol (the training corpus's mean). Unused
            without ``attention_prior_scaling``.
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
    p_prenet_dropout: float = CONV_DROPOUT
    padding_invariant: bool = True
    attention_prior_scaling: float = 0.0
    attention_prior_weight: float = 1.0
    attention_prior_frames_per_symbol: float = 0.0

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
        if self.n_frames_per_step < 1:
            problems.append(f"n_frames_per_step must be at least 1 (NVIDIA's recipe: 1), got {self.n_frames_per_step}")
        if self.postnet_n_convolutions < 2:
            problems.append(f"postnet_n_convolutions must be at least 2, got {self.postnet_n_convolutions}")
        if self.max_decoder_steps < 1:
            problems.append(f"max_decoder_steps must be at least 1, got {self.max_decoder_steps}")
        for name in ("p_attention_dropout", "p_decoder_dropout", "p_prenet_dropout"):
            if not 0.0 <= getattr(self, name) < 1.0:
                problems.append(f"{name} must be in [0, 1), got {getattr(self, name)}")
        if self.attention_prior_scaling < 0:
            problems.append(f"attention_prior_scaling must be >= 0 (0: no prior), got {self.attention_prior_scaling}")
        if self.attention_prior_weight < 0:
            problems.append(f"attention_prior_weight must be >= 0, got {self.attention_prior_weight}")
        if self.attention_prior_frames_per_symbol < 0:
            problems.append(
                "attention_prior_frames_per_symbol must be >= 0 (0: no prior at inference), got "
                f"{self.attention_prior_frames_per_symbol}"
            )
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
