"""Eager against exported, input by input: the check behind ``verification.json``.

Every model is a :data:`Runner` here, numpy arrays in the graph's input order to numpy arrays in its
output order: an ONNX session (:class:`tts_pipeline.export.runtime.OnnxModel`), a TorchScript file
(:class:`tts_pipeline.export.torchscript.TorchScriptModel`), or the eager model through its seam at
float32 on the CPU, exactly as the synthesizer's fp32 path calls it (:func:`eager_acoustic`,
:func:`eager_vocoder`).

The acoustic model is checked on every case; the vocoder on the eager acoustic model's mels of every
case with the default controls, batched as the case is (padded frames at the log-mel of silence, as
synthesis pads a vocoder batch).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import torch

from tts_pipeline.audio import LOG_FLOOR
from tts_pipeline.export.cases import Case, Controls
from tts_pipeline.export.verify import AUDIO_FIGURE, MEL_FIGURE, Check, Limits, max_abs_diff
from tts_pipeline.inference.seams import AcousticModel, Vocoder
from tts_pipeline.models.fastpitch import PitchTransform
from tts_pipeline.snr import snr_db

Runner = Callable[..., tuple[np.ndarray, ...]]
SILENT_LOG_MEL = float(np.log(LOG_FLOOR))


def eager_acoustic(model: AcousticModel, output_names: Sequence[str]) -> Runner:
    """The seam's acoustic model as a runner: ``(tokens, token_lengths, pace, pitch_shift_hz, pitch_scale)``
    -> the prediction's fields ``output_names``. The controls must be the same for every item (the eager
    model takes one pace and one pitch transform per call)."""

    def run(tokens: np.ndarray, lengths: np.ndarray, *controls: np.ndarray) -> tuple[np.ndarray, ...]:
        if any(len(set(values.tolist())) > 1 for values in controls):
            raise ValueError("eager acoustic model: one value of each control per call")
        pace, shift, scale = (float(values[0]) for values in controls)
        identity = Controls(pace, shift, scale) == Controls(pace)
        transform = None if identity else PitchTransform(amplify=scale, shift_hz=shift)
        with torch.inference_mode():
            out = model.infer(torch.from_numpy(tokens), torch.from_numpy(lengths), pace=pace, pitch_transform=transform)
        return tuple(getattr(out, name).numpy() for name in output_names)

    return run


def eager_vocoder(vocoder: Vocoder) -> Runner:
    """The seam's vocoder as a runner: ``(B, n_mels, T)`` log-mel -> ``((B, 1, T * hop) audio,)``."""

    def run(mel: np.ndarray) -> tuple[np.ndarray, ...]:
        with torch.inference_mode():
            return (vocoder(torch.from_numpy(mel)).float().numpy(),)

    return run


def check_acoustic(
    kind: str,
    eager: Runner,
    exports: Mapping[str, Runner],
    cases: Sequence[Case],
    limits: Limits,
    output_names: Sequence[str],
) -> tuple[list[Check], dict[str, tuple[np.ndarray, ...]]]:
    """Every export on every case against the eager model.

    The figure is the largest absolute difference of the first output (the mel); every integer output
    (lengths, durations; ``output_names`` name them) must equal the eager one, or the check fails
    naming it.

    Returns:
        The checks, and the eager outputs per case name (the vocoder's inputs).
    """
    checks: list[Check] = []
    expected: dict[str, tuple[np.ndarray, ...]] = {}
    for case in cases:
        inputs = (*case.tokens(), *case.controls.arrays(case.batch))
        expected[case.name] = eager(*inputs)
        for fmt, runner in exports.items():
            actual = runner(*inputs)
            pairs = zip(output_names, expected[case.name], actual, strict=True)
            details = [_integer_difference(name, want, got) for name, want, got in pairs]
            value = max_abs_diff(expected[case.name][0], actual[0])
            detail = "; ".join(filter(None, details))
            checks.append(Check(kind, fmt, case.name, case.batch, MEL_FIGURE, value, limits.mel_max_abs_diff, detail))
    return checks, expected


def vocoder_inputs(
    cases: Sequence[Case], acoustic_outputs: Mapping[str, tuple[np.ndarray, ...]]
) -> list[tuple[Case, np.ndarray]]:
    """The mel batch of every case with the default controls: the eager mels ``(B, n_mels, T)``, each
    item's frames past its length at :data:`SILENT_LOG_MEL` (a single item cropped to its length)."""
    batches = []
    default = cases[0].controls if cases else Controls()
    for case in cases:
        if case.controls != default:
            continue
        mel, lengths = acoustic_outputs[case.name][0], acoustic_outputs[case.name][1]
        mel = mel[:, :, : int(lengths.max())].copy()
        frames = np.arange(mel.shape[2])
        mel[np.broadcast_to((frames[None, :] >= lengths[:, None])[:, None, :], mel.shape)] = SILENT_LOG_MEL
        batches.append((case, mel.astype(np.float32)))
    return batches


def check_vocoder(
    kind: str, eager: Runner, exports: Mapping[str, Runner], batches: Sequence[tuple[Case, np.ndarray]], limits: Limits
) -> list[Check]:
    """Every export on every mel batch against the eager vocoder: the SNR of its audio."""
    checks = []
    for case, mel in batches:
        (reference,) = eager(mel)
        for fmt, runner in exports.items():
            (audio,) = runner(mel)
            detail = "" if audio.shape == reference.shape else f"audio shape {audio.shape}, eager {reference.shape}"
            checks.append(
                Check(
                    kind, fmt, case.name, case.batch, AUDIO_FIGURE, snr_db(reference, audio), limits.min_snr_db, detail
                )
            )
    return checks


def _integer_difference(name: str, expected: np.ndarray, actual: np.ndarray) -> str:
    """ "" when an integer output equals the eager one (float outputs pass here), else what differs."""
    if not np.issubdtype(expected.dtype, np.integer):
        return ""
    if expected.shape != actual.shape:
        return f"{name}: shape {actual.shape}, eager {expected.shape}"
    differing = int(np.count_nonzero(expected != actual))
    return f"{name}: {differing} of {expected.size} values differ from eager" if differing else ""
