"""Does the audio follow the pitch of the voice, or buzz at the frame rate?

A vocoder can keep the words and the pauses right and still get the pitch wrong. A small HiFi-GAN trained
for a few hundred steps may give every voiced frame the same pitch: one pulse per mel frame, a harmonic
comb at multiples of ``sampling_rate / hop_length`` (86.13 Hz at 22.05 kHz and hop 256). A listener hears a
steady buzz under the words. The intelligibility table misses it (the words are still there), and so does
the pause table (the buzz stops with the speech). Three figures, from Praat's F0 tracks of the audio the
listening test already makes (:func:`track_pitch`; no new synthesis), measure it:

- **Pitch followed** (audio aligned with its recording: the recordings themselves, Griffin-Lim on the
  ground-truth mels and every copy-synthesis row): of the recording's voiced frames, the fraction where
  the row is voiced too and its F0 is within :data:`FOLLOW_TOLERANCE_CENTS` of the recording's. A frame
  the row leaves unvoiced has not followed the voice, so it counts against the row. The recordings
  read 100 % (they are the reference). Griffin-Lim on the same mels shows what the mels carry.
- **Median error** (the same rows): the median absolute F0 difference, in cents, over the frames voiced
  in both.
- **Locked to the frame rate** (every row, full TTS included): the fraction of the row's voiced frames
  whose F0 is within :data:`LOCK_TOLERANCE` of one of :func:`lock_frequencies`, the frame rate and its
  octaves in Praat's pitch range. Speech moves through these frequencies now and then, so the
  recordings' own figure is the chance level. A buzz sits on them.

Full-TTS rows (and Griffin-Lim on FastPitch mels) are not frame-aligned with the recording (FastPitch
chooses its own durations), so they get only the lock figure. Every figure is pooled over the frames of
all the row's utterances, not a median of per-utterance figures, so a short sentence counts for less
than a long one. ``per_utterance`` keeps each sentence's figures.

Frames are Praat's (``Sound.to_pitch``, autocorrelation; :data:`TIME_STEP_S`, :data:`PITCH_FLOOR_HZ`,
:data:`PITCH_CEILING_HZ`; fixed here, not the ``pitch`` section's settings, so the measure does not change
with the training config). Every clip starts at sample 0 of its recording: the row's frame nearest in time
to each of the recording's frames is compared with it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from tts_pipeline.config import AudioConfig

TIME_STEP_S = 0.01
"""Praat's F0 frame step: 10 ms, a hundred frames per second of speech."""
PITCH_FLOOR_HZ = 60.0
"""The lowest F0 Praat looks for. Its analysis window is three periods of it (50 ms), and a clip shorter
than one window has no frame."""
PITCH_CEILING_HZ = 400.0
"""The highest F0 Praat looks for: above any speaking voice, below the third harmonic of a low one."""
FOLLOW_TOLERANCE_CENTS = 50.0
"""A row follows the recording in a frame when its F0 is within this of the recording's (a quarter tone,
about 2.9 %). This is the tolerance of melody extraction's raw pitch accuracy (MIREX). The frame-rate buzz
of a voice near 100 Hz is about 260 cents below it, and an octave error is 1200."""
LOCK_TOLERANCE = 0.02
"""A voiced frame is locked to the frame rate when its F0 is within this fraction (±2 %, about ±34 cents)
of one of :func:`lock_frequencies`. The buzz sits on its frequency to well under 1 %."""
LOCK_RATIOS = (0.5, 1.0, 2.0)
"""The frame rate's multiples that :func:`lock_frequencies` checks: the frame rate itself and the octave
either side. Praat's usual errors on a pulse train are octave errors, and a comb whose odd harmonics are
weak reads an octave up. Only those inside Praat's range count (at 22.05 kHz and hop 256: 86.1 and
172.3 Hz; 43 Hz is below the floor)."""
MIN_VOICED_FRAMES = 20
"""A figure needs at least this many frames, pooled over a row's utterances (0.2 s of voice);
otherwise it is None (not measured)."""

