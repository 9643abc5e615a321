"""How quiet the audio is where the speech stops: the level in the pauses, and the noise floor.

A vocoder that hums fills every pause with a steady sound that a listener hears at once and that the
intelligibility table does not see (the words are still there). Two figures measure it, both ratios of
frame powers of the same clip, so they do not depend on its loudness:

- **Pause level** (audio aligned with a mel): the median power of the mel's *pause frames* over the
  median power of its *speech frames*, in dB. The frames are told apart on the mel the audio speaks,
  by the mel's own energy (:func:`classify_frames`): the ground-truth mel for the recordings, Griffin-Lim
  and copy synthesis (so every one of them is measured in the recording's pauses), FastPitch's own mel for
  full TTS (the frames the acoustic model asked to be silent: where its mel has no such frame, as when
  it blurs a short pause, the utterance is not measured, and the row counts the utterances it measured).
  Digital silence in the pauses reads -75 to -90 dB (:data:`POWER_FLOOR` against the speech); the demo
  corpus's recordings sit there, and a row above :data:`PAUSE_LIMIT_DB` hums.
- **Noise floor** (any audio, aligned or not, e.g. the ``synthesize`` stage's WAVs): the mean power of
  the quietest tenth of the clip's frames over the mean power of its loudest tenth, in dB. A clip with
  pauses and a floor above :data:`NOISE_FLOOR_LIMIT_DB` has a sound under everything.

Framing is the project's mel framing (:mod:`tts_pipeline.audio`): reflect padding, ``filter_length``
(1024) samples per frame every ``hop_length`` (256), periodic Hann window of ``win_length``, so frame
``t`` of the audio is frame ``t`` of its mel. A frame's power is its STFT power summed over the bins from
:data:`LOWEST_HZ` up, scaled so that a sine of amplitude ``a`` reads ``a^2 / 2`` (by Parseval: the mean
square of the windowed frame, less what lies below ``LOWEST_HZ``), never below :data:`POWER_FLOOR`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from tts_pipeline.audio import frame_padding
from tts_pipeline.config import AudioConfig

POWER_FLOOR = 1e-10
"""The least frame power, about the noise of 16-bit PCM's rounding ((2^-15)^2 / 12): digital silence reads
-100 dB instead of minus infinity, so every figure is finite."""
LOWEST_HZ = 40.0
"""Frame power leaves out the STFT bins below this (0 and 21.5 Hz at 22.05 kHz / 1024): a constant offset,
which the Hann window spreads over exactly those two bins, is not heard, while a hum from the mains'
50 Hz up is."""
SPEECH_PERCENTILE = 95.0
"""A clip's *speech level*: this percentile of its frame levels. Near the loudest frames, but a click or a
single loud vowel does not set it."""
PAUSE_BELOW_SPEECH_DB = 40.0
"""A *pause frame* is more than this below the speech level of its mel. Quiet consonants stay above it
(they are some 20-30 dB below the vowels), and so do most frames whose window reaches into a word; the
recordings' pause level then measures silence, not the edges of words."""
SPEECH_RANGE_DB = 20.0
"""A *speech frame* is at most this below the speech level of its mel: the voiced body of the words."""
MIN_PAUSE_FRAMES = 3
"""An utterance with fewer pause frames (35 ms at 22.05 kHz, hop 256) has no pause to measure."""
QUIET_FRACTION = 0.1
"""The noise floor compares the quietest and the loudest tenth of a clip's frames."""

