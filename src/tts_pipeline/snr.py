"""How close one output is to a reference output: the signal-to-noise ratio, in dB.

``10 log10(sum(reference^2) / sum((test - reference)^2))``: 40 dB means the difference is 1 % of the
reference's amplitude. The export's checks judge an exported vocoder by it
(:mod:`tts_pipeline.export.verify`), and ``inference.amp: auto`` a faster precision of a model
(:mod:`tts_pipeline.inference.precision_choice`). numpy only: a server can use it without torch.
"""

from __future__ import annotations

import math

import numpy as np

# Identical outputs have an infinite SNR; it is reported as this (float32 rounding alone gives about
# 130 dB), which JSON can hold.
EXACT_SNR_DB = 200.0


def snr_db(reference: np.ndarray, test: np.ndarray) -> float:
    """SNR of ``test`` against ``reference`` (same shape, any float dtype) in dB: :data:`EXACT_SNR_DB`
    when equal, ``-inf`` when the shapes differ or the reference is silent and the test is not."""
    if reference.shape != test.shape:
        return -math.inf
    reference = reference.astype(np.float64)
    noise = float(np.sum((test.astype(np.float64) - reference) ** 2))
    if noise == 0.0:
        return EXACT_SNR_DB
    signal = float(np.sum(reference**2))
    return min(10.0 * math.log10(signal / noise), EXACT_SNR_DB) if signal > 0 else -math.inf
