"""Objective quality of synthesised speech against a reference rendering of the same text.

Both waveforms are framed like every other stage (:class:`tts_pipeline.audio.MelSpectrogram`,
``T = N // hop`` frames) and compared after dynamic time warping, because synthesised and recorded
speech of the same text differ in timing.

Mel cepstra. From a frame's log-mel vector ``L_k = ln(mel amplitude_k)``, ``k = 0 .. K-1`` (the
project's log-mel: natural log of the Slaney mel filterbank applied to the STFT magnitude), the
mel-cepstral coefficients are its DCT-II scaled as a real cepstrum::

    c_d = (1 / K) * sum_k L_k * cos(pi * d * (k + 1/2) / K),   so that   L_k = c_0 + 2 * sum_{d>=1} c_d cos(...)

This is the cepstrum of the log *amplitude* on the mel-warped frequency axis, the convention of
SPTK's mel-cepstra (``mcep``), for which the usual MCD formula was written. ``c_0`` (overall level)
is excluded; ``c_1 .. c_D`` are kept (D = 24 by default; SPTK-based evaluations use 24 or 25).
The numbers are comparable in kind with SPTK-based MCD, not identical (SPTK warps a linear spectrum
with an all-pass filter; here a mel filterbank does the warping).

MCD-DTW (dB). The per-frame distance between cepstra ``c`` and ``c'`` is::

    mcd = (10 / ln 10) * sqrt(2 * sum_{d=1..D} (c_d - c'_d)^2)

By Parseval, with all coefficients kept this is half the RMS difference, in amplitude dB
(``20 log10``), between the two log-mel spectra once their level difference (``c_0``) is removed.
The two sequences are aligned with DTW (``librosa.sequence.dtw``, Euclidean cost, steps (1,1),
(1,0), (0,1) with equal weights), and the MCD is the mean of the frame distances over the path
pairs. Averaging over the path means that extra frames matched at no cost (e.g. identical silence)
lower the mean; compare utterances rendered with the same silence handling.

F0 and voicing on the same path (pitch from :func:`tts_pipeline.features.pitch.extract_pitch`
unless given, Hz, 0 = unvoiced): RMSE in Hz and in cents (``1200 log2(f / f_ref)``) over the path
pairs voiced in both, and the voicing decision error, the fraction of path pairs whose voiced flags
differ. The duration ratio is synthesised seconds / reference seconds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import NamedTuple

import numpy as np
import torch

from tts_pipeline.audio import MelSpectrogram, n_frames
from tts_pipeline.config import AudioConfig, PitchConfig
from tts_pipeline.errors import UserError
from tts_pipeline.features.pitch import extract_pitch
from tts_pipeline.models.hifigan.loss import mel_loss

DEFAULT_CEPSTRAL_COEFFICIENTS = 24
"""Mel-cepstral coefficients ``c_1 .. c_D`` compared by the MCD (``c_0`` excluded)."""

MCD_SCALE = 10.0 / math.log(10.0) * math.sqrt(2.0)
"""``(10 / ln 10) * sqrt(2)``: the MCD of a frame is this times the Euclidean distance of its cepstra."""


# --------------------------------------------------------------------------------------------------
# mel cepstra and MCD-DTW
# --------------------------------------------------------------------------------------------------


def mel_cepstrum(log_mel: np.ndarray, n_coefficients: int = DEFAULT_CEPSTRAL_COEFFICIENTS) -> np.ndarray:
    """Mel-cepstral coefficients ``c_1 .. c_D`` of natural-log mel amplitudes (module docstring).

    Args:
        log_mel: float ``(K, T)``, ``ln`` of mel amplitudes (the project's log-mel), K mel channels.
        n_coefficients: D, with ``1 <= D < K``.

    Returns:
        float64 ``(D, T)``.
    """
    log_mel = np.asarray(log_mel, dtype=np.float64)
    if log_mel.ndim != 2:
        raise ValueError(f"log-mel: expected shape (n_mels, T), got {log_mel.shape}")
    channels = log_mel.shape[0]
    if not 1 <= n_coefficients < channels:
        raise ValueError(f"mel cepstrum: expected 1 <= coefficients < {channels} mel channels, got {n_coefficients}")
    d = np.arange(1, n_coefficients + 1, dtype=np.float64)[:, None]
    k = np.arange(channels, dtype=np.float64)[None, :]
    basis = np.cos(np.pi * d * (k + 0.5) / channels) / channels  # (D, K)
    return basis @ log_mel


def mcd_per_frame(cepstra: np.ndarray, other: np.ndarray) -> np.ndarray:
    """Frame-by-frame MCD in dB of two equally long cepstral sequences ``(D, T)``: float64 ``(T,)``."""
    cepstra, other = np.asarray(cepstra, dtype=np.float64), np.asarray(other, dtype=np.float64)
    if cepstra.shape != other.shape or cepstra.ndim != 2:
        raise ValueError(
            f"cepstra: expected two arrays of the same shape (D, T), got {cepstra.shape} and {other.shape}"
        )
    return MCD_SCALE * np.sqrt(np.sum((cepstra - other) ** 2, axis=0))


class Alignment(NamedTuple):
    """A DTW path in time order: pair ``i`` matches reference frame ``reference[i]`` with
    synthesised frame ``synthesized[i]``; both int64 ``(P,)``."""

    reference: np.ndarray
    synthesized: np.ndarray


def dtw_align(reference: np.ndarray, synthesized: np.ndarray) -> Alignment:
    """Align two feature sequences ``(D, T_ref)`` and ``(D, T_syn)`` by DTW with a Euclidean cost."""
    import librosa

    if reference.ndim != 2 or synthesized.ndim != 2 or reference.shape[0] != synthesized.shape[0]:
        raise ValueError(
            f"DTW: expected (D, T) features with the same D, got {reference.shape} and {synthesized.shape}"
        )
    if reference.shape[1] == 0 or synthesized.shape[1] == 0:
        raise ValueError("DTW: a sequence has no frames")
    _, path = librosa.sequence.dtw(X=reference, Y=synthesized, metric="euclidean", backtrack=True)
    path = np.asarray(path[::-1], dtype=np.int64)  # librosa returns the path from the end
    return Alignment(path[:, 0], path[:, 1])


class MCDResult(NamedTuple):
    """MCD-DTW in dB and the path it was averaged over."""

    mcd_db: float
    alignment: Alignment


def mcd_dtw(reference: np.ndarray, synthesized: np.ndarray) -> MCDResult:
    """MCD-DTW of two cepstral sequences ``(D, T_ref)`` and ``(D, T_syn)``: mean frame MCD over the path."""
    reference = np.asarray(reference, dtype=np.float64)
    synthesized = np.asarray(synthesized, dtype=np.float64)
    alignment = dtw_align(reference, synthesized)
    frames = mcd_per_frame(reference[:, alignment.reference], synthesized[:, alignment.synthesized])
    return MCDResult(float(frames.mean()), alignment)


# --------------------------------------------------------------------------------------------------
# F0 and voicing
# --------------------------------------------------------------------------------------------------


class F0Errors(NamedTuple):
    """F0 errors over the path pairs of an alignment.

    Attributes:
        rmse_hz: RMS of ``f_syn - f_ref`` (Hz) over pairs voiced in both; NaN when there is none.
        rmse_cents: RMS of ``1200 log2(f_syn / f_ref)`` over the same pairs; NaN when there is none.
        voicing_error: Fraction of pairs whose voiced/unvoiced flags differ.
        voiced_pairs: Pairs voiced in both.
        pairs: Pairs on the path.
    """

    rmse_hz: float
    rmse_cents: float
    voicing_error: float
    voiced_pairs: int
    pairs: int


def f0_errors(reference_f0: np.ndarray, synthesized_f0: np.ndarray, alignment: Alignment) -> F0Errors:
    """F0 RMSE and voicing decision error of frame-level pitch ``(T_ref,)`` / ``(T_syn,)`` (Hz, 0 = unvoiced)."""
    reference_f0 = np.asarray(reference_f0, dtype=np.float64)
    synthesized_f0 = np.asarray(synthesized_f0, dtype=np.float64)
    if alignment.reference.size == 0:
        raise ValueError("F0 errors: the alignment is empty")
    if alignment.reference.max() >= reference_f0.size or alignment.synthesized.max() >= synthesized_f0.size:
        raise ValueError(
            f"F0 errors: the alignment reaches frames {alignment.reference.max()} / {alignment.synthesized.max()}, "
            f"the pitch arrays have {reference_f0.size} / {synthesized_f0.size}"
        )
    ref = reference_f0[alignment.reference]
    syn = synthesized_f0[alignment.synthesized]
    ref_voiced, syn_voiced = ref > 0, syn > 0
    both = ref_voiced & syn_voiced
    if both.any():
        rmse_hz = float(np.sqrt(np.mean((syn[both] - ref[both]) ** 2)))
        rmse_cents = float(np.sqrt(np.mean((1200.0 * np.log2(syn[both] / ref[both])) ** 2)))
    else:
        rmse_hz = rmse_cents = math.nan
    return F0Errors(
        rmse_hz=rmse_hz,
        rmse_cents=rmse_cents,
        voicing_error=float(np.mean(ref_voiced != syn_voiced)),
        voiced_pairs=int(both.sum()),
        pairs=int(ref.size),
    )


def duration_ratio(synthesized_seconds: float, reference_seconds: float) -> float:
    """Synthesised duration / reference duration (same unit; 1 = same length)."""
    if not reference_seconds > 0 or not synthesized_seconds >= 0:
        raise ValueError(
            f"duration ratio: expected a positive reference duration, got {synthesized_seconds} / {reference_seconds}"
        )
    return float(synthesized_seconds) / float(reference_seconds)


# --------------------------------------------------------------------------------------------------
# whole utterances
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class QualityMetrics:
    """Objective quality of one synthesised utterance against its reference.

    Attributes:
        mcd_db: MCD-DTW, dB.
        f0_rmse_hz: F0 RMSE over aligned frames voiced in both, Hz (NaN if none).
        f0_rmse_cents: The same in cents (NaN if none).
        voicing_error: Fraction of aligned frames whose voicing differs.
        duration_ratio: Synthesised seconds / reference seconds.
        aligned_frames: Pairs on the DTW path.
        voiced_frames: Pairs voiced in both.
    """

    mcd_db: float
    f0_rmse_hz: float
    f0_rmse_cents: float
    voicing_error: float
    duration_ratio: float
    aligned_frames: int
    voiced_frames: int

    def as_dict(self) -> dict[str, float | int]:
        return asdict(self)


class SpeechQuality:
    """Compares synthesised waveforms with reference waveforms (module docstring for the definitions).

    Args:
        audio_cfg: The audio section: sampling rate, framing and mel settings of both waveforms.
        pitch_cfg: How F0 is extracted when it is not given (the features stage's settings).
        n_coefficients: Mel-cepstral coefficients compared by the MCD (``c_1 .. c_D``).
    """

    def __init__(
        self,
        audio_cfg: AudioConfig,
        pitch_cfg: PitchConfig | None = None,
        n_coefficients: int = DEFAULT_CEPSTRAL_COEFFICIENTS,
    ) -> None:
        if not 1 <= n_coefficients < audio_cfg.n_mel_channels:
            raise ValueError(
                f"n_coefficients: expected 1 <= value < audio.n_mel_channels ({audio_cfg.n_mel_channels}), "
                f"got {n_coefficients}"
            )
        self.audio_cfg = audio_cfg
        self.pitch_cfg = pitch_cfg if pitch_cfg is not None else PitchConfig()
        self.n_coefficients = n_coefficients
        self.mel = MelSpectrogram(audio_cfg)

    def cepstra(self, audio: np.ndarray) -> np.ndarray:
        """Mel cepstra ``c_1 .. c_D`` of a waveform ``(N,)`` in [-1, 1]: float64 ``(D, N // hop)``."""
        with torch.no_grad():
            log_mel = self.mel(torch.from_numpy(np.asarray(audio, dtype=np.float64))).numpy()
        return mel_cepstrum(log_mel, self.n_coefficients)

    def compare(
        self,
        synthesized: np.ndarray,
        reference: np.ndarray,
        *,
        synthesized_f0: np.ndarray | None = None,
        reference_f0: np.ndarray | None = None,
        utterance: str = "utterance",
    ) -> QualityMetrics:
        """Quality of ``synthesized`` against ``reference``.

        Args:
            synthesized: float ``(N_syn,)`` waveform in [-1, 1] at ``audio_cfg.sampling_rate``.
            reference: float ``(N_ref,)`` waveform of the same text at the same rate.
            synthesized_f0: Optional precomputed pitch ``(N_syn // hop,)`` Hz, 0 = unvoiced.
            reference_f0: Optional precomputed pitch ``(N_ref // hop,)`` (e.g. the features stage's).
            utterance: Named in error messages.
        """
        synthesized = self._waveform(synthesized, "synthesised", utterance)
        reference = self._waveform(reference, "reference", utterance)
        mcd = mcd_dtw(self.cepstra(reference), self.cepstra(synthesized))
        f0 = f0_errors(
            self._pitch(reference, reference_f0, "reference", utterance),
            self._pitch(synthesized, synthesized_f0, "synthesised", utterance),
            mcd.alignment,
        )
        return QualityMetrics(
            mcd_db=mcd.mcd_db,
            f0_rmse_hz=f0.rmse_hz,
            f0_rmse_cents=f0.rmse_cents,
            voicing_error=f0.voicing_error,
            duration_ratio=duration_ratio(synthesized.size, reference.size),
            aligned_frames=f0.pairs,
            voiced_frames=f0.voiced_pairs,
        )

    def _waveform(self, audio: np.ndarray, which: str, utterance: str) -> np.ndarray:
        audio = np.asarray(audio)
        if audio.ndim != 1:
            raise UserError(f"{utterance}: {which} audio: expected shape (N,), got {audio.shape}")
        if not np.issubdtype(audio.dtype, np.floating) or not np.isfinite(audio).all():
            raise UserError(f"{utterance}: {which} audio: expected finite floating-point samples ({audio.dtype})")
        # Below one filter length the reflect padding of the mel framing is impossible or degenerate.
        if audio.size < self.audio_cfg.filter_length:
            minimum = self.audio_cfg.filter_length
            raise UserError(f"{utterance}: {which} audio: expected at least {minimum} samples, got {audio.size}")
        return audio

    def _pitch(self, audio: np.ndarray, f0: np.ndarray | None, which: str, utterance: str) -> np.ndarray:
        expected = n_frames(audio.size, self.audio_cfg)
        if f0 is None:
            return extract_pitch(audio, self.pitch_cfg, self.audio_cfg)
        f0 = np.asarray(f0, dtype=np.float64)
        if f0.shape != (expected,):
            raise UserError(f"{utterance}: {which} pitch: expected shape ({expected},) for its audio, got {f0.shape}")
        return f0


def average_quality(metrics: Sequence[QualityMetrics]) -> dict[str, float | int]:
    """Means over utterances of each figure (F0 RMSEs over the utterances that have voiced frames).

    Returns ``{"utterances", "mcd_db", "f0_rmse_hz", "f0_rmse_cents", "voicing_error",
    "duration_ratio", "utterances_with_f0"}``; an F0 mean is NaN when no utterance had a voiced pair.
    """
    if not metrics:
        raise ValueError("average quality: no utterance")
    with_f0 = [m for m in metrics if not math.isnan(m.f0_rmse_hz)]

    def mean(values: Sequence[float]) -> float:
        return float(np.mean(values)) if values else math.nan

    return {
        "utterances": len(metrics),
        "mcd_db": mean([m.mcd_db for m in metrics]),
        "f0_rmse_hz": mean([m.f0_rmse_hz for m in with_f0]),
        "f0_rmse_cents": mean([m.f0_rmse_cents for m in with_f0]),
        "voicing_error": mean([m.voicing_error for m in metrics]),
        "duration_ratio": mean([m.duration_ratio for m in metrics]),
        "utterances_with_f0": len(with_f0),
    }


# --------------------------------------------------------------------------------------------------
# vocoder check
# --------------------------------------------------------------------------------------------------


def mel_l1(pred_mel: np.ndarray | torch.Tensor, target_mel: np.ndarray | torch.Tensor) -> float:
    """Mean absolute difference of two log-mels of the same shape (``(n_mels, T)`` or ``(B, n_mels, T)``).

    Unscaled: HiFi-GAN's logged mel loss (and NVIDIA's validation figure, reference 8) is 45 x this
    on the loss mel. Both mels must have the same frame count; the vocoder's output of a ``T``-frame
    mel is ``T * hop`` samples, whose mel has ``T`` frames again.
    """
    pred = torch.as_tensor(pred_mel).detach().cpu()
    target = torch.as_tensor(target_mel).detach().cpu()
    return float(mel_loss(target, pred, scale=1.0))