PAUSE_LIMIT_DB = -35.0
"""A vocoder row whose median pause level is above this hums (the team's acceptance for copy synthesis
and full TTS of the demo)."""
NOISE_FLOOR_LIMIT_DB = -45.0
"""The product WAVs' noise floor must be at least this far below their speech."""
ABOVE_GRIFFIN_LIM_DB = 20.0
"""A vocoder row whose pauses are this much louder than Griffin-Lim's on the same mels hums too, whatever
the absolute level: the mel asked for silence, and a phase-less inversion of it gave it."""
GRIFFIN_LIM_OF = {"ground_truth": "griffin_lim_ground_truth", "fastpitch": "griffin_lim_fastpitch"}
"""The Griffin-Lim row on the same mels as a row under test: copy synthesis rows end in ``_ground_truth``,
every other row (full TTS) speaks FastPitch's mels."""
HUM = "HUM"
"""The flag of a row or of the product WAVs that is above its limit."""


class FrameClasses(NamedTuple):
    """Which frames of a mel are pauses and which are speech (:func:`classify_frames`): bool ``(T,)`` each;
    frames between the two thresholds are neither."""

    pause: np.ndarray
    speech: np.ndarray


def power_db(power: np.ndarray | float) -> np.ndarray:
    """Power in dB, ``10 log10(max(power, POWER_FLOOR))``, float64 of ``power``'s shape."""
    return 10.0 * np.log10(np.maximum(np.asarray(power, dtype=np.float64), POWER_FLOOR))


def frame_power(audio: np.ndarray, cfg: AudioConfig) -> np.ndarray:
    """Float ``(N,)`` audio -> float64 ``(N // hop,)`` power per frame, in the mel's framing (module docstring).

    Clips too short to reflect-pad are zero-padded instead; a clip shorter than one hop has no frame.
    """
    samples = np.asarray(audio, dtype=np.float64).reshape(-1)
    count = samples.size // cfg.hop_length
    if count == 0:
        return np.zeros(0)
    padding = frame_padding(cfg)
    padded = np.pad(samples, padding, mode="reflect" if samples.size > padding else "constant")
    left = (cfg.filter_length - cfg.win_length) // 2
    window = np.zeros(cfg.filter_length)
    # periodic Hann, as torch.hann_window(periodic=True) in the mel
    window[left : left + cfg.win_length] = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(cfg.win_length) / cfg.win_length)
    frames = np.lib.stride_tricks.sliding_window_view(padded, cfg.filter_length)[:: cfg.hop_length][:count]
    spectrum = np.fft.rfft(frames * window, axis=1)  # (T, n_fft // 2 + 1)
    # Each one-sided bin stands for itself and its mirror image, except DC and Nyquist (Parseval).
    weights = np.full(spectrum.shape[1], 2.0)
    weights[0] = weights[-1] = 1.0
    weights[np.fft.rfftfreq(cfg.filter_length, 1 / cfg.sampling_rate) < LOWEST_HZ] = 0.0
    power = (spectrum.real**2 + spectrum.imag**2) @ weights
    return np.maximum(power / (cfg.filter_length * np.square(window).sum()), POWER_FLOOR)


def mel_power(log_mel: np.ndarray) -> np.ndarray:
    """A log-mel ``(n_mels, T)`` (natural log of magnitudes, :class:`tts_pipeline.audio.MelSpectrogram`) ->
    float64 ``(T,)`` energy per frame: the squared mel magnitudes summed over channels. Only its ratios
    between frames are used."""
    if log_mel.ndim != 2:
        raise ValueError(f"log_mel: expected shape (n_mels, T), got {log_mel.shape}")
    return np.exp(2.0 * np.asarray(log_mel, dtype=np.float64)).sum(axis=0)


def classify_frames(power: np.ndarray) -> FrameClasses:
    """Pause and speech frames of a clip from its frame powers ``(T,)`` (of its mel: :func:`mel_power`).

    The speech level is the :data:`SPEECH_PERCENTILE` th percentile of the frame levels in dB; pause frames
    are more than :data:`PAUSE_BELOW_SPEECH_DB` below it, speech frames at most :data:`SPEECH_RANGE_DB` below.
    """
    levels = power_db(power)
    if levels.size == 0:
        return FrameClasses(np.zeros(0, dtype=bool), np.zeros(0, dtype=bool))
    speech_level = np.percentile(levels, SPEECH_PERCENTILE)
    return FrameClasses(levels < speech_level - PAUSE_BELOW_SPEECH_DB, levels >= speech_level - SPEECH_RANGE_DB)


