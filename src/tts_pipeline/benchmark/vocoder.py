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

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import torch

from tts_pipeline.audio import MelSpectrogram
from tts_pipeline.benchmark.quality import mel_l1
from tts_pipeline.errors import UserError
from tts_pipeline.inference.synthesizer import Synthesizer

log = logging.getLogger(__name__)

MEL_L1_TARGET = (
    "Target: the ground-truth mel of each validation utterance (features stage). Each vocoder's raw output "
    "(no denoiser, no fade-out) is turned back into a log-mel with the pipeline's one mel function and "
    "compared frame by frame (mean absolute difference, unscaled; HiFi-GAN logs 45 x this on its loss mel)."
)
MEL_INPUTS = {"ground_truth": "ground-truth mel", "fastpitch": "FastPitch mel (teacher-forced)"}


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


class ValidationSet(NamedTuple):
    """The validation utterances the quality figures are measured on: ground-truth mels and texts."""

    targets: MelSet
    texts: list[str]


def validation_set(manifest_dir: Path, features_dir: Path, n_quality: int, n_mels: int) -> ValidationSet:
    """The first ``n_quality`` utterances of the validation manifest with their ground-truth mels."""
    from tts_pipeline.data.feature_layout import FeatureLayout
    from tts_pipeline.data.manifest import manifest_path, read_manifest

    val_path = manifest_path(manifest_dir, "val")
    if not val_path.is_file():
        raise UserError(f"benchmark: validation manifest not found: {val_path}")
    records = read_manifest(val_path)[:n_quality]
    if not records:
        raise UserError(f"benchmark: {val_path} lists no utterance to measure the vocoders on")
    ids = [record.id for record in records]
    layout = FeatureLayout(features_dir)
    targets = load_mels(ids, [layout.mel(i) for i in ids], n_mels, "ground-truth mel")
    return ValidationSet(targets, [record.text for record in records])


def vocoder_quality(
    validation: ValidationSet,
    fastpitch_mels_dir: Path | None,
    vocoders: dict[str, tuple[Path, Synthesizer]],
    n_mels: int,
) -> dict[str, Any]:
    """Mel L1 rows of each vocoder (name -> model file, synthesizer) on each kind of input mel.

    Inputs are the ``validation`` utterances' ground-truth mels and, with ``fastpitch_mels_dir``,
    their teacher-forced FastPitch mels; the target is the ground truth.
    """
    targets = validation.targets
    ids = targets.ids
    inputs: dict[str, MelSet] = {"ground_truth": targets}
    if fastpitch_mels_dir is not None:
        paths = [fastpitch_mels_dir / f"{i}.npy" for i in ids]
        inputs["fastpitch"] = load_mels(ids, paths, n_mels, "teacher-forced FastPitch mel")
    rows = []
    for key, (path, synth) in vocoders.items():
        name = key.replace("_", "-")
        for key, mels in inputs.items():
            losses = vocoder_mel_l1(synth, mels, targets)
            rows.append({
                "vocoder": name,
                "model": str(path),
                "input": MEL_INPUTS[key],
                "input_key": key,
                "utterances": len(losses),
                "mel_l1": float(np.mean(losses)),
                "mel_l1_per_utterance": dict(zip(ids, losses, strict=True)),
            })  # fmt: skip
            log.info(
                "benchmark: vocoder %s on %s: mel L1 %.4f over %d utterances",
                name, MEL_INPUTS[key], rows[-1]["mel_l1"], len(losses),
            )  # fmt: skip
    return {"target": MEL_L1_TARGET, "utterance_ids": ids, "rows": rows}