LOCK_LIMIT = 0.5
"""A row under test with more than this fraction of its voiced frames locked to the frame rate buzzes.
Speech passes through the lock frequencies only now and then (the recordings' figure is the chance level,
a few %); a buzz stays on them."""
BELOW_GRIFFIN_LIM = 0.25
"""A copy-synthesis row whose followed fraction is more than this (25 points) below Griffin-Lim's on the
same mels has lost the pitch the mels carry, even if it does not buzz."""
GRIFFIN_LIM_ROW = "griffin_lim_ground_truth"
"""The Griffin-Lim row on the ground-truth mels: the reference for every copy-synthesis row."""
RECORDINGS_ROW = "recordings"
"""The row of the corpus recordings: every aligned row is compared with its F0."""
BUZZ = "BUZZ"
"""The flag of a row under test that is locked to the frame rate (:data:`LOCK_LIMIT`)."""
OFF_PITCH = "OFF PITCH"
"""The flag of a copy-synthesis row that follows the voice far less than Griffin-Lim (:data:`BELOW_GRIFFIN_LIM`)
and does not buzz."""


class PitchTrack(NamedTuple):
    """Praat's F0 track of a clip (:func:`track_pitch`): float64 ``(F,)`` each."""

    times: np.ndarray
    """Frame centres in seconds from the clip's first sample."""
    f0: np.ndarray
    """F0 in Hz, 0 where the frame is unvoiced."""


class FrameCounts(NamedTuple):
    """One clip's frames against its recording (:func:`count_frames`). The counts add up over utterances."""

    reference_voiced: int
    """The recording's voiced frames (0 when the row is not compared with a recording)."""
    both_voiced: int
    """Those where the row is voiced too."""
    followed: int
    """Those where the row's F0 is within :data:`FOLLOW_TOLERANCE_CENTS` of the recording's."""
    errors_cents: np.ndarray
    """Float64 ``(both_voiced,)``: absolute F0 differences in cents where both are voiced."""
    voiced: int
    """The row's own voiced frames."""
    locked: int
    """Those locked to the frame rate (:func:`locked_frames`)."""
    reference_unvoiced: int = 0
    """The recording's unvoiced frames (0 when the row is not compared with a recording)."""
    voiced_where_unvoiced: int = 0
    """Those the row voices: a periodic sound where the recording has noise or silence (a tone under
    fricatives, a buzz in the pauses)."""


def track_pitch(audio: np.ndarray, sampling_rate: int) -> PitchTrack:
    """Praat's F0 track of float ``(N,)`` audio (``Sound.to_pitch`` with this module's settings).

    A clip shorter than Praat's window (three periods of :data:`PITCH_FLOOR_HZ`) has no frame.
    """
    import parselmouth

    samples = np.asarray(audio, dtype=np.float64).reshape(-1)
    if samples.size * PITCH_FLOOR_HZ <= 3 * sampling_rate:
        return PitchTrack(np.zeros(0), np.zeros(0))
    pitch = parselmouth.Sound(samples, sampling_frequency=sampling_rate).to_pitch(
        time_step=TIME_STEP_S, pitch_floor=PITCH_FLOOR_HZ, pitch_ceiling=PITCH_CEILING_HZ
    )
    return PitchTrack(np.asarray(pitch.xs(), dtype=np.float64), np.asarray(pitch.selected_array["frequency"], float))


def f0_at(track: PitchTrack, times: np.ndarray) -> np.ndarray:
    """The F0 of ``track``'s frame nearest to each of ``times`` (float64 ``(len(times),)``), 0 where no
    frame of it is within half a :data:`TIME_STEP_S`."""
    times = np.asarray(times, dtype=np.float64)
    if track.times.size == 0:
        return np.zeros(times.size)
    nearest = np.clip(np.rint((times - track.times[0]) / TIME_STEP_S).astype(np.int64), 0, track.times.size - 1)
    near = np.abs(track.times[nearest] - times) <= TIME_STEP_S / 2 + 1e-9
    return np.where(near, track.f0[nearest], 0.0)