def pause_level_db(power: np.ndarray, frames: FrameClasses) -> float | None:
    """The level of a clip in the pause frames relative to its speech frames, in dB: median frame power
    (``(T,)``, :func:`frame_power`) over the pause frames / median over the speech frames.

    ``frames`` come from the mel the clip speaks (:func:`classify_frames`), so ``power`` must have its
    ``T`` frames. None when there are fewer than :data:`MIN_PAUSE_FRAMES` pause frames or no speech frame.
    """
    if power.shape != frames.pause.shape:
        raise ValueError(f"pause_level_db: {power.shape[0]} audio frames against {frames.pause.shape[0]} mel frames")
    if int(frames.pause.sum()) < MIN_PAUSE_FRAMES or not frames.speech.any():
        return None
    return float(power_db(np.median(power[frames.pause])) - power_db(np.median(power[frames.speech])))


def noise_floor_db(power: np.ndarray) -> float | None:
    """The noise floor of a clip from its frame powers ``(T,)``: the mean power of its quietest
    :data:`QUIET_FRACTION` of frames over that of its loudest, in dB (0 for a steady sound, about -80 for
    speech with digital silence around it). None for a clip without a frame."""
    if power.size == 0:
        return None
    ordered = np.sort(power)
    tenth = max(1, math.ceil(QUIET_FRACTION * ordered.size))
    return float(power_db(ordered[:tenth].mean()) - power_db(ordered[-tenth:].mean()))


def spread(values: Iterable[float | None]) -> dict[str, Any]:
    """Median and quartiles of the measured ``values`` (None = not measured) and how many there are:
    ``{"median", "q1", "q3", "measured"}``; the figures are None when nothing was measured."""
    measured = [value for value in values if value is not None]
    if not measured:
        return {"median": None, "q1": None, "q3": None, "measured": 0}
    q1, median, q3 = np.percentile(measured, [25, 50, 75])
    return {"median": float(median), "q1": float(q1), "q3": float(q3), "measured": len(measured)}


def pause_row(
    name: str,
    description: str,
    ids: Sequence[str],
    audio: Sequence[np.ndarray],
    mels: Sequence[np.ndarray],
    cfg: AudioConfig,
    reference: bool,
) -> dict[str, Any]:
    """One row of the pause table: a kind of audio over the held-out utterances.

    Args:
        ids: The utterances' ids, in order.
        audio: Per utterance, float ``(N,)`` audio with ``N // hop == T`` of its mel.
        mels: Per utterance, the ``(n_mels, T)`` log-mel the audio speaks, whose frames tell pauses from
            speech (ground truth, or FastPitch's for full TTS).
        reference: A reference row (recordings, Griffin-Lim): shown for comparison, never flagged.

    Returns:
        ``name``, ``description``, ``reference``, ``utterances``; ``pause_level_db`` with ``_q1``/``_q3``
        and ``measured`` (utterances with a pause); ``noise_floor_db`` with ``_q1``/``_q3``;
        ``per_utterance`` (id -> pause level, None without a pause); ``above_griffin_lim_db`` (None here;
        :func:`compare_with_griffin_lim` fills it); ``flag`` (:func:`flag_row`).
    """
    levels, floors = [], []
    for clip, mel in zip(audio, mels, strict=True):
        power = frame_power(clip, cfg)
        levels.append(pause_level_db(power, classify_frames(mel_power(mel))))
        floors.append(noise_floor_db(power))
    pause, floor = spread(levels), spread(floors)
    row = {
        "name": name,
        "description": description,
        "reference": reference,
        "utterances": len(levels),
        "measured": pause["measured"],
        "pause_level_db": pause["median"],
        "pause_level_db_q1": pause["q1"],
        "pause_level_db_q3": pause["q3"],
        "noise_floor_db": floor["median"],
        "noise_floor_db_q1": floor["q1"],
        "noise_floor_db_q3": floor["q3"],
        "per_utterance": dict(zip(ids, levels, strict=True)),
        "above_griffin_lim_db": None,  # set by compare_with_griffin_lim for a row under test
    }
    return {**row, "flag": flag_row(row)}


