"""Whose voice does a synthesised voice sound like? Its sentences against each reference speaker's rendering
of the same sentences: MCD-DTW (the timbre, over mel cepstra aligned by DTW) and mean F0 (the pitch).

The references are eSpeak NG voices (the demo corpus's speakers, or the voice a model was adapted from),
each at its *base* settings, the centre of its per-utterance ranges
(:func:`tts_pipeline.benchmark.reference.demo_base_voice`), rendered in a fresh eSpeak process so that
they are the same bytes on every run. A voice is closest to the reference with the smallest median
MCD-DTW over the sentences, and, separately, to the one whose mean F0 (median over the sentences of the
mean of the voiced frames) is nearest its own; and to the one whose median F0 (of the voiced frames, a
figure that a tone on a few frames does not move) is.

A voice may also be judged on other clips of the same sentences (``mel_clips``, Griffin-Lim of its mels):
those show what the acoustic model predicted, without the vocoder. A vocoder that has not yet learnt the
pitch buzzes at its frame rate (``sampling_rate / hop_length``, 86 Hz at 22,050 / 256) or adds a tone
where the voice is unvoiced, and a pitch tracker then hears that, not the pitch the mels carry; and a
briefly trained vocoder smears the formants of every voice alike, which brings every voice's MCD-DTW
towards the same few dB and can hide whose timbre the mels carry.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tts_pipeline.benchmark.quality import SpeechQuality, mcd_dtw
from tts_pipeline.benchmark.reference import demo_base_voice
from tts_pipeline.config import AudioConfig, DemoCorpusConfig, PitchConfig
from tts_pipeline.data.espeak import SAMPLE_RATE, SynthRequest, synthesize_in_fresh_process
from tts_pipeline.errors import UserError
from tts_pipeline.features.pitch import extract_pitch


@dataclass(frozen=True)
class ReferenceVoice:
    """An eSpeak NG voice to compare with.

    Attributes:
        name: How tables name it (a speaker's name, or the experiment whose corpus it speaks).
        espeak_voice: eSpeak NG's voice name with its variant (``en-us+f4``).
        ranges: Its per-utterance ranges (``rate_wpm``, ``pitch``, ``pitch_range``): a demo corpus section
            or one of its speakers; the references speak at their centre.
    """

    name: str
    espeak_voice: str
    ranges: Any


def demo_voices(demo: DemoCorpusConfig, name: str) -> list[ReferenceVoice]:
    """The voices of a demo corpus section: each speaker's (``corpus.demo.speakers``), or its one voice,
    named ``name``."""
    speakers = getattr(demo, "speakers", None) or []
    if speakers:
        return [ReferenceVoice(speaker.name, speaker.voice, speaker) for speaker in speakers]
    return [ReferenceVoice(name, demo.voice, demo)]


def render(voice: ReferenceVoice, texts: Sequence[str], audio_cfg: AudioConfig) -> list[np.ndarray]:
    """``voice`` speaking each (already normalised) text: float32 ``(N,)`` waveforms in [-1, 1]."""
    if audio_cfg.sampling_rate != SAMPLE_RATE:
        raise UserError(
            f"eSpeak NG renders at {SAMPLE_RATE} Hz but audio.sampling_rate is {audio_cfg.sampling_rate}: "
            "the references could not be compared with the synthesised voices"
        )
    settings = demo_base_voice(voice.ranges)
    requests = [SynthRequest(" ".join(text.split()), settings) for text in texts]
    renderings = synthesize_in_fresh_process(requests, voice.espeak_voice)
    return [synthesis.audio.astype(np.float32) / 32768.0 for synthesis in renderings]


def voiced_f0(audio: np.ndarray, audio_cfg: AudioConfig, pitch_cfg: PitchConfig) -> np.ndarray:
    """The F0 (Hz) of the voiced frames of ``audio``: float ``(V,)``, empty when no frame is voiced."""
    f0 = extract_pitch(audio, pitch_cfg, audio_cfg)
    return f0[f0 > 0]


@dataclass
class VoiceProfile:
    """What the comparison needs of one set of clips (a voice's, or a reference's), sentence by sentence:
    mel cepstra ``(D, T)``, and the mean and the median F0 of the voiced frames (NaN without one).

    The mean is the usual figure of a speaker's pitch; the median is the pitch most of the voiced frames
    have, which a tone on a minority of frames (a vocoder's, where the speaker is unvoiced) does not move.
    """

    cepstra: list[np.ndarray]
    f0_means: list[float]
    f0_medians: list[float]

    @classmethod
    def of(cls, clips: Sequence[np.ndarray], quality: SpeechQuality) -> VoiceProfile:
        tracks = [voiced_f0(clip, quality.audio_cfg, quality.pitch_cfg) for clip in clips]
        return cls(
            [quality.cepstra(clip) for clip in clips],
            [float(track.mean()) if track.size else float("nan") for track in tracks],
            [float(np.median(track)) if track.size else float("nan") for track in tracks],
        )

    @property
    def mean_f0(self) -> float:
        """The median over sentences of their mean F0s."""
        return over_sentences(self.f0_means)

    @property
    def median_f0(self) -> float:
        """The median over sentences of their median F0s."""
        return over_sentences(self.f0_medians)


def over_sentences(values: Sequence[float]) -> float:
    """The median over sentences of a per-sentence figure (NaN ones, without a voiced frame, left out)."""
    voiced = [value for value in values if np.isfinite(value)]
    return float(np.median(voiced)) if voiced else float("nan")


def likeness(
    voices: Mapping[str, Sequence[np.ndarray]],
    references: Mapping[str, Sequence[np.ndarray]],
    quality: SpeechQuality,
    progress: Callable[[str], None] | None = None,
    mel_clips: Mapping[str, Sequence[np.ndarray]] | None = None,
) -> list[dict[str, Any]]:
    """For each voice, its median MCD-DTW against each reference and its F0 beside theirs.

    Args:
        voices: The synthesised clips of each voice, by name, sentence by sentence.
        references: Each reference voice's clips of the same sentences, in the same order.
        quality: The audio and pitch settings (its ``cepstra``).
        progress: Told the name of each voice and reference as it is analysed (for log lines).
        mel_clips: Per voice, its sentences without the vocoder (Griffin-Lim of its mels; module docstring).

    Returns:
        One row per voice: ``voice``, ``mcd_db`` ``{reference: median dB}``, ``f0_hz`` and ``f0_median_hz``
        (the mean and the median F0 of its audio, :class:`VoiceProfile`), ``reference_f0_hz`` and
        ``reference_f0_median_hz`` ``{reference: Hz}``, ``closest_mcd``, ``closest_f0`` (by the mean F0, of
        the ``mel_clips`` where given) and ``closest_f0_median`` (by the median F0 of the audio); with
        ``mel_clips`` also ``mcd_mels_db``, ``closest_mcd_mels`` and ``f0_clips_hz`` (their MCD-DTW, its
        closest reference, their mean F0), which are None without.
    """
    lengths = {len(clips) for clips in (*voices.values(), *references.values())}
    if len(lengths) != 1:
        raise ValueError(f"likeness: every voice and reference needs the same sentences, got counts {sorted(lengths)}")

    def profile(name: str, clips: Sequence[np.ndarray]) -> VoiceProfile:
        if progress is not None:
            progress(name)
        return VoiceProfile.of(clips, quality)

    # apart: a voice may bear the name of a reference (the demo voice against the demo corpus's voice)
    theirs = {name: profile(name, clips) for name, clips in references.items()}

    def distances(own: VoiceProfile) -> dict[str, float]:
        return {
            reference: float(np.median([mcd_dtw(ref, ours).mcd_db for ref, ours in
                                        zip(theirs[reference].cepstra, own.cepstra, strict=True)]))
            for reference in references
        }  # fmt: skip

    reference_f0 = {reference: theirs[reference].mean_f0 for reference in references}
    reference_median_f0 = {reference: theirs[reference].median_f0 for reference in references}

    def nearest(f0_hz: float, of: dict[str, float]) -> str:
        return min(of, key=lambda reference: abs(of[reference] - f0_hz))

    rows = []
    for name, clips in voices.items():
        own = profile(name, clips)
        mcd = distances(own)
        without_vocoder = (mel_clips or {}).get(name)
        mcd_mels, clips_f0 = None, None
        if without_vocoder is not None:
            mels_profile = profile(f"{name} (Griffin-Lim of its mels)", without_vocoder)
            mcd_mels, clips_f0 = distances(mels_profile), mels_profile.mean_f0
        judged_f0 = own.mean_f0 if clips_f0 is None else clips_f0
        rows.append(
            {
                "voice": name,
                "mcd_db": mcd,
                "mcd_mels_db": mcd_mels,
                "f0_hz": own.mean_f0,
                "f0_median_hz": own.median_f0,
                "f0_clips_hz": clips_f0,
                "reference_f0_hz": reference_f0,
                "reference_f0_median_hz": reference_median_f0,
                "closest_mcd": min(mcd, key=mcd.__getitem__),
                "closest_mcd_mels": None if mcd_mels is None else min(mcd_mels, key=mcd_mels.__getitem__),
                "closest_f0": nearest(judged_f0, reference_f0),
                "closest_f0_median": nearest(own.median_f0, reference_median_f0),
            }
        )
    return rows
