"""Config of the data stages: corpus, audio front end, text, manifest rules, pitch."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from tts_pipeline.config.base import FOLDER_NAME_PATTERN, IntPair, StrictModel

# --------------------------------------------------------------------------------------------------
# corpus
# --------------------------------------------------------------------------------------------------


SPEAKER_NAME_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
"""A speaker name: letters, digits, '_' and '-' (1 to 64). It is a metadata field, a manifest field, a key of
``pitch_stats.json`` and a metric-name suffix, so it must be safe in all of them."""


def _check_voice_ranges(model: DemoSpeakerConfig | DemoCorpusConfig) -> None:
    """The per-utterance ranges of a demo voice (``rate_wpm``, ``pitch``, ``pitch_range``): ordered and
    inside eSpeak NG's scales. ValueError naming the field."""
    for name in ("rate_wpm", "pitch", "pitch_range"):
        low, high = getattr(model, name)
        if low > high:
            raise ValueError(f"{name}: expected [low, high] with low <= high, got [{low}, {high}]")
    rate_wpm = model.rate_wpm
    if not 80 <= rate_wpm[0] <= rate_wpm[1] <= 450:
        raise ValueError(f"rate_wpm: expected values within 80..450, got {list(rate_wpm)}")
    for name in ("pitch", "pitch_range"):
        low, high = getattr(model, name)
        if not 0 <= low <= high <= 100:
            raise ValueError(f"{name}: expected values within 0..100, got [{low}, {high}]")


class DemoSpeakerConfig(StrictModel):
    """One voice of a multi-speaker demo corpus: an eSpeak NG voice with its own per-utterance ranges."""

    name: str = Field(
        pattern=SPEAKER_NAME_PATTERN,
        description="Speaker name (letters, digits, _ and -): the 4th field of metadata.csv, the manifests' "
        "'speaker'; speaker ids are the names' sorted order.",
    )
    voice: str = Field(
        pattern=r"^[A-Za-z0-9_-]+(\+[A-Za-z0-9_-]+)?$",
        description="eSpeak NG voice, optionally with a variant: en-us+m3 (male), en-us+f3 (female), "
        "en+m3 (British English), en-gb-x-rp+f2 (Received Pronunciation); variants are the files of "
        "espeak-ng-data/voices/!v (m1-m8, f1-f5, klatt, ...).",
    )
    rate_wpm: IntPair = Field((150, 185), description="Speaking rate range in words per minute, drawn per utterance.")
    pitch: IntPair = Field((35, 65), description="Base pitch range on eSpeak's 0-100 scale, drawn per utterance.")
    pitch_range: IntPair = Field(
        (40, 90), description="Intonation range on eSpeak's 0-100 scale (0 = monotone), drawn per utterance."
    )

    @model_validator(mode="after")
    def _ranges_ordered(self) -> DemoSpeakerConfig:
        _check_voice_ranges(self)
        return self


class DemoCorpusConfig(StrictModel):
    """The embedded demo corpus: project-written sentences spoken by eSpeak NG."""

    n_utterances: int = Field(240, ge=1, le=100_000, description="Number of clips to synthesise.")
    seed: int = Field(1234, description="Seed of the per-utterance voice variation; same seed, same bytes.")
    voice: str = Field("en-us", min_length=1, description="eSpeak NG voice name.")
    rate_wpm: IntPair = Field(
        (150, 185), description="Speaking rate range in words per minute, drawn uniformly per utterance."
    )
    pitch: IntPair = Field(
        (35, 65), description="Base pitch range on eSpeak's 0-100 scale, drawn per utterance."
    )
    pitch_range: IntPair = Field(
        (40, 90), description="Intonation range on eSpeak's 0-100 scale (0 = monotone), drawn per utterance."
    )
    speakers: list[DemoSpeakerConfig] = Field(
        default_factory=list,
        description="Several voices (a multi-speaker corpus): each utterance is spoken by one of them, "
        "assigned in turn over the sentences; metadata.csv gets the speaker as a 4th field. Empty: one "
        "speaker, the voice and ranges above (which a non-empty list replaces).",
    )

    @model_validator(mode="after")
    def _ranges_ordered(self) -> DemoCorpusConfig:
        _check_voice_ranges(self)
        names = [speaker.name for speaker in self.speakers]
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            raise ValueError(f"speakers: each name once, but {', '.join(map(repr, repeated))} appear(s) more than once")
        if len(self.speakers) > self.n_utterances:
            raise ValueError(
                f"speakers: {len(self.speakers)} speakers but n_utterances is {self.n_utterances}; "
                "expected at least one utterance per speaker"
            )
        return self


class LJSpeechDownloadConfig(StrictModel):
    """Where LJSpeech-1.1 comes from and how it is verified (reference section 7.1)."""

    url: str = "https://data.keithito.com/data/speech/LJSpeech-1.1.tar.bz2"
    sha256: str = Field("be1a30453f28eb8dd26af4101ae40cbf2c50413b1bb21936cbcdc6fae3de8aa5", pattern=r"^[0-9a-f]{64}$")
    size_bytes: int = Field(2_748_572_632, gt=0)