def product_floor(names: Sequence[str], audio: Sequence[np.ndarray], cfg: AudioConfig) -> dict[str, Any]:
    """The noise floor of the ``synthesize`` stage's WAVs (float ``(N,)`` each, by name): ``wavs``,
    ``noise_floor_db`` (median) with ``_q1``/``_q3``, ``per_wav`` (name -> floor) and ``flag``."""
    floors = [noise_floor_db(frame_power(clip, cfg)) for clip in audio]
    floor = spread(floors)
    figures = {
        "wavs": len(floors),
        "noise_floor_db": floor["median"],
        "noise_floor_db_q1": floor["q1"],
        "noise_floor_db_q3": floor["q3"],
        "per_wav": dict(zip(names, floors, strict=True)),
    }
    return {**figures, "flag": flag_product(figures)}


def flag_row(row: Mapping[str, Any]) -> str | None:
    """:data:`HUM` for a row under test (not ``reference``) whose median pause level is above
    :data:`PAUSE_LIMIT_DB`; None otherwise, and when no pause was measured."""
    level = row.get("pause_level_db")
    return HUM if not row["reference"] and level is not None and level > PAUSE_LIMIT_DB else None


def flag_product(figures: Mapping[str, Any]) -> str | None:
    """:data:`HUM` when the product WAVs' median noise floor is above :data:`NOISE_FLOOR_LIMIT_DB`."""
    floor = figures.get("noise_floor_db")
    return HUM if floor is not None and floor > NOISE_FLOOR_LIMIT_DB else None


def findings(rows: Sequence[Mapping[str, Any]], product: Mapping[str, Any] | None) -> list[str]:
    """The flags in words: each flagged row (beside the recordings' pause level) and flagged product WAVs."""
    recordings = next((row for row in rows if row["name"] == "recordings"), None)
    floor = (
        f" (recordings: {recordings['pause_level_db']:+.0f} dB)"
        if recordings is not None and recordings["pause_level_db"] is not None
        else ""
    )
    notes = [
        f"{HUM}: {row['description']}: its pauses sit at {row['pause_level_db']:+.0f} dB relative to its speech"
        + (f", {row['above_griffin_lim_db']:.0f} dB above Griffin-Lim's on the same mels"
           if row.get("above_griffin_lim_db") is not None else "")
        + f", median over {row['measured']} sentences with a pause{floor}; quiet pauses are at most "
        f"{PAUSE_LIMIT_DB:.0f} dB and within {ABOVE_GRIFFIN_LIM_DB:.0f} dB of Griffin-Lim's."
        for row in rows
        if row["flag"]
    ]
    if product is not None and product["flag"]:
        notes.append(
            f"{HUM}: the synthesised WAVs: their quietest tenth of frames is only {-product['noise_floor_db']:.0f} dB "
            f"below their loudest tenth (median over {product['wavs']} WAVs); at least "
            f"{-NOISE_FLOOR_LIMIT_DB:.0f} dB is expected."
        )
    return notes


