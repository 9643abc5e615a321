"""What a faster precision costs in quality: every precision the device runs besides fp32, measured
against fp32 on the validation utterances of the vocoder mel L1 table.

Per precision (a row of ``report.json``'s ``quality.precision``):

- ``vocoder_snr_db`` (median) and ``vocoder_snr_db_min``: the fine-tuned HiFi-GAN on the ground-truth
  mels, this precision's waveform against fp32's, as a signal-to-noise ratio (fp32 is the signal,
  the difference the noise). 40 dB means the difference is 1 % of the signal's amplitude.
- ``vocoder_mel_l1`` beside ``vocoder_mel_l1_fp32``: both waveforms' log-mels against the ground-truth
  mel, as in the vocoder mel L1 table: the figure a change of precision must not move.
- ``fastpitch_same_length`` and ``fastpitch_mel_l1``: FastPitch's free-running mels of the same texts;
  the share of utterances whose predicted length (rounded durations) is unchanged, and the mean
  absolute difference of the mels where it is.

The intelligibility table carries a full-TTS row per precision (:mod:`tts_pipeline.benchmark.listening`),
so the recogniser's verdict sits beside these figures.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch

from tts_pipeline.audio import MelSpectrogram
from tts_pipeline.benchmark.quality import mel_l1
from tts_pipeline.benchmark.vocoder import MelSet
from tts_pipeline.inference.synthesizer import Synthesizer

log = logging.getLogger(__name__)

PRECISION_NOTE = (
    "Each precision against fp32 on the same validation utterances: the fine-tuned HiFi-GAN's waveform "
    "SNR on the ground-truth mels (fp32's audio is the signal; 40 dB = a difference of 1 % in amplitude), "
    "the mel L1 of both against the ground-truth mel, and FastPitch's mels of the texts (utterances of "
    "unchanged length, and their mel L1 against fp32's)."
)


def snr_db(reference: np.ndarray, other: np.ndarray) -> float:
    """``10 log10(sum(reference^2) / sum((other - reference)^2))`` of two equal-length waveforms, in dB
    (``inf`` when they are identical)."""
    if reference.shape != other.shape:
        raise ValueError(f"snr_db: shapes differ: {reference.shape} vs {other.shape}")
    reference = reference.astype(np.float64)
    noise = float(np.sum((other.astype(np.float64) - reference) ** 2))
    signal = float(np.sum(reference**2))
    if noise == 0.0:
        return math.inf
    return 10.0 * math.log10(max(signal, np.finfo(np.float64).tiny) / noise)


def precision_quality(
    fp32: Synthesizer,
    others: Mapping[str, Synthesizer],
    targets: MelSet,
    texts: Sequence[str],
) -> list[dict[str, Any]]:
    """One row per precision of ``others`` (name -> synthesizer in that precision) against ``fp32``.

    Args:
        fp32: FastPitch + the fine-tuned vocoder in fp32, without denoiser or fade-out.
        others: The same models in each other precision, same options.
        targets: Ground-truth ``(n_mels, T_i)`` mels of the utterances.
        texts: Their texts, in the same order.
    """
    if not others:
        return []
    mel = MelSpectrogram(fp32.audio)

    def log_mels(waves: Sequence[np.ndarray]) -> list[np.ndarray]:
        with torch.no_grad():
            return [mel(torch.from_numpy(np.ascontiguousarray(w))).numpy() for w in waves]

    reference_audio = [u.audio for u in fp32.vocode(targets.mels)]
    reference_l1 = [mel_l1(m, t) for m, t in zip(log_mels(reference_audio), targets.mels, strict=True)]
    reference_mels = [u.mel for u in fp32.synthesize(list(texts))] if fp32.acoustic_model is not None else []
    rows = []
    for name, synth in others.items():
        audio = [u.audio for u in synth.vocode(targets.mels)]
        snrs = [snr_db(a, b) for a, b in zip(reference_audio, audio, strict=True)]
        l1 = [mel_l1(m, t) for m, t in zip(log_mels(audio), targets.mels, strict=True)]
        row: dict[str, Any] = {
            "precision": name,
            "label": synth.precision.label,
            "utterances": len(snrs),
            "vocoder_snr_db": float(np.median(snrs)),
            "vocoder_snr_db_min": float(min(snrs)),
            "vocoder_mel_l1": float(np.mean(l1)),
            "vocoder_mel_l1_fp32": float(np.mean(reference_l1)),
        }
        if reference_mels:
            mels = [u.mel for u in synth.synthesize(list(texts))]
            same = [(a, b) for a, b in zip(reference_mels, mels, strict=True) if a.shape == b.shape]
            row["fastpitch_same_length"] = len(same) / len(mels)
            row["fastpitch_mel_l1"] = float(np.mean([np.abs(a - b).mean() for a, b in same])) if same else math.nan
        log.info(
            "benchmark: %s against fp32: vocoder SNR median %.1f dB (min %.1f), mel L1 %.4f (fp32 %.4f)",
            name, row["vocoder_snr_db"], row["vocoder_snr_db_min"], row["vocoder_mel_l1"], row["vocoder_mel_l1_fp32"],
        )  # fmt: skip
        rows.append(row)
    return rows
