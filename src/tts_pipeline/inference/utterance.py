"""What synthesis gives back: one :class:`Utterance` per text, made from a batch's rows
(:func:`finish_row`) and, for a text spoken in pieces, joined with pauses (:func:`join_pieces`)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np
import torch

from tts_pipeline.audio import LOG_FLOOR
from tts_pipeline.config import AudioConfig
from tts_pipeline.inference.options import SynthesisOptions
from tts_pipeline.inference.postprocess import fade_out, normalize_peak

log = logging.getLogger(__name__)

# The log-mel of silence: what padded frames hold when mels are vocoded as one padded batch, and the
# mel frames of the pause between the pieces of a text.
LOG_FLOOR_VALUE = float(np.log(LOG_FLOOR))


@dataclass
class Utterance:
    """One synthesised utterance.

    A text synthesised in pieces is one utterance: its pieces' audio and mels joined in order with
    silent pause frames (log-floor mel frames, zero audio), so ``len(audio) == n_frames * hop`` holds.

    Attributes:
        index: Its position in the input list.
        audio: float32 ``(n_frames * hop,)`` waveform, post-processed.
        mel: float32 ``(n_mels, n_frames)`` the vocoder's input (pauses included).
        n_frames: Mel frames (pauses included).
        n_tokens: Symbols the acoustic model read (None when a ground-truth mel was vocoded).
        batch: Index of the batch it was synthesised in (of its first piece).
        batch_size: Utterances in that batch.
        fastpitch_ms: Acoustic-model time of the whole batch (None for ground-truth mels); named as the
            manifests and reports name it.
        vocoder_ms: Vocoder (and denoiser) time of the whole batch.
        n_pieces: Pieces the text was split into (1 = spoken whole).
        complete: False when an autoregressive acoustic model cut it (or one of its pieces) at its step
            limit instead of ending it (Tacotron 2's stop gate never fired): its audio stops mid-way.
    """

    index: int
    audio: np.ndarray
    mel: np.ndarray
    n_frames: int
    n_tokens: int | None
    batch: int
    batch_size: int
    fastpitch_ms: float | None
    vocoder_ms: float
    n_pieces: int = 1
    complete: bool = True


class BatchOutput(NamedTuple):
    """What one batch gives before post-processing (tensors on the device).

    Attributes:
        mels: ``(B, n_mels, T_max)`` float mels, as the acoustic model produced them or as given.
        mel_lengths: ``(B,)`` int64 frames per utterance.
        audio: ``B`` float32 waveforms ``(mel_lengths[b] * hop,)``, cropped and denoised.
        stopped: ``(B,)`` bool, False for an utterance the acoustic model cut at its step limit; None:
            every one ended (a model without a step limit, or given mels).
    """

    mels: torch.Tensor
    mel_lengths: torch.Tensor
    audio: list[torch.Tensor]
    stopped: torch.Tensor | None = None


class Placement(NamedTuple):
    """Where a batch row belongs: its utterance's index in the input, its batch, its symbols (None for a
    given mel)."""

    index: int
    batch: int
    n_tokens: int | None


class BatchTimes(NamedTuple):
    """Seconds a batch took: its acoustic model (None for given mels) and its vocoder (with the denoiser)."""

    acoustic_model: float | None
    vocoder: float


def finish_row(
    output: BatchOutput, row: int, place: Placement, times: BatchTimes, fade_samples: int, normalize: bool
) -> Utterance:
    """Post-process row ``row`` of a batch into an :class:`Utterance` (on the CPU): fade out its last
    ``fade_samples`` samples and, when ``normalize``, scale it to a peak of 1."""
    n_frames = int(output.mel_lengths[row])
    audio = output.audio[row].detach().cpu().numpy().astype(np.float32)
    if n_frames == 0:
        log.warning("utterance %d: the model predicted no frames at all; its audio is empty", place.index + 1)
    audio = fade_out(audio, fade_samples)
    if normalize:
        audio = normalize_peak(audio)
    return Utterance(
        index=place.index,
        audio=audio,
        mel=output.mels[row, :, :n_frames].detach().float().cpu().numpy(),
        n_frames=n_frames,
        n_tokens=place.n_tokens,
        batch=place.batch,
        batch_size=len(output.audio),
        fastpitch_ms=None if times.acoustic_model is None else 1000.0 * times.acoustic_model,
        vocoder_ms=1000.0 * times.vocoder,
        complete=True if output.stopped is None else bool(output.stopped[row]),
    )


def join_pieces(index: int, pieces: Sequence[Utterance], audio: AudioConfig, options: SynthesisOptions) -> Utterance:
    """The pieces of text ``index`` as one utterance: audio and ``(n_mels, T)`` mels concatenated with
    ``options.pause_seconds`` of silence between them (zero samples; log-floor mel frames), scaled to a
    peak of 1 when ``options.normalize_peak``."""
    first = pieces[0]
    if len(pieces) > 1:
        hop = audio.hop_length
        pause = round(options.pause_seconds * audio.sampling_rate / hop)
        silent_mel = np.full((first.mel.shape[0], pause), LOG_FLOOR_VALUE, dtype=np.float32)
        silent_audio = np.zeros(pause * hop, dtype=np.float32)
        mels, waves = [first.mel], [first.audio]
        for piece in pieces[1:]:
            mels += [silent_mel, piece.mel]
            waves += [silent_audio, piece.audio]
        first = replace(
            first,
            audio=np.concatenate(waves),
            mel=np.concatenate(mels, axis=1),
            n_frames=sum(piece.n_frames for piece in pieces) + pause * (len(pieces) - 1),
            n_tokens=sum(piece.n_tokens or 0 for piece in pieces),
            n_pieces=len(pieces),
            complete=all(piece.complete for piece in pieces),
        )
    wave = normalize_peak(first.audio) if options.normalize_peak else first.audio
    return replace(first, index=index, audio=wave)
