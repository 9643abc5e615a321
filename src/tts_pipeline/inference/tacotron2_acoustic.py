"""Tacotron 2 behind the acoustic-model seam (:mod:`tts_pipeline.inference.seams`): the ``tacotron2`` row of
:mod:`tts_pipeline.config.model_kinds`, NVIDIA's Tacotron 2 + WaveGlow system's first half.

Synthesis runs :meth:`Tacotron2.infer <tts_pipeline.models.tacotron2.Tacotron2.infer>` as NVIDIA's
``inference.py`` does: a padded batch with its lengths, each utterance ending on the first frame whose
stop gate passes the threshold, or cut at the step limit (``inference.tacotron2_gate_threshold`` /
``inference.tacotron2_max_decoder_steps``; null: the model file's, NVIDIA's 0.5 and 2000). A cut
utterance is marked (``stopped`` False), so that ``synthesize`` names its phrase in a warning.

Two things differ from NVIDIA's script, both so that a phrase file gives the same audio on every run:

- The prenet drops half its units at inference too (the paper's source of variety); its masks draw from
  a generator seeded with :data:`SEED` for each batch, inside a forked random state, so the caller's
  random numbers are left as they were (NVIDIA's script draws from the process's generator).
- The project's Tacotron 2 masks padding (``padding_invariant``), so an utterance gets the same frames
  alone or in any batch whose dropout draws it shares (NVIDIA's code lets the end of a shorter
  utterance hear the padding).

Tacotron 2 has no durations or pitch: ``inference.pace`` and the pitch transforms are refused by the
config, and a runner called with them raises. On a CPU ``inference.amp: auto`` offers only float32: a
path is chosen there by comparing its output with float32's, which the random prenet and the stop frame
make meaningless for an autoregressive model; ``bf16`` (CPU) and ``fp16`` / ``bf16`` (CUDA) run it
under autocast when asked for.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

import torch
from torch import nn

from tts_pipeline.config import AudioConfig, TextConfig
from tts_pipeline.errors import UserError
from tts_pipeline.inference.seams import PLAIN_FP32, CpuPath, LoadedAcousticModel
from tts_pipeline.inference.text import TextEncoder
from tts_pipeline.models.fastpitch import PitchTransform
from tts_pipeline.models.tacotron2 import Tacotron2, load_tacotron2
from tts_pipeline.precision import Precision

SEED = 1234
"""Seed of the prenet's dropout, drawn afresh for each batch."""

NVIDIA_CLEANERS = "english_cleaners_v2"
"""The cleaners an NVIDIA checkpoint is read with when there is no config (theirs: ``english_cleaners``,
of which v2 is the newer reading of the same rules)."""


class Tacotron2Mels(NamedTuple):
    """What :meth:`Tacotron2Runner.infer` gives (a :class:`~tts_pipeline.inference.seams.MelPrediction`).

    Attributes:
        mel: ``(B, n_mels, T_max)`` log-mels after the postnet, 0 past each utterance's length.
        mel_lengths: ``(B,)`` int64 frames, up to and including the one whose gate fired.
        stopped: ``(B,)`` bool, False for an utterance cut at the step limit.
    """

    mel: torch.Tensor
    mel_lengths: torch.Tensor
    stopped: torch.Tensor


