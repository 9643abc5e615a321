"""Validation mel L1 of a vocoder: vocode a mel, take the log-mel of the audio with the one mel function
(:class:`tts_pipeline.audio.MelSpectrogram`, the input mel), and compare it with the *ground-truth*
mel of the utterance (the features stage's ``mels/<id>.npy``).

The vocoder's input is either that ground-truth mel (how well it inverts real mels) or FastPitch's
teacher-forced mel of the same utterance (what it meets in synthesis; same frame count by contract).
The target is the ground-truth mel in both cases. Audio is the vocoder's raw float output: no
denoiser, no fade-out, no 16-bit rounding. A ``T``-frame mel gives ``T x hop`` samples, whose mel has
``T`` frames again, so the two mels line up frame by frame. The figure is unscaled (HiFi-GAN's logged
mel loss is 45 x this, on the loss mel).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch

from tts_pipeline.audio import MelSpectrogram
from tts_pipeline.benchmark.quality import mel_l1
from tts_pipeline.errors import UserError
from tts_pipeline.inference.synthesizer import Synthesizer


class MelSet(NamedTuple):
    """Mels of some utterances: ids and float32 ``(n_mels, T_i)`` arrays in the same order."""

    ids: list[str]
    mels: list[np.ndarray]


def load_mels(ids: Sequence[str], paths: Sequence[Path], n_mels: int, what: str) -> MelSet:
    """Read ``(n_mels, T)`` ``.npy`` mels; errors name the utterance, the file and ``what`` they are."""
    mels = []
    for utterance_id, path in zip(ids, paths, strict=True):
        if not path.is_file():
            raise UserError(f"utterance {utterance_id}: {what} not found: {path}")
        try:
            mel = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as error:
            raise UserError(f"utterance {utterance_id}: {path}: not a readable .npy ({error})") from None
        if mel.ndim != 2 or mel.shape[0] != n_mels or mel.shape[1] < 1:
            raise UserError(f"utterance {utterance_id}: {path}: expected a mel of shape ({n_mels}, T), got {mel.shape}")
        mels.append(mel.astype(np.float32))
    return MelSet(list(ids), mels)


def check_same_frames(inputs: MelSet, targets: MelSet, what: str) -> None:
    """Raise UserError naming the first utterance whose ``what`` mel and target differ in frame count."""
    for utterance_id, mel, target in zip(inputs.ids, inputs.mels, targets.mels, strict=True):
        if mel.shape != target.shape:
            raise UserError(
                f"utterance {utterance_id}: the {what} mel has shape {mel.shape} but the ground-truth mel "
                f"{target.shape}; both must have the frames of the same clip"
            )


def vocoder_mel_l1(synth: Synthesizer, inputs: MelSet, targets: MelSet) -> list[float]:
    """Per-utterance mel L1 of ``synth``'s vocoder on ``inputs`` against ``targets`` (module docstring).

    ``synth`` should have no denoiser and no fade-out (its audio is what is measured).
    """
    check_same_frames(inputs, targets, "input")
    mel = MelSpectrogram(synth.audio)
    utterances = synth.vocode(inputs.mels)
    losses = []
    with torch.no_grad():
        for utterance, target in zip(utterances, targets.mels, strict=True):
            produced = mel(torch.from_numpy(utterance.audio))  # (n_mels, T)
            losses.append(mel_l1(produced, target))
    return losses