class CorpusConfig(StrictModel):
    """Which corpus the pipeline trains on. It lands in ``resources/<name>/`` (LJSpeech layout)."""

    source: Literal["demo", "ljspeech", "local"] = "demo"
    name: str = Field("demo", pattern=FOLDER_NAME_PATTERN, description="Folder name under resources/.")
    path: str | None = Field(None, description="An existing LJSpeech-layout folder; required for source 'local'.")
    demo: DemoCorpusConfig = DemoCorpusConfig()
    ljspeech: LJSpeechDownloadConfig = LJSpeechDownloadConfig()

    @model_validator(mode="after")
    def _path_matches_source(self) -> CorpusConfig:
        if self.source == "local" and not self.path:
            raise ValueError("path: required when source is 'local' (an LJSpeech-layout folder)")
        if self.source != "local" and self.path:
            raise ValueError(f"path: only used when source is 'local', but source is '{self.source}'")
        return self


# --------------------------------------------------------------------------------------------------
# audio, text, data (manifest)
# --------------------------------------------------------------------------------------------------


class AudioConfig(StrictModel):
    """The mel front end shared by every stage (reference section 1.1)."""

    sampling_rate: int = Field(22050, gt=0)
    filter_length: int = Field(1024, gt=0, description="n_fft")
    hop_length: int = Field(256, gt=0)
    win_length: int = Field(1024, gt=0)
    n_mel_channels: int = Field(80, gt=0)
    mel_fmin: float = Field(0.0, ge=0)
    mel_fmax: float = Field(8000.0, gt=0)
    mel_fmax_loss: float | None = Field(None, description="fmax of the HiFi-GAN loss mel; null = sampling_rate / 2.")
    max_wav_value: float = Field(32768.0, gt=0)

    @model_validator(mode="after")
    def _consistent(self) -> AudioConfig:
        nyquist = self.sampling_rate / 2
        if self.win_length > self.filter_length:
            raise ValueError(f"win_length: expected <= filter_length ({self.filter_length}), got {self.win_length}")
        if (self.filter_length - self.hop_length) % 2:
            raise ValueError("filter_length - hop_length: expected an even number (HiFi-GAN reflect padding)")
        if not self.mel_fmin < self.mel_fmax <= nyquist:
            raise ValueError(f"mel_fmax: expected mel_fmin < mel_fmax <= {nyquist:g}, got {self.mel_fmax:g}")
        if self.mel_fmax_loss is not None and not self.mel_fmin < self.mel_fmax_loss <= nyquist:
            raise ValueError(f"mel_fmax_loss: expected mel_fmin < value <= {nyquist:g}, got {self.mel_fmax_loss:g}")
        return self


class TextConfig(StrictModel):
    """Text front end: cleaners and the symbol set models are trained on."""

    cleaners: Literal["english_cleaners_v2", "english_extended_cleaners", "basic_cleaners"] = Field(
        "english_cleaners_v2",
        description="english_cleaners_v2: NVIDIA's front end, exactly (for their checkpoints); "
        "english_extended_cleaners: this project's fuller reading of numbers, units and abbreviations; "
        "basic_cleaners: lower case and whitespace only.",
    )
    symbol_set: Literal["english_basic"] = "english_basic"


class SplitConfig(StrictModel):
    """How utterances are divided into train / val / test."""

    scheme: Literal["ljspeech", "random"] = Field(
        "random", description="'ljspeech': NVIDIA's fixed v3 split; 'random': seeded, sizes below."
    )
    val_size: int = Field(100, ge=1)
    test_size: int = Field(500, ge=0)
    seed: int = 1234


class DataConfig(StrictModel):
    """Manifest stage: which utterances are usable, and how they are split."""

    on_invalid: Literal["error", "skip"] = Field(
        "error", description="'error': stop with the full list of bad utterances; 'skip': exclude and record them."
    )
    resample: bool = Field(False, description="Resample audio at another rate instead of rejecting it.")
    min_duration_s: float = Field(0.5, ge=0)
    max_duration_s: float = Field(20.0, gt=0)
    clip_level: float = Field(0.999, gt=0, le=1, description="|x| at or above this fraction of full scale is clipped.")
    max_clipped_fraction: float = Field(0.001, ge=0, le=1, description="Reject above this fraction of clipped samples.")
    split: SplitConfig = SplitConfig()

    @model_validator(mode="after")
    def _durations_ordered(self) -> DataConfig:
        if self.min_duration_s >= self.max_duration_s:
            raise ValueError(
                f"max_duration_s: expected > min_duration_s ({self.min_duration_s:g}), got {self.max_duration_s:g}"
            )
        return self


# --------------------------------------------------------------------------------------------------
# features: pitch, aligner, durations
# --------------------------------------------------------------------------------------------------


class PitchConfig(StrictModel):
    """Frame-level f0 at the mel frame centres (0 = unvoiced)."""

    method: Literal["praat", "pyin"] = Field(
        "praat", description="'praat': autocorrelation (fast); 'pyin': librosa's pYIN, as NVIDIA's FastPitch 1.1."
    )
    floor_hz: float = Field(75.0, gt=0, description="Lowest f0 searched (praat pitch floor / pyin fmin).")
    ceiling_hz: float = Field(600.0, gt=0, description="Highest f0 searched (praat pitch ceiling / pyin fmax).")
    voicing_threshold: float = Field(0.45, ge=0, le=1, description="Praat's voicing threshold (ignored by pyin).")

    @model_validator(mode="after")
    def _floor_below_ceiling(self) -> PitchConfig:
        if self.floor_hz >= self.ceiling_hz:
            raise ValueError(f"ceiling_hz: expected > floor_hz ({self.floor_hz:g}), got {self.ceiling_hz:g}")
        return self