DEFINITION = (
    "Pause level: the audio's median frame power in the pauses over its median in the speech, in dB. Pauses "
    "are the frames of the mel the audio speaks (ground truth for recordings, Griffin-Lim and copy synthesis; "
    f"FastPitch's own for Griffin-Lim on FastPitch mels and full TTS) more than {PAUSE_BELOW_SPEECH_DB:.0f} dB "
    f"below that mel's speech level (its {SPEECH_PERCENTILE:.0f}th-percentile frame), speech the frames at most "
    f"{SPEECH_RANGE_DB:.0f} dB below it; median over the sentences with at least {MIN_PAUSE_FRAMES} pause frames, "
    "quartiles beside it. Noise floor: the mean power of a clip's quietest tenth of frames over its loudest "
    "tenth. Frames: the mel's framing (filter_length samples every hop_length, Hann window), STFT power from "
    f"{LOWEST_HZ:.0f} Hz up (a constant offset is not heard); digital silence reads {power_db(POWER_FLOOR):.0f} dB. "
    f"{HUM}: a row under test whose pauses are above {PAUSE_LIMIT_DB:.0f} dB or more than "
    f"{ABOVE_GRIFFIN_LIM_DB:.0f} dB above Griffin-Lim's on the same mels, or product WAVs whose floor is "
    f"above {NOISE_FLOOR_LIMIT_DB:.0f} dB."
)


def pause_section(
    rows: Sequence[Mapping[str, Any]], product: Mapping[str, Any] | None, ids: Sequence[str]
) -> dict[str, Any]:
    """``report.json``'s ``quality.pauses``: ``definition``, ``limits``, ``utterance_ids``, ``rows``
    (:func:`pause_row`), ``product`` (:func:`product_floor`, None without the ``synthesize`` WAVs) and
    ``findings`` (:func:`findings`)."""
    return {
        "definition": DEFINITION,
        "limits": {"pause_level_db": PAUSE_LIMIT_DB, "noise_floor_db": NOISE_FLOOR_LIMIT_DB},
        "thresholds": {
            "speech_percentile": SPEECH_PERCENTILE,
            "pause_below_speech_db": PAUSE_BELOW_SPEECH_DB,
            "speech_range_db": SPEECH_RANGE_DB,
            "min_pause_frames": MIN_PAUSE_FRAMES,
            "quiet_fraction": QUIET_FRACTION,
            "above_griffin_lim_db": ABOVE_GRIFFIN_LIM_DB,
            "lowest_hz": LOWEST_HZ,
            "power_floor": POWER_FLOOR,
        },
        "utterance_ids": list(ids),
        "rows": [dict(row) for row in rows],
        "product": None if product is None else dict(product),
        "findings": findings(rows, product),
    }


def rows_of(
    ids: Sequence[str],
    audio: Mapping[str, Sequence[np.ndarray]],
    mels: Mapping[str, Sequence[np.ndarray]],
    describe: Callable[[str], str],
    references: Iterable[str],
    cfg: AudioConfig,
) -> list[dict[str, Any]]:
    """:func:`pause_row` for every row of ``audio`` (name -> per-utterance audio), in its order; ``mels``
    gives each row's mels, ``describe`` its words, ``references`` the names of reference rows."""
    reference_names = set(references)
    rows = [
        pause_row(name, describe(name), ids, clips, mels[name], cfg, name in reference_names)
        for name, clips in audio.items()
    ]
    return compare_with_griffin_lim(rows)


def compare_with_griffin_lim(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each row under test gains ``above_griffin_lim_db`` (its pause level minus Griffin-Lim's on the same
    mels, when both were measured), and :data:`HUM` when that is over :data:`ABOVE_GRIFFIN_LIM_DB`."""
    by_name = {row["name"]: row for row in rows}
    compared = []
    for row in rows:
        row = dict(row)
        if not row["reference"]:
            mels = "ground_truth" if row["name"].endswith("_ground_truth") else "fastpitch"
            griffin_lim = by_name.get(GRIFFIN_LIM_OF[mels], {}).get("pause_level_db")
            level = row["pause_level_db"]
            above = None if griffin_lim is None or level is None else level - griffin_lim
            row["above_griffin_lim_db"] = above
            if above is not None and above > ABOVE_GRIFFIN_LIM_DB:
                row["flag"] = HUM
        compared.append(row)
    return compared