class Tacotron2Synthesis(nn.Module):
    """A Tacotron 2 with the stopping rule synthesis uses (what :func:`load` gives the synthesizer).

    Args:
        tacotron2: The model, eval mode.
        gate_threshold: Gate probability that ends an utterance.
        max_decoder_steps: Most frames decoded per utterance.
    """

    def __init__(self, tacotron2: Tacotron2, gate_threshold: float, max_decoder_steps: int) -> None:
        super().__init__()
        self.tacotron2 = tacotron2
        self.gate_threshold = gate_threshold
        self.max_decoder_steps = max_decoder_steps

    def infer(self, tokens: torch.Tensor, token_lengths: torch.Tensor) -> Tacotron2Mels:
        """``(B, N)`` symbols and ``(B,)`` lengths -> :class:`Tacotron2Mels`, the prenet's dropout seeded."""
        with torch.random.fork_rng(devices=[tokens.device] if tokens.device.type == "cuda" else []):
            torch.manual_seed(SEED)
            result = self.tacotron2.infer(
                tokens, token_lengths, max_decoder_steps=self.max_decoder_steps, gate_threshold=self.gate_threshold
            )
        frames = torch.arange(result.mel.shape[2], device=result.mel.device)
        past_end = frames[None, None, :] >= result.mel_lengths[:, None, None]
        return Tacotron2Mels(result.mel.masked_fill(past_end, 0.0), result.mel_lengths, result.stopped)


def load(
    path: str | Path, *, audio: AudioConfig | None, text: TextConfig | None, settings: Mapping[str, Any]
) -> LoadedAcousticModel:
    """This pipeline's Tacotron 2 file or NVIDIA's checkpoint, with its stopping rule.

    The symbols are the file's (kind, set and table; NVIDIA's: characters of ``text.symbol_set``); the
    cleaners are the config's ``text.cleaners`` (the manifests' texts Tacotron 2 trained on went through
    them), and the audio settings the config's ``audio`` section (the mels it trained on were made with
    it). UserError naming the file when there is no config to give them, or the mel channels differ.
    """
    model, info = load_tacotron2(path)
    if audio is None:
        raise UserError(f"{path}: a Tacotron 2 file records no audio settings; give the config's audio section")
    if model.cfg.n_mel_channels != audio.n_mel_channels:
        raise UserError(
            f"{path}: Tacotron 2 predicts {model.cfg.n_mel_channels} mel channels, "
            f"but audio.n_mel_channels is {audio.n_mel_channels}"
        )
    kind, symbol_set, _ = info.trained_symbols(path, text.symbol_set if text is not None else None)
    cleaners = text.cleaners if text is not None else NVIDIA_CLEANERS
    encoder = TextEncoder(cleaners=cleaners, symbols=kind, symbol_set=symbol_set, source=str(path))
    threshold = settings.get("tacotron2_gate_threshold")
    steps = settings.get("tacotron2_max_decoder_steps")
    synthesis = Tacotron2Synthesis(
        model.eval(),
        gate_threshold=float(threshold if threshold is not None else model.cfg.gate_threshold),
        max_decoder_steps=int(steps if steps is not None else model.cfg.max_decoder_steps),
    )
    description = f"Tacotron 2 (gate {synthesis.gate_threshold:g}, at most {synthesis.max_decoder_steps} frames)"
    return LoadedAcousticModel(synthesis, audio, encoder, info.step, description)


class Tacotron2Runner:
    """Tacotron 2's synthesis at one precision (under its autocast)."""

    def __init__(self, model: Tacotron2Synthesis, precision: Precision) -> None:
        self.model = model
        self.precision = precision

    def infer(
        self, tokens: torch.Tensor, token_lengths: torch.Tensor, *, pace: float, pitch_transform: PitchTransform | None
    ) -> Tacotron2Mels:
        """``(B, N)`` symbols -> :class:`Tacotron2Mels` (``pace`` 1 and no pitch transform only)."""
        if pace != 1.0 or pitch_transform is not None:
            raise UserError("Tacotron 2 has no durations or pitch of its own: pace and pitch transforms do not apply")
        with self.precision.autocast():
            inferred = self.model.infer(tokens, token_lengths)
        return inferred._replace(mel=inferred.mel.float())


def prepare(model: Tacotron2Synthesis, precision: Precision) -> Tacotron2Runner:
    """``model`` to run at ``precision`` (the float32 weights, shared; autocast does the rest)."""
    return Tacotron2Runner(model, precision)


def cpu_paths() -> tuple[CpuPath, ...]:
    """Float32 only (module docstring: its output cannot be judged against float32's)."""
    return (CpuPath(PLAIN_FP32, "off", prepare),)
