"""Whose voice does a synthesised voice sound like? Its sentences against each reference speaker's rendering
of the same sentences: MCD-DTW (the timbre, over mel cepstra aligned by DTW) and mean F0 (the pitch).

The references are eSpeak NG voices (the demo corpus's speakers, or the voice a model was adapted from),
each at its *base* settings, the centre of its per-utterance ranges
(:func:`tts_pipeline.benchmark.reference.demo_base_voice`), rendered in a fresh eSpeak process so that
they are the same bytes on every run. A voice is closest to the reference with the smallest median
MCD-DTW over the sentences, and, separately, to the one whose mean F0 (median over the sentences of the
mean of the voiced frames) is nearest its own.

A voice's F0 may be measured on other clips than its audio (``f0_clips``): a vocoder that has not yet
learnt the pitch buzzes at its frame rate (``sampling_rate / hop_length``, 86 Hz at 22,050 / 256), and a
pitch tracker then hears that buzz, not the pitch its mels carry; Griffin-Lim of the voice's mels shows
the pitch the acoustic model predicted.
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


def mean_f0(audio: np.ndarray, audio_cfg: AudioConfig, pitch_cfg: PitchConfig) -> float:
    """Mean F0 (Hz) of the voiced frames of ``audio``; NaN when no frame is voiced."""
    f0 = extract_pitch(audio, pitch_cfg, audio_cfg)
    voiced = f0[f0 > 0]
    return float(voiced.mean()) if voiced.size else float("nan")


@dataclass
class VoiceProfile:
    """What the comparison needs of one set of clips (a voice's, or a reference's), sentence by sentence:
    mel cepstra ``(D, T)`` and mean F0."""

    cepstra: list[np.ndarray]
    f0: list[float]

    @classmethod
    def of(cls, clips: Sequence[np.ndarray], quality: SpeechQuality) -> VoiceProfile:
        return cls(
            [quality.cepstra(clip) for clip in clips],
            [mean_f0(clip, quality.audio_cfg, quality.pitch_cfg) for clip in clips],
        )

    @property
    def median_f0(self) -> float:
        return median_f0(self.f0)


def median_f0(means: Sequence[float]) -> float:
    """The median over sentences of their mean F0s (NaN ones, without a voiced frame, left out)."""
    voiced = [value for value in means if np.isfinite(value)]
    return float(np.median(voiced)) if voiced else float("nan")


def likeness(
    voices: Mapping[str, Sequence[np.ndarray]],
    references: Mapping[str, Sequence[np.ndarray]],
    quality: SpeechQuality,
    progress: Callable[[str], None] | None = None,
    f0_clips: Mapping[str, Sequence[np.ndarray]] | None = None,
) -> list[dict[str, Any]]:
    """For each voice, its median MCD-DTW against each reference and its mean F0 beside theirs.

    Args:
        voices: The synthesised clips of each voice, by name, sentence by sentence.
        references: Each reference voice's clips of the same sentences, in the same order.
        quality: The audio and pitch settings (its ``cepstra``).
        progress: Told the name of each voice and reference as it is analysed (for log lines).
        f0_clips: Per voice, the clips its F0 is measured on instead of its audio (module docstring).

    Returns:
        One row per voice: ``voice``, ``mcd_db`` ``{reference: median dB}``, ``f0_hz`` (of its audio),
        ``f0_clips_hz`` (of its ``f0_clips``, None without), ``reference_f0_hz`` ``{reference: Hz}``,
        ``closest_mcd`` and ``closest_f0`` (reference names; by the ``f0_clips`` F0 where given).
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
    rows = []
    for name, clips in voices.items():
        own = profile(name, clips)
        pitch_clips = (f0_clips or {}).get(name)
        clips_f0 = None
        if pitch_clips is not None:
            clips_f0 = median_f0([mean_f0(clip, quality.audio_cfg, quality.pitch_cfg) for clip in pitch_clips])
        judged_f0 = own.median_f0 if clips_f0 is None else clips_f0
        mcd = {
            reference: float(np.median([mcd_dtw(ref, ours).mcd_db for ref, ours in
                                        zip(theirs[reference].cepstra, own.cepstra, strict=True)]))
            for reference in references
        }  # fmt: skip
        reference_f0 = {reference: theirs[reference].median_f0 for reference in references}
        rows.append(
            {
                "voice": name,
                "mcd_db": mcd,
                "f0_hz": own.median_f0,
                "f0_clips_hz": clips_f0,
                "reference_f0_hz": reference_f0,
                "closest_mcd": min(mcd, key=mcd.__getitem__),
                "closest_f0": min(reference_f0, key=lambda reference: abs(reference_f0[reference] - judged_f0)),
            }
        )
    return rows
