"""FastPitch 1.1 without its aligner: symbols to a log-mel, given per-token durations (reference 3.1-3.2).

(+ speaker embedding) encoder (FFT over symbols) -> duration and pitch predictors -> + pitch embedding
-> energy predictor -> + energy embedding -> length regulator (each token repeated for its frames)
-> decoder (FFT over frames) -> Linear to ``n_mels``.

Training (:meth:`FastPitch.forward`) is teacher-forced: the target durations, pitch and energy
condition the decoder, and the predictors learn to predict them from the encoder output. Inference
(:meth:`FastPitch.infer`) uses the predictions instead, optionally paced and pitch-transformed.

A multi-speaker model (``n_speakers`` > 1) has NVIDIA's speaker embedding: a learned vector per speaker
id, times ``speaker_emb_weight``, added to every symbol's input embedding (with the positions) before
the encoder, so the durations, pitch, energy and mel all depend on the speaker. ``speaker`` None means
speaker 0, as in NVIDIA's ``infer``; a single-speaker model has no embedding and no extra weights.

Tensors are channels-last inside, ``(B, L, C)`` as in NVIDIA's code; mels come out ``(B, n_mels, T)``,
the project's mel convention. Module and buffer names match NVIDIA's state dicts (section 6.3), so
:func:`convert_state_dict` and :func:`config_from_nvidia` load its published checkpoints.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from typing import Any, NamedTuple

import torch
from torch import nn

from tts_pipeline.config import FASTPITCH_MODEL_FIELDS, FastPitchConfig
from tts_pipeline.models.fastpitch.pitch import PitchTransform
from tts_pipeline.models.fastpitch.predictors import TemporalPredictor
from tts_pipeline.models.fastpitch.transformer import FFTransformer

__all__ = [
    "FastPitch",
    "FastPitchInference",
    "FastPitchInputs",
    "FastPitchOutput",
    "PitchTransform",
    "config_from_nvidia",
    "convert_state_dict",
    "length_regulate",
    "pace_durations",
]


class FastPitchInputs(NamedTuple):
    """A training batch (teacher forcing).

    Attributes:
        tokens: ``(B, L)`` int64 symbol ids, 0 = padding.
        token_lengths: ``(B,)`` int64 real tokens per item.
        durations: ``(B, L)`` int64 target frames per token (0 on padding).
        pitch: ``(B, L)`` float normalised per-token pitch, ``(hz - mean) / std``; 0 for unvoiced and padding.
        energy: ``(B, L)`` float ``log(1 + mean frame energy)`` per token, or None without energy conditioning.
        speaker: ``(B,)`` int64 speaker ids in ``0 .. n_speakers - 1``; None: speaker 0 (all a
            single-speaker model accepts).
    """

    tokens: torch.Tensor
    token_lengths: torch.Tensor
    durations: torch.Tensor
    pitch: torch.Tensor
    energy: torch.Tensor | None
    speaker: torch.Tensor | None = None


class FastPitchOutput(NamedTuple):
    """What the teacher-forced forward returns.

    Attributes:
        mel: ``(B, n_mels, T_max)`` log-mel, 0 on padded frames; ``T_max = max(sum(durations))``
            (or ``mel_max_len`` if given).
        mel_lengths: ``(B,)`` int64 frames per item, ``durations.sum(1)`` (cut at ``mel_max_len``).
        log_duration: ``(B, L)`` predicted ``log(d + 1)``, 0 on padding.
        pitch: ``(B, L)`` predicted normalised pitch, 0 on padding.
        energy: ``(B, L)`` predicted ``log(1 + energy)``, or None without energy conditioning.
        token_mask: ``(B, L)`` bool, True on real tokens.
    """

    mel: torch.Tensor
    mel_lengths: torch.Tensor
    log_duration: torch.Tensor
    pitch: torch.Tensor
    energy: torch.Tensor | None
    token_mask: torch.Tensor


class FastPitchInference(NamedTuple):
    """What :meth:`FastPitch.infer` returns.

    Attributes:
        mel: ``(B, n_mels, T_max)`` log-mel, 0 on padded frames.
        mel_lengths: ``(B,)`` int64 frames per item.
        durations: ``(B, L)`` int64 frames used per token (after the ``max_duration`` clamp and pace).
        pitch: ``(B, L)`` normalised pitch used (after any transform), 0 on padding.
        energy: ``(B, L)`` ``log(1 + energy)`` used, or None without energy conditioning.
    """

    mel: torch.Tensor
    mel_lengths: torch.Tensor
    durations: torch.Tensor
    pitch: torch.Tensor
    energy: torch.Tensor | None


# --------------------------------------------------------------------------------------------------
# length regulator
# --------------------------------------------------------------------------------------------------


def pace_durations(durations: torch.Tensor, pace: float | torch.Tensor = 1.0) -> torch.Tensor:
    """Frames per token at a pace: ``floor(d / pace + 0.5)`` as int64, negatives to 0.

    ``pace`` 2.0 speaks twice as fast (half the frames), 0.5 half as fast; a ``(B, 1)`` tensor paces
    each item (the exported graph's input, checked by whoever feeds it).
    """
    if not isinstance(pace, torch.Tensor) and pace <= 0:
        raise ValueError(f"pace: expected > 0, got {pace}")
    return torch.floor(durations.float() / pace + 0.5).long().clamp_min(0)


def length_regulate(
    encoded: torch.Tensor, durations: torch.Tensor, pace: float = 1.0, mel_max_len: int | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Repeat each token's vector for its frames.

    Args:
        encoded: ``(B, L, C)`` per-token features.
        durations: ``(B, L)`` frames per token (int or float; paced by :func:`pace_durations`).
        pace: Speaking-rate factor.
        mel_max_len: Output length ``T``: longer outputs are cut, shorter ones zero-padded. None:
            the longest item's length, at least one frame (so that all-zero durations still decode).

    Returns:
        ``(B, T, C)`` frames, zero past each item's length, and ``(B,)`` int64 lengths (at most ``T``).
    """
    if durations.shape != encoded.shape[:2]:
        raise ValueError(f"durations: expected shape {tuple(encoded.shape[:2])}, got {tuple(durations.shape)}")
    if mel_max_len is not None and mel_max_len < 1:
        raise ValueError(f"mel_max_len: expected >= 1, got {mel_max_len}")
    repeats = pace_durations(durations, pace)
    ends = repeats.cumsum(1)  # (B, L): one past each token's last frame
    lengths = ends[:, -1]
    if mel_max_len is None and torch.jit.is_tracing():
        # An exported graph (tts_pipeline.export): the frame count stays a tensor, so the graph serves
        # any length, and ONNX has no searchsorted, so each frame's token is the number of token ends at
        # or before it: the same integers, at (B, T, L) comparisons.
        n_frames: int | torch.Tensor = lengths.max().clamp_min(1)
        frames = torch.arange(n_frames, device=encoded.device).expand(encoded.shape[0], -1)
        token = (ends.unsqueeze(1) <= frames.unsqueeze(2)).sum(2)
    else:
        n_frames = mel_max_len if mel_max_len is not None else max(int(lengths.max()), 1)
        frames = torch.arange(n_frames, device=encoded.device).expand(encoded.shape[0], -1).contiguous()
        # The token of frame t is the first whose end is past t; zero-length tokens are skipped.
        token = torch.searchsorted(ends, frames, right=True)
    token = token.clamp_max(encoded.shape[1] - 1)
    lengths = lengths.clamp_max(n_frames)
    valid = (frames < lengths[:, None]).unsqueeze(2).to(encoded.dtype)
    regulated = torch.gather(encoded, 1, token.unsqueeze(2).expand(-1, -1, encoded.shape[2]))
    return regulated * valid, lengths


# --------------------------------------------------------------------------------------------------
# the model
# --------------------------------------------------------------------------------------------------


class FastPitch(nn.Module):
    """FastPitch 1.1's acoustic model (no aligner), with NVIDIA's speaker embedding when ``n_speakers`` > 1.

    Args:
        cfg: The ``fastpitch`` section; only :data:`~tts_pipeline.config.FASTPITCH_MODEL_FIELDS` are read.
        n_symbols: Symbol-table size (id 0 = padding).
        n_mels: Mel channels of the output.
        pitch_mean, pitch_std: Hz statistics the pitch inputs were normalised with; kept as buffers
            (as NVIDIA's files do) so that inference can convert Hz shifts and plots can show Hz.
    """

    def __init__(
        self, cfg: FastPitchConfig, n_symbols: int, n_mels: int = 80, pitch_mean: float = 0.0, pitch_std: float = 1.0
    ) -> None:
        super().__init__()
        if n_symbols < 2:
            raise ValueError(f"n_symbols: expected the padding symbol and at least one more, got {n_symbols}")
        if pitch_std <= 0:
            raise ValueError(f"pitch_std: expected > 0, got {pitch_std}")
        self._config: dict[str, Any] = {name: getattr(cfg, name) for name in FASTPITCH_MODEL_FIELDS}
        self._config.update(n_symbols=int(n_symbols), n_mels=int(n_mels))
        self.energy_conditioning = cfg.energy_conditioning
        self.max_duration = cfg.max_duration
        self.n_speakers = cfg.n_speakers
        self.speaker_emb_weight = cfg.speaker_emb_weight
        d_model = cfg.symbols_embedding_dim

        self.encoder = FFTransformer(
            cfg.in_fft_n_layers,
            cfg.in_fft_n_heads,
            d_model,
            cfg.in_fft_d_head,
            cfg.in_fft_conv1d_filter_size,
            cfg.in_fft_conv1d_kernel_size,
            cfg.p_in_fft_dropout,
            cfg.p_in_fft_dropatt,
            cfg.p_in_fft_dropemb,
            n_embed=n_symbols,
        )
        # NVIDIA's `speaker_emb` (its state-dict name), N(0, 1) initialised like theirs; a single-speaker
        # model has none, so its state dict keeps exactly the keys it always had.
        self.speaker_emb = nn.Embedding(cfg.n_speakers, d_model) if cfg.n_speakers > 1 else None
        self.decoder = FFTransformer(
            cfg.out_fft_n_layers,
            cfg.out_fft_n_heads,
            d_model,
            cfg.out_fft_d_head,
            cfg.out_fft_conv1d_filter_size,
            cfg.out_fft_conv1d_kernel_size,
            cfg.p_out_fft_dropout,
            cfg.p_out_fft_dropatt,
            cfg.p_out_fft_dropemb,
        )
        self.duration_predictor = TemporalPredictor(
            cfg.in_fft_output_size,
            cfg.dur_predictor_filter_size,
            cfg.dur_predictor_kernel_size,
            cfg.p_dur_predictor_dropout,
            cfg.dur_predictor_n_layers,
        )
        self.pitch_predictor = TemporalPredictor(
            cfg.in_fft_output_size,
            cfg.pitch_predictor_filter_size,
            cfg.pitch_predictor_kernel_size,
            cfg.p_pitch_predictor_dropout,
            cfg.pitch_predictor_n_layers,
        )
        self.pitch_emb = _value_embedding(d_model, cfg.pitch_embedding_kernel_size)
        if cfg.energy_conditioning:
            self.energy_predictor = TemporalPredictor(
                cfg.in_fft_output_size,
                cfg.energy_predictor_filter_size,
                cfg.energy_predictor_kernel_size,
                cfg.p_energy_predictor_dropout,
                cfg.energy_predictor_n_layers,
            )
            self.energy_emb = _value_embedding(d_model, cfg.energy_embedding_kernel_size)
        self.proj = nn.Linear(cfg.out_fft_output_size, n_mels)
        self.register_buffer("pitch_mean", torch.tensor([float(pitch_mean)]))
        self.register_buffer("pitch_std", torch.tensor([float(pitch_std)]))

    # ---------------------------------------------------------------------------------------------

    def forward(self, inputs: FastPitchInputs, mel_max_len: int | None = None) -> FastPitchOutput:
        """Teacher-forced: ground-truth durations, pitch and energy condition the decoder.

        Args:
            inputs: A batch (:class:`FastPitchInputs`; its ``speaker`` picks each item's speaker).
            mel_max_len: Output frames ``T`` (pass the padded target's length); None = the longest item.
        """
        _check_inputs(inputs, self.energy_conditioning)
        speaker = self.speaker_embedding(inputs.speaker, inputs.tokens.shape[0])
        encoded, mask = self.encoder(inputs.tokens, inputs.token_lengths, speaker)
        log_duration = self.duration_predictor(encoded, mask)
        pitch = self.pitch_predictor(encoded, mask)
        encoded = encoded + self._embed(self.pitch_emb, inputs.pitch, mask)
        energy = None
        if self.energy_conditioning:
            # Predicted after the pitch embedding is added, as in the reference.
            energy = self.energy_predictor(encoded, mask)
            encoded = encoded + self._embed(self.energy_emb, inputs.energy, mask)
        mel, mel_lengths = self._decode(encoded, inputs.durations * mask, mel_max_len)
        return FastPitchOutput(mel, mel_lengths, log_duration, pitch, energy, mask)

    @torch.no_grad()
    def infer(
        self,
        tokens: torch.Tensor,
        token_lengths: torch.Tensor,
        *,
        pace: float | torch.Tensor = 1.0,
        pitch_transform: PitchTransform | None = None,
        durations: torch.Tensor | None = None,
        pitch: torch.Tensor | None = None,
        energy: torch.Tensor | None = None,
        speaker: int | torch.Tensor | None = None,
    ) -> FastPitchInference:
        """Synthesise from symbols (call ``.eval()`` first, or dropout stays on).

        Args:
            tokens: ``(B, L)`` int64 symbol ids, 0 = padding.
            token_lengths: ``(B,)`` real tokens per item.
            pace: Speaking-rate factor: frames = ``floor(d / pace + 0.5)``; a ``(B, 1)`` tensor paces each item
                (the exported graph, :mod:`tts_pipeline.export.fastpitch_graph`).
            pitch_transform: Applied to the pitch that conditions the decoder, predicted or given
                (NVIDIA drops the transform when a pitch is given).
            durations: ``(B, L)`` frames per token to use instead of the predicted ones (not clamped;
                pace still applies).
            pitch: ``(B, L)`` normalised pitch to use instead of the prediction.
            energy: ``(B, L)`` ``log(1 + energy)`` to use instead of the prediction (energy models only).
            speaker: Speaker id for the whole batch (int or 0-d tensor) or per item (``(B,)`` int64), in
                ``0 .. n_speakers - 1``; None: speaker 0, NVIDIA's default.
        """
        _check_tokens(tokens, token_lengths, durations=durations, pitch=pitch, energy=energy)
        conditioning = self.speaker_embedding(speaker, tokens.shape[0])
        encoded, mask = self.encoder(tokens, token_lengths, conditioning)
        if durations is None:
            log_duration = self.duration_predictor(encoded, mask)
            durations = (torch.exp(log_duration) - 1.0).clamp(0.0, self.max_duration)
        repeats = pace_durations(durations, pace) * mask
        if pitch is None:
            pitch = self.pitch_predictor(encoded, mask)
        if pitch_transform is not None:
            pitch = pitch_transform(pitch, mask, float(self.pitch_std))
        pitch = pitch.float() * mask
        encoded = encoded + self._embed(self.pitch_emb, pitch, mask)
        if self.energy_conditioning:
            if energy is None:
                energy = self.energy_predictor(encoded, mask)
            energy = energy.float() * mask
            encoded = encoded + self._embed(self.energy_emb, energy, mask)
        else:
            energy = None
        mel, mel_lengths = self._decode(encoded, repeats, None)
        return FastPitchInference(mel, mel_lengths, repeats, pitch, energy)

    # ---------------------------------------------------------------------------------------------

    def speaker_embedding(self, speaker: int | torch.Tensor | None, batch: int) -> torch.Tensor | None:
        """The encoder's speaker conditioning: ``(B, 1, d_model)`` ``speaker_emb(speaker) * speaker_emb_weight``,
        or None for a single-speaker model.

        Args:
            speaker: An id for all ``batch`` items (int or 0-d tensor), ``(B,)`` ids, or None (speaker 0).
            batch: ``B``.

        Raises:
            ValueError naming the speaker and ``n_speakers`` when an id is out of range (a single-speaker
            model accepts only 0 or None), or ``speaker`` is not integer ids of shape ``()`` or ``(B,)``.
        """
        if speaker is not None:
            _check_speaker(speaker, batch, self.n_speakers)
        if self.speaker_emb is None:
            return None
        weight = self.speaker_emb.weight
        ids = torch.as_tensor(0 if speaker is None else speaker, dtype=torch.long, device=weight.device)
        # As NVIDIA: look up, then scale (their `spk_emb.mul_(speaker_emb_weight)`); one vector per item,
        # broadcast over the symbols.
        return (self.speaker_emb(ids.expand(batch)) * self.speaker_emb_weight).unsqueeze(1)

    def as_speaker(self, speaker: int, pitch_mean: float | None = None, pitch_std: float | None = None) -> FastPitch:
        """A single-speaker copy of this model that speaks as speaker ``speaker``: the same outputs as
        ``infer(..., speaker=speaker)`` (to float rounding), from a model without a speaker embedding, so
        that everything built for one voice (the bf16 copy, the exported graph, serving) serves it.

        The speaker's vector is a constant added to every real position of the encoder's input, so it
        folds into the symbol embedding: each row of ``encoder.word_emb`` gains it (the padding row too,
        which the encoder zeroes with the rest of the padding). ``pitch_mean`` / ``pitch_std`` replace the
        pitch buffers (a speaker's own statistics, which its pitch was normalised with: pitch shifts in Hz
        then act on its scale); None keeps them.

        Raises:
            ValueError naming the speaker and ``n_speakers`` when it is out of range.
        """
        _check_speaker(speaker, 1, self.n_speakers)
        voice = FastPitch.from_config({**self.model_config(), "n_speakers": 1})
        state = {name: tensor for name, tensor in self.state_dict().items() if not name.startswith("speaker_emb.")}
        if self.speaker_emb is not None:
            with torch.no_grad():
                vector = self.speaker_emb.weight[int(speaker)] * self.speaker_emb_weight
                state["encoder.word_emb.weight"] = state["encoder.word_emb.weight"] + vector
        voice.load_state_dict(state)
        with torch.no_grad():
            if pitch_mean is not None:
                voice.pitch_mean.fill_(float(pitch_mean))
            if pitch_std is not None:
                if pitch_std <= 0:
                    raise ValueError(f"pitch_std: expected > 0, got {pitch_std}")
                voice.pitch_std.fill_(float(pitch_std))
        return voice.to(self.pitch_mean.device).train(self.training)

    def _embed(self, conv: nn.Conv1d, values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """``(B, L)`` per-token values -> ``(B, L, C)`` embedding to add to the encoder output, 0 on padding."""
        keep = mask.to(conv.weight.dtype)
        embedded = conv((values.to(conv.weight.dtype) * keep).unsqueeze(1))  # (B, C, L)
        return embedded.transpose(1, 2) * keep.unsqueeze(2)

    def _decode(
        self, encoded: torch.Tensor, repeats: torch.Tensor, mel_max_len: int | None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``(B, L, C)`` conditioned encoder output and ``(B, L)`` frames per token -> ``(B, n_mels, T)``, ``(B,)``."""
        frames, lengths = length_regulate(encoded, repeats, 1.0, mel_max_len)
        decoded, frame_mask = self.decoder(frames, lengths)
        mel = self.proj(decoded.to(self.proj.weight.dtype)) * frame_mask.unsqueeze(2).to(decoded.dtype)
        return mel.transpose(1, 2), lengths

    def model_config(self) -> dict[str, Any]:
        """JSON-able constructor arguments: the model fields of ``FastPitchConfig``, ``n_symbols``, ``n_mels``."""
        return dict(self._config)

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> FastPitch:
        """Rebuild from :meth:`model_config` (the pitch buffers come with the state dict)."""
        fields = dict(config)
        missing = [key for key in ("n_symbols", "n_mels") if key not in fields]
        if missing:
            raise ValueError(f"fastpitch model config: missing {missing}")
        n_symbols, n_mels = int(fields.pop("n_symbols")), int(fields.pop("n_mels"))
        unknown = sorted(set(fields) - set(FASTPITCH_MODEL_FIELDS))
        if unknown:
            raise ValueError(f"fastpitch model config: unknown keys {unknown}")
        return cls(FastPitchConfig(**fields), n_symbols, n_mels)


def _value_embedding(d_model: int, kernel_size: int) -> nn.Conv1d:
    """Conv1d(1 -> d_model) over a per-token scalar (pitch or energy), same length."""
    if kernel_size % 2 == 0:
        raise ValueError(f"embedding kernel_size: expected an odd kernel, got {kernel_size}")
    return nn.Conv1d(1, d_model, kernel_size, padding=kernel_size // 2)


def _check_tokens(tokens: torch.Tensor, token_lengths: torch.Tensor, **per_token: torch.Tensor | None) -> None:
    """Raise ValueError unless tokens are ``(B, L)``, lengths ``(B,)`` in 1..L, and each given per-token
    tensor ``(B, L)``."""
    if tokens.dim() != 2 or token_lengths.shape != tokens.shape[:1]:
        raise ValueError(
            f"tokens (B, L) and token_lengths (B,): got {tuple(tokens.shape)} and {tuple(token_lengths.shape)}"
        )
    if token_lengths.numel() and (int(token_lengths.min()) < 1 or int(token_lengths.max()) > tokens.shape[1]):
        raise ValueError(f"token_lengths: expected values in 1..{tokens.shape[1]}, got {token_lengths.tolist()}")
    for name, value in per_token.items():
        if value is not None and value.shape != tokens.shape:
            raise ValueError(f"{name}: expected shape {tuple(tokens.shape)} like tokens, got {tuple(value.shape)}")


def _check_speaker(speaker: int | torch.Tensor, batch: int, n_speakers: int) -> None:
    """Raise ValueError unless ``speaker`` is an integer id (Python or 0-d tensor) or ``(batch,)`` integer ids,
    each in ``0 .. n_speakers - 1``."""
    if isinstance(speaker, torch.Tensor):
        if speaker.dtype.is_floating_point or speaker.dtype.is_complex or speaker.dtype == torch.bool:
            raise ValueError(f"speaker: expected integer speaker ids, got a {speaker.dtype} tensor")
        if speaker.dim() > 1 or (speaker.dim() == 1 and speaker.shape[0] != batch):
            raise ValueError(
                f"speaker: expected an id or ({batch},) ids, one per item, got shape {tuple(speaker.shape)}"
            )
        if torch.jit.is_tracing():
            return  # a traced graph's ids are inputs, not values to check now
        # One device-to-host copy of the (B,) ids; on CUDA an out-of-range lookup would be a device assert.
        ids = sorted({int(value) for value in speaker.reshape(-1).tolist()})
    else:
        try:
            ids = [operator.index(speaker)] if not isinstance(speaker, bool) else None
        except TypeError:
            ids = None
        if ids is None:
            raise ValueError(f"speaker: expected an int or a tensor of speaker ids, got {speaker!r}")
    bad = [value for value in ids if not 0 <= value < n_speakers]
    if bad:
        valid = "only speaker 0 (a single-speaker model)" if n_speakers == 1 else f"ids 0 .. {n_speakers - 1}"
        raise ValueError(
            f"speaker {bad[0] if len(bad) == 1 else bad}: out of range for a model with n_speakers {n_speakers} "
            f"({valid})"
        )


def _check_inputs(inputs: FastPitchInputs, energy_conditioning: bool) -> None:
    _check_tokens(
        inputs.tokens, inputs.token_lengths, durations=inputs.durations, pitch=inputs.pitch, energy=inputs.energy
    )
    if energy_conditioning and inputs.energy is None:
        raise ValueError("energy: required by a model with energy_conditioning (got None)")
    if inputs.durations.is_floating_point() or bool((inputs.durations < 0).any()):
        raise ValueError("durations: expected non-negative integer frames per token")


# --------------------------------------------------------------------------------------------------
# NVIDIA checkpoints
# --------------------------------------------------------------------------------------------------


def convert_state_dict(state_dict: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """An NVIDIA FastPitch 1.1 state dict for :class:`FastPitch`: drops a DDP ``module.`` prefix and the
    training-only aligner (``attention.*``); every other name is already ours."""
    converted = {}
    for name, tensor in state_dict.items():
        name = name.removeprefix("module.")
        if not name.startswith("attention."):
            converted[name] = tensor
    return converted


def config_from_nvidia(config: Mapping[str, Any]) -> dict[str, Any]:
    """An NVIDIA checkpoint's ``config`` (its constructor arguments) as a :meth:`FastPitch.from_config` mapping.

    Missing keys take this project's defaults, except ``energy_conditioning``, which NVIDIA's loader
    defaults to off; ``n_speakers`` and ``speaker_emb_weight`` default to NVIDIA's 1 and 1.0 either way.
    Multi-formant or non-zero-padding models are rejected.
    """
    if int(config.get("pitch_conditioning_formants", 1)) != 1:
        raise ValueError("NVIDIA config: pitch_conditioning_formants must be 1")
    if int(config.get("padding_idx", 0)) != 0:
        raise ValueError("NVIDIA config: padding_idx must be 0")
    if "n_symbols" not in config or "n_mel_channels" not in config:
        raise ValueError("NVIDIA config: expected n_symbols and n_mel_channels")
    ours: dict[str, Any] = {key: config[key] for key in FASTPITCH_MODEL_FIELDS if key in config}
    ours.setdefault("energy_conditioning", False)
    ours.update(n_symbols=int(config["n_symbols"]), n_mels=int(config["n_mel_channels"]))
    return ours