def cents(f0: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """``1200 log2(f0 / reference)`` elementwise, for positive frequencies."""
    return 1200.0 * np.log2(np.asarray(f0, dtype=np.float64) / np.asarray(reference, dtype=np.float64))


def frame_rate_hz(cfg: AudioConfig) -> float:
    """Mel frames per second, ``sampling_rate / hop_length``: the pitch a frame-periodic buzz has."""
    return cfg.sampling_rate / cfg.hop_length


def lock_frequencies(cfg: AudioConfig) -> list[float]:
    """The frame rate times each of :data:`LOCK_RATIOS` that lies inside Praat's pitch range, ascending."""
    rate = frame_rate_hz(cfg)
    return [rate * ratio for ratio in LOCK_RATIOS if PITCH_FLOOR_HZ <= rate * ratio <= PITCH_CEILING_HZ]


def locked_frames(f0: np.ndarray, frequencies: Sequence[float]) -> np.ndarray:
    """Bool ``(F,)``: voiced frames whose F0 is within :data:`LOCK_TOLERANCE` of one of ``frequencies``."""
    f0 = np.asarray(f0, dtype=np.float64)
    locked = np.zeros(f0.shape, dtype=bool)
    for frequency in frequencies:
        locked |= np.abs(f0 - frequency) <= LOCK_TOLERANCE * frequency
    return locked & (f0 > 0)


def count_frames(row: PitchTrack, recording: PitchTrack | None, frequencies: Sequence[float]) -> FrameCounts:
    """A clip's frame counts: its voiced and locked frames, and, with the ``recording`` it is aligned
    with (None for audio that is not), how it follows the recording's voiced frames."""
    voiced = row.f0 > 0
    locked = int(locked_frames(row.f0, frequencies).sum())
    if recording is None:
        return FrameCounts(0, 0, 0, np.zeros(0), int(voiced.sum()), locked)
    reference_voiced = recording.f0 > 0
    theirs = f0_at(row, recording.times[reference_voiced])
    ours = recording.f0[reference_voiced]
    both = theirs > 0
    errors = np.abs(cents(theirs[both], ours[both]))
    at_unvoiced = f0_at(row, recording.times[~reference_voiced])
    return FrameCounts(
        reference_voiced=int(reference_voiced.sum()),
        both_voiced=int(both.sum()),
        followed=int((errors <= FOLLOW_TOLERANCE_CENTS).sum()),
        errors_cents=errors,
        voiced=int(voiced.sum()),
        locked=locked,
        reference_unvoiced=int((~reference_voiced).sum()),
        voiced_where_unvoiced=int((at_unvoiced > 0).sum()),
    )


def _fraction(count: int, total: int) -> float | None:
    return count / total if total >= MIN_VOICED_FRAMES else None


def figures_of(counts: Sequence[FrameCounts], aligned: bool) -> dict[str, Any]:
    """Pooled figures of a row's clips (``counts``): ``followed``, ``both_voiced`` (fractions of the
    recording's voiced frames), ``voiced_where_unvoiced`` (a fraction of the recording's unvoiced frames) and
    ``median_error_cents``, None unless ``aligned``; ``locked`` (a fraction
    of the row's voiced frames); the frame counts ``reference_voiced_frames`` and ``voiced_frames``.
    A figure over fewer than :data:`MIN_VOICED_FRAMES` frames is None."""
    reference_voiced = sum(count.reference_voiced for count in counts)
    both = sum(count.both_voiced for count in counts)
    voiced = sum(count.voiced for count in counts)
    errors = np.concatenate([count.errors_cents for count in counts]) if counts else np.zeros(0)
    return {
        "followed": _fraction(sum(count.followed for count in counts), reference_voiced) if aligned else None,
        "both_voiced": _fraction(both, reference_voiced) if aligned else None,
        "voiced_where_unvoiced": (
            _fraction(sum(c.voiced_where_unvoiced for c in counts), sum(c.reference_unvoiced for c in counts))
            if aligned
            else None
        ),
        "median_error_cents": float(np.median(errors)) if aligned and errors.size >= MIN_VOICED_FRAMES else None,
        "locked": _fraction(sum(count.locked for count in counts), voiced),
        "reference_voiced_frames": reference_voiced if aligned else None,
        "voiced_frames": voiced,
    }


def is_aligned(name: str) -> bool:
    """Whether row ``name``'s audio is frame-aligned with the recording: the recordings themselves and every
    row made from the ground-truth mels (``*_ground_truth``: Griffin-Lim and copy synthesis)."""
    return name == RECORDINGS_ROW or name.endswith("_ground_truth")


def pitch_row(
    name: str,
    description: str,
    ids: Sequence[str],
    tracks: Sequence[PitchTrack],
    recordings: Sequence[PitchTrack] | None,
    frequencies: Sequence[float],
    reference: bool,
) -> dict[str, Any]:
    """One row of the pitch table: a kind of audio over the held-out utterances.

    Args:
        ids: The utterances' ids, in order.
        tracks: Per utterance, the row's F0 track (:func:`track_pitch`).
        recordings: Per utterance, the recording's F0 track when the row is aligned with it; None for a
            row that is not (full TTS), which then gets only the lock figure.
        frequencies: :func:`lock_frequencies`.
        reference: A reference row (recordings, Griffin-Lim): shown for comparison, never flagged.

    Returns:
        ``name``, ``description``, ``reference``, ``aligned``, ``utterances``, the figures of
        :func:`figures_of`, ``per_utterance`` (id -> its ``followed`` and ``locked``),
        ``below_griffin_lim`` (None here; :func:`compare_with_griffin_lim` fills it) and ``flag``.
    """
    pairs = recordings if recordings is not None else [None] * len(tracks)
    counts = [count_frames(track, recording, frequencies) for track, recording in zip(tracks, pairs, strict=True)]
    aligned = recordings is not None
    per_utterance = {}
    for utterance_id, count in zip(ids, counts, strict=True):
        figures = figures_of([count], aligned)
        per_utterance[utterance_id] = {"followed": figures["followed"], "locked": figures["locked"]}
    row = {
        "name": name,
        "description": description,
        "reference": reference,
        "aligned": aligned,
        "utterances": len(counts),
        **figures_of(counts, aligned),
        "per_utterance": per_utterance,
        "below_griffin_lim": None,  # set by compare_with_griffin_lim for a copy-synthesis row
    }
    return {**row, "flag": flag_row(row)}


def flag_row(row: Mapping[str, Any]) -> str | None:
    """:data:`BUZZ` for a row under test (not ``reference``) with more than :data:`LOCK_LIMIT` of its voiced
    frames locked to the frame rate, else :data:`OFF_PITCH` when its followed fraction is more than
    :data:`BELOW_GRIFFIN_LIM` below Griffin-Lim's (``below_griffin_lim``); None otherwise."""
    if row["reference"]:
        return None
    if row.get("locked") is not None and row["locked"] > LOCK_LIMIT:
        return BUZZ
    below = row.get("below_griffin_lim")
    return OFF_PITCH if below is not None and below > BELOW_GRIFFIN_LIM else None


def compare_with_griffin_lim(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each aligned row under test gains ``below_griffin_lim`` (Griffin-Lim's followed fraction on the
    ground-truth mels minus its own, when both were measured) and its flag again (:func:`flag_row`)."""
    griffin_lim = next((row.get("followed") for row in rows if row["name"] == GRIFFIN_LIM_ROW), None)
    compared = []
    for row in rows:
        row = dict(row)
        if not row["reference"] and row["aligned"] and griffin_lim is not None and row["followed"] is not None:
            row["below_griffin_lim"] = griffin_lim - row["followed"]
            row["flag"] = flag_row(row)
        compared.append(row)
    return compared


def rows_of(
    ids: Sequence[str],
    audio: Mapping[str, Sequence[np.ndarray]],
    describe: Callable[[str], str],
    references: Iterable[str],
    cfg: AudioConfig,
) -> list[dict[str, Any]]:
    """:func:`pitch_row` for every row of ``audio`` (name -> per-utterance float ``(N,)`` audio, the
    listening test's), in its order. Rows :func:`is_aligned` are compared with the ``recordings`` row's
    clips (when ``audio`` has it); ``describe`` gives each row's words, ``references`` the names of
    reference rows. Each clip is tracked once, in this process."""
    reference_names = set(references)
    frequencies = lock_frequencies(cfg)
    tracks = {name: [track_pitch(clip, cfg.sampling_rate) for clip in clips] for name, clips in audio.items()}
    recordings = tracks.get(RECORDINGS_ROW)
    rows = [
        pitch_row(
            name, describe(name), ids, row_tracks, recordings if is_aligned(name) else None, frequencies,
            name in reference_names,
        )
        for name, row_tracks in tracks.items()
    ]  # fmt: skip
    return compare_with_griffin_lim(rows)


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f} %"


def _cents(value: float | None) -> str:
    # None when no frame is voiced in both (a vocoder that voices nothing the recording voices)
    return "no frame voiced in both" if value is None else f"{value:.0f} cents"


def findings(rows: Sequence[Mapping[str, Any]], cfg: AudioConfig) -> list[str]:
    """The flags in words: each flagged row, beside the recordings' and Griffin-Lim's figures."""
    by_name = {row["name"]: row for row in rows}
    recordings, griffin_lim = by_name.get(RECORDINGS_ROW, {}), by_name.get(GRIFFIN_LIM_ROW, {})
    rate = frame_rate_hz(cfg)
    notes = []
    for row in rows:
        if not row["flag"]:
            continue
        followed = (
            f"; it follows the recording's pitch in {_percent(row['followed'])} of the recording's voiced frames "
            f"(Griffin-Lim on the same mels: {_percent(griffin_lim.get('followed'))})"
            if row["followed"] is not None
            else ""
        )
        if row["flag"] == BUZZ:
            notes.append(
                f"{BUZZ}: {row['description']}: {_percent(row['locked'])} of its voiced frames have a pitch within "
                f"{100 * LOCK_TOLERANCE:.0f} % of the frame rate ({rate:.2f} Hz = sampling rate / hop) or its "
                f"octave (recordings: {_percent(recordings.get('locked'))}){followed}. The vocoder emits one "
                f"pulse per mel frame instead of the voice's harmonics; at most {100 * LOCK_LIMIT:.0f} % is "
                "expected."
            )
        else:
            notes.append(
                f"{OFF_PITCH}: {row['description']}{followed}: {100 * row['below_griffin_lim']:.0f} points below "
                f"Griffin-Lim, more than the {100 * BELOW_GRIFFIN_LIM:.0f} allowed; median error "
                f"{_cents(row['median_error_cents'])}."
            )
    return notes


DEFINITION = (
    f"Pitch from Praat (Sound.to_pitch: {1000 * TIME_STEP_S:.0f} ms frames, {PITCH_FLOOR_HZ:.0f} to "
    f"{PITCH_CEILING_HZ:.0f} Hz), pooled over the frames of all the held-out sentences. Followed: of the "
    "recording's voiced frames, the fraction where the row is voiced too and within "
    f"{FOLLOW_TOLERANCE_CENTS:.0f} cents of the recording's pitch (only rows made from the ground-truth mels, "
    "which keep the recording's timing; an unvoiced frame counts as not followed). Voiced with the "
    "recording: the fraction of the recording's voiced frames the row voices too; voiced where the recording "
    "is not: the fraction of the recording's unvoiced frames (fricatives, stops, pauses) where the row has a "
    "pitch (a tone or buzz where there should be noise or silence). Median error: the median "
    "absolute pitch difference in cents over frames voiced in both. Locked to the frame rate: the fraction "
    f"of the row's voiced frames within {100 * LOCK_TOLERANCE:.0f} % of sampling rate / hop length or its "
    "octave up or down (inside the pitch range), for every row; the recordings' figure is the chance level "
    f"of speech. {BUZZ}: a row under test with more than {100 * LOCK_LIMIT:.0f} % of its voiced frames locked. "
    f"{OFF_PITCH}: a copy-synthesis row that follows the recording more than {100 * BELOW_GRIFFIN_LIM:.0f} "
    f"points less than Griffin-Lim on the same mels. A figure over fewer than {MIN_VOICED_FRAMES} frames is "
    "not shown."
)

HOW_TO_READ = (
    "How to read it: a vocoder that follows the voice is near the recordings' 100 % and at least Griffin-Lim's "
    "figure, with a median error of a few tens of cents, and near the recordings' lock figure; a vocoder that "
    "buzzes is locked to the frame rate whatever pitch the mel asks for, and follows almost nothing."
)


def pitch_section(rows: Sequence[Mapping[str, Any]], ids: Sequence[str], cfg: AudioConfig) -> dict[str, Any]:
    """``report.json``'s ``quality.pitch``: ``definition``, ``how_to_read``, ``limits``, ``thresholds``,
    ``frame_rate_hz``, ``lock_frequencies_hz``, ``utterance_ids``, ``rows`` (:func:`pitch_row`) and
    ``findings`` (:func:`findings`)."""
    return {
        "definition": DEFINITION,
        "how_to_read": HOW_TO_READ,
        "limits": {"locked": LOCK_LIMIT, "below_griffin_lim": BELOW_GRIFFIN_LIM},
        "thresholds": {
            "follow_tolerance_cents": FOLLOW_TOLERANCE_CENTS,
            "lock_tolerance": LOCK_TOLERANCE,
            "lock_ratios": list(LOCK_RATIOS),
            "min_voiced_frames": MIN_VOICED_FRAMES,
            "time_step_s": TIME_STEP_S,
            "pitch_floor_hz": PITCH_FLOOR_HZ,
            "pitch_ceiling_hz": PITCH_CEILING_HZ,
        },
        "frame_rate_hz": frame_rate_hz(cfg),
        "lock_frequencies_hz": lock_frequencies(cfg),
        "utterance_ids": list(ids),
        "rows": [dict(row) for row in rows],
        "findings": findings(rows, cfg),
    }
