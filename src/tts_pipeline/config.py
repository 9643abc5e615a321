"""Typed, strict pipeline configuration: the one source of truth.

Every YAML config is parsed into :class:`PipelineConfig`. Unknown keys, wrong types and bad values
are errors that name the key's full path (``data.split.val_size``) and what was expected. The JSON
schema under ``workflow/schemas/`` is generated from these models (``tts-pipeline schema``), and each
Snakemake rule receives only the sections it reads (:func:`section_json`), so a change reruns exactly
the stages that depend on it.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from tts_pipeline.errors import UserError


class ConfigError(UserError, ValueError):
    """A config that cannot be used; the message names every offending key."""


class StrictModel(BaseModel):
    """Base for every section: unknown keys are errors, values are immutable once loaded."""

    model_config = ConfigDict(extra="forbid", frozen=True)


# --------------------------------------------------------------------------------------------------
# corpus
# --------------------------------------------------------------------------------------------------


class DemoCorpusConfig(StrictModel):
    """The embedded demo corpus: project-written sentences spoken by eSpeak NG."""

    n_utterances: int = Field(240, ge=1, le=100_000, description="Number of clips to synthesise.")
    seed: int = Field(1234, description="Seed of the per-utterance voice variation; same seed, same bytes.")
    voice: str = Field("en-us", min_length=1, description="eSpeak NG voice name.")
    rate_wpm: tuple[int, int] = Field(
        (150, 185), description="Speaking rate range in words per minute, drawn uniformly per utterance."
    )
    pitch: tuple[int, int] = Field(
        (35, 65), description="Base pitch range on eSpeak's 0-100 scale, drawn per utterance."
    )
    pitch_range: tuple[int, int] = Field(
        (40, 90), description="Intonation range on eSpeak's 0-100 scale (0 = monotone), drawn per utterance."
    )

    @model_validator(mode="after")
    def _ranges_ordered(self) -> DemoCorpusConfig:
        for name in ("rate_wpm", "pitch", "pitch_range"):
            low, high = getattr(self, name)
            if low > high:
                raise ValueError(f"{name}: expected [low, high] with low <= high, got [{low}, {high}]")
        if not 80 <= self.rate_wpm[0] <= self.rate_wpm[1] <= 450:
            raise ValueError(f"rate_wpm: expected values within 80..450, got {list(self.rate_wpm)}")
        for name in ("pitch", "pitch_range"):
            low, high = getattr(self, name)
            if not 0 <= low <= high <= 100:
                raise ValueError(f"{name}: expected values within 0..100, got [{low}, {high}]")
        return self


class LJSpeechDownloadConfig(StrictModel):
    """Where LJSpeech-1.1 comes from and how it is verified (reference section 7.1)."""

    url: str = "https://data.keithito.com/data/speech/LJSpeech-1.1.tar.bz2"
    sha256: str = Field("be1a30453f28eb8dd26af4101ae40cbf2c50413b1bb21936cbcdc6fae3de8aa5", pattern=r"^[0-9a-f]{64}$")
    size_bytes: int = Field(2_748_572_632, gt=0)


class CorpusConfig(StrictModel):
    """Which corpus the pipeline trains on. It lands in ``resources/<name>/`` (LJSpeech layout)."""

    source: Literal["demo", "ljspeech", "local"] = "demo"
    name: str = Field("demo", pattern=r"^[A-Za-z0-9_.-]+$", description="Folder name under resources/.")
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

    cleaners: Literal["english_cleaners_v2", "basic_cleaners"] = "english_cleaners_v2"
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


class AlignerConfig(StrictModel):
    """The standalone aligner of FastPitch 1.1 / RAD-TTS, trained to produce durations."""

    symbols: Literal["characters", "arpabet"] = Field(
        "characters",
        description="'characters': the cleaned text's characters; 'arpabet': CMUdict words as ARPAbet phones.",
    )
    embedding_dim: int = Field(384, ge=8, description="Symbol embedding size (text channels).")
    attention_dim: int = Field(80, ge=4, description="Channels of the key/query space.")
    temperature: float = Field(0.0005, gt=0, description="Scale of the negative squared distance scores.")
    prior_scaling: float = Field(1.0, ge=0, description="Beta-binomial prior scaling; 0 disables the prior.")
    batch_size: int = Field(16, ge=1)
    learning_rate: float = Field(1e-3, gt=0)
    weight_decay: float = Field(1e-6, ge=0)
    grad_clip: float = Field(1000.0, gt=0, description="Global gradient-norm clip.")
    epochs: int = Field(100, ge=1, description="Training stops after this many epochs ...")
    max_steps: int | None = Field(None, ge=1, description="... or this many optimiser steps, if set and sooner.")
    binarization_start_epoch: int = Field(0, ge=0, description="Epoch the binarisation loss starts ramping up.")
    binarization_warmup_epochs: int = Field(100, ge=1, description="Epochs over which its weight ramps to 1.")
    checkpoint_every_n_steps: int = Field(200, ge=1)
    keep_checkpoints: int = Field(3, ge=1, description="Resumable checkpoints kept in R/work/train_aligner/.")
    gpus: int = Field(0, ge=0, description="GPUs the rule asks for; 0 = CPU.")
    amp: Literal["off", "fp16", "bf16"] = Field("off", description="Mixed precision on CUDA (ignored on CPU).")
    num_workers: int = Field(0, ge=0, description="Data-loader worker processes.")
    seed: int = 1234


class DurationsConfig(StrictModel):
    """Where per-symbol durations come from."""

    source: Literal["aligner", "textgrid"] = Field(
        "aligner", description="'aligner': MAS on the trained aligner; 'textgrid': MFA-style TextGrids."
    )
    textgrid_dir: str | None = Field(
        None, description="Folder of <id>.TextGrid files; null = <corpus root>/alignments (the demo corpus)."
    )
    textgrid_tier: str = Field("phones", min_length=1, description="Interval tier whose labels become the symbols.")


# --------------------------------------------------------------------------------------------------
# HiFi-GAN
# --------------------------------------------------------------------------------------------------


class HiFiGANConfig(StrictModel):
    """HiFi-GAN vocoder: generator shape (jik876's key names), discriminators, NVIDIA's schedule."""

    resblock: Literal["1", "2"] = Field("1", description="'1' (v1/v2) or '2' (v3) residual blocks.")
    upsample_rates: list[int] = Field([8, 8, 2, 2], min_length=1, description="Product must equal hop_length.")
    upsample_kernel_sizes: list[int] = Field([16, 16, 4, 4], min_length=1)
    upsample_initial_channel: int = Field(512, ge=2)
    resblock_kernel_sizes: list[int] = Field([11, 7, 3], min_length=1)
    resblock_dilation_sizes: list[list[int]] = Field([[1, 3, 5], [1, 3, 5], [1, 3, 5]], min_length=1)
    mpd_periods: list[int] = Field([2, 3, 5, 7, 11], min_length=1)
    discriminator_channels_scale: float = Field(
        1.0, gt=0, le=1, description="Shrinks every discriminator width (demo only; 1.0 = the paper's)."
    )
    discriminator_start_step: int = Field(
        0,
        ge=0,
        description="Base training: optimiser steps in which the generator learns alone (mel + STFT losses, "
        "no MPD/MSD); the discriminators train from this step on. 0 = NVIDIA's recipe (adversarial from "
        "the start). Fine-tuning is always adversarial.",
    )
    stft_loss_scale: float = Field(
        0.0,
        ge=0,
        description="Weight of Parallel WaveGAN's multi-resolution STFT loss in the generator's objective "
        "(all steps); 0 = NVIDIA's objective (adversarial + feature matching + 45 x mel L1).",
    )
    learning_rate: float = Field(3e-4, gt=0)
    adam_betas: tuple[float, float] = (0.8, 0.99)
    weight_decay: float = Field(0.01, ge=0, description="AdamW's default, which the recipe keeps.")
    lr_decay: float = Field(0.9998, gt=0, le=1, description="ExponentialLR gamma, stepped once per epoch.")
    global_batch_size: int = Field(128, ge=1, description="GPUs x batch_size x accumulation; fixed whatever the GPUs.")
    batch_size: int = Field(16, ge=1, description="Per process and micro-step.")
    segment_size: int = Field(8192, ge=256, description="Audio samples per training item (multiple of hop).")
    epochs: int = Field(6500, ge=1)
    max_steps: int | None = Field(None, ge=1, description="Stop after this many optimiser steps, if sooner.")
    amp: Literal["off", "fp16", "bf16"] = Field("off", description="Mixed precision on CUDA (ignored on CPU).")
    gpus: int = Field(8, ge=0, description="GPUs the rule asks for; 0 = CPU. Snakemake may grant fewer.")
    num_workers: int = Field(4, ge=0, description="Data-loader workers per process.")
    seed: int = 1234
    validation_every_n_epochs: int = Field(10, ge=1)
    validation_repeats: int = Field(5, ge=1, description="Fixed random segments per validation utterance.")
    samples_every_n_epochs: int = Field(100, ge=1, description="Audio samples of validation clips to MLflow.")
    n_samples: int = Field(5, ge=0)
    checkpoint_every_n_epochs: int = Field(10, ge=1)
    keep_checkpoints: int = Field(2, ge=1)
    fine_tune_lr_factor: float = Field(3.0, gt=0, description="Fine-tuning multiplies the restored lr by this.")
    fine_tune_epochs: int = Field(
        3500, ge=1, description="Epochs of fine-tuning on FastPitch mels (the recipe goes from epoch 6500 to 10000)."
    )
    checkpoint: str | None = Field(
        None,
        description="A pretrained HiFi-GAN (model file of this pipeline, or a checkpoint of its trainer): "
        "skips train_hifigan and fine-tunes from it.",
    )

    @model_validator(mode="after")
    def _shapes_agree(self) -> HiFiGANConfig:
        if len(self.upsample_kernel_sizes) != len(self.upsample_rates):
            raise ValueError("upsample_kernel_sizes: expected one kernel per upsample rate")
        if len(self.resblock_dilation_sizes) != len(self.resblock_kernel_sizes):
            raise ValueError("resblock_dilation_sizes: expected one dilation list per resblock kernel size")
        if self.upsample_initial_channel % 2 ** len(self.upsample_rates):
            raise ValueError("upsample_initial_channel: must halve cleanly at every upsampling stage")
        return self


# --------------------------------------------------------------------------------------------------
# FastPitch
# --------------------------------------------------------------------------------------------------

# The fields of FastPitchConfig that shape the network (NVIDIA's constructor names); the rest is
# loss and schedule. A model file stores these, plus n_symbols and n_mels.
FASTPITCH_MODEL_FIELDS = (
    "symbols_embedding_dim",
    *(
        f"{stack}_fft_{name}"
        for stack in ("in", "out")
        for name in ("n_layers", "n_heads", "d_head", "conv1d_kernel_size", "conv1d_filter_size", "output_size")
    ),
    *(f"p_{stack}_fft_{name}" for stack in ("in", "out") for name in ("dropout", "dropatt", "dropemb")),
    *(
        f"{part}_predictor_{name}"
        for part in ("dur", "pitch", "energy")
        for name in ("kernel_size", "filter_size", "n_layers")
    ),
    *(f"p_{part}_predictor_dropout" for part in ("dur", "pitch", "energy")),
    "pitch_embedding_kernel_size",
    "energy_conditioning",
    "energy_embedding_kernel_size",
    "max_duration",
)


class FastPitchConfig(StrictModel):
    """FastPitch 1.1 (reference 3.1-3.7): network (NVIDIA's constructor names), loss scales, schedule.

    Durations come from the ``durations`` stage, so there is no aligner in the model.
    """

    # network: encoder ("input FFT") over symbols, decoder ("output FFT") over length-regulated frames
    symbols_embedding_dim: int = Field(384, ge=2, description="d_model of the embedding and both transformers (even).")
    in_fft_n_layers: int = Field(6, ge=1, description="Encoder layers.")
    in_fft_n_heads: int = Field(1, ge=1, description="Encoder attention heads.")
    in_fft_d_head: int = Field(64, ge=1, description="Encoder channels per head.")
    in_fft_conv1d_kernel_size: int = Field(3, ge=1, description="Encoder conv feed-forward kernel (odd).")
    in_fft_conv1d_filter_size: int = Field(1536, ge=1, description="Encoder conv feed-forward hidden channels.")
    in_fft_output_size: int = Field(384, ge=2, description="Encoder output channels; = symbols_embedding_dim.")
    p_in_fft_dropout: float = Field(0.1, ge=0, lt=1, description="Encoder residual dropout.")
    p_in_fft_dropatt: float = Field(0.1, ge=0, lt=1, description="Encoder attention-probability dropout.")
    p_in_fft_dropemb: float = Field(0.0, ge=0, lt=1, description="Dropout on embedding + positional embedding.")
    out_fft_n_layers: int = Field(6, ge=1, description="Decoder layers.")
    out_fft_n_heads: int = Field(1, ge=1, description="Decoder attention heads.")
    out_fft_d_head: int = Field(64, ge=1, description="Decoder channels per head.")
    out_fft_conv1d_kernel_size: int = Field(3, ge=1, description="Decoder conv feed-forward kernel (odd).")
    out_fft_conv1d_filter_size: int = Field(1536, ge=1, description="Decoder conv feed-forward hidden channels.")
    out_fft_output_size: int = Field(384, ge=2, description="Decoder output channels; = symbols_embedding_dim.")
    p_out_fft_dropout: float = Field(0.1, ge=0, lt=1, description="Decoder residual dropout.")
    p_out_fft_dropatt: float = Field(0.1, ge=0, lt=1, description="Decoder attention-probability dropout.")
    p_out_fft_dropemb: float = Field(0.0, ge=0, lt=1, description="Dropout on the decoder input + positions.")
    dur_predictor_kernel_size: int = Field(3, ge=1, description="Duration predictor conv kernel (odd).")
    dur_predictor_filter_size: int = Field(256, ge=1, description="Duration predictor conv channels.")
    p_dur_predictor_dropout: float = Field(0.1, ge=0, lt=1)
    dur_predictor_n_layers: int = Field(2, ge=1)
    pitch_predictor_kernel_size: int = Field(3, ge=1, description="Pitch predictor conv kernel (odd).")
    pitch_predictor_filter_size: int = Field(256, ge=1, description="Pitch predictor conv channels.")
    p_pitch_predictor_dropout: float = Field(0.1, ge=0, lt=1)
    pitch_predictor_n_layers: int = Field(2, ge=1)
    energy_predictor_kernel_size: int = Field(3, ge=1, description="Energy predictor conv kernel (odd).")
    energy_predictor_filter_size: int = Field(256, ge=1, description="Energy predictor conv channels.")
    p_energy_predictor_dropout: float = Field(0.1, ge=0, lt=1)
    energy_predictor_n_layers: int = Field(2, ge=1)
    pitch_embedding_kernel_size: int = Field(3, ge=1, description="Conv1d(1 -> d_model) over per-token pitch (odd).")
    energy_conditioning: bool = Field(True, description="Predict per-token energy and condition the decoder on it.")
    energy_embedding_kernel_size: int = Field(3, ge=1, description="Conv1d(1 -> d_model) over per-token energy (odd).")
    max_duration: int = Field(75, ge=1, description="Inference clamps predicted durations to [0, max_duration] frames.")

    # loss: mel MSE + scale x (duration, pitch, energy) MSE
    duration_loss_scale: float = Field(0.1, ge=0, description="Weight of the log-duration MSE.")
    pitch_loss_scale: float = Field(0.1, ge=0, description="Weight of the normalised-pitch MSE.")
    energy_loss_scale: float = Field(0.1, ge=0, description="Weight of the log-energy MSE.")

    # schedule (reference 3.7)
    optimizer: Literal["lamb", "adam"] = Field("lamb", description="'lamb': NVIDIA's (Fused)LAMB; 'adam': Adam.")
    learning_rate: float = Field(0.1, gt=0, description="Base rate, multiplied by the Noam schedule.")
    betas: tuple[float, float] = (0.9, 0.98)
    eps: float = Field(1e-9, gt=0)
    weight_decay: float = Field(1e-6, ge=0)
    warmup_steps: int = Field(1000, ge=0, description="Noam warm-up: the rate peaks at learning_rate / sqrt(warmup).")
    grad_clip: float = Field(1000.0, gt=0, description="Global gradient-norm clip.")
    global_batch_size: int = Field(256, ge=1, description="GPUs x batch_size x accumulation; fixed whatever the GPUs.")
    batch_size: int = Field(32, ge=1, description="Per process and micro-step.")
    length_bucketing: bool = Field(
        False,
        description="Put utterances of similar mel length in the same global batch, so that batches pad "
        "less and train more real frames per second. false = NVIDIA's random batches.",
    )
    bucket_pool: int = Field(
        50,
        ge=1,
        description="With length_bucketing: how many global batches' worth of shuffled utterances are sorted "
        "by length together before being cut into batches. Bigger = less padding, less random batches.",
    )
    epochs: int = Field(1000, ge=1)
    max_steps: int | None = Field(None, ge=1, description="Stop after this many optimiser steps, if sooner.")
    amp: Literal["off", "fp16", "bf16"] = Field("off", description="Mixed precision on CUDA (ignored on CPU).")
    gpus: int = Field(8, ge=0, description="GPUs the rule asks for; 0 = CPU. Snakemake may grant fewer.")
    num_workers: int = Field(4, ge=0, description="Data-loader workers per process.")
    seed: int = 1234
    validation_every_n_epochs: int = Field(10, ge=1)
    checkpoint_every_n_epochs: int = Field(20, ge=1)
    keep_checkpoints: int = Field(2, ge=1)
    n_plots: int = Field(3, ge=0, description="Validation utterances whose mel, duration and pitch are plotted.")
    checkpoint: str | None = Field(
        None,
        description="A pretrained FastPitch model file: the workflow skips train_fastpitch and uses it "
        "(to extract fine-tuning mels and to synthesise).",
    )
    extract_batch_size: int = Field(16, ge=1, description="Batch of the teacher-forced mel extraction.")

    @model_validator(mode="after")
    def _shapes_agree(self) -> FastPitchConfig:
        d_model = self.symbols_embedding_dim
        if d_model % 2:
            raise ValueError(f"symbols_embedding_dim: expected an even number ([sin, cos] positions), got {d_model}")
        for key in ("in_fft_output_size", "out_fft_output_size"):
            # The encoder feeds the predictors and, with the pitch/energy embeddings added, the decoder;
            # the decoder feeds the mel projection: every one of them is d_model wide.
            if getattr(self, key) != d_model:
                raise ValueError(f"{key}: must equal symbols_embedding_dim ({d_model}), got {getattr(self, key)}")
        for key in FASTPITCH_MODEL_FIELDS:
            if key.endswith("kernel_size") and getattr(self, key) % 2 == 0:
                raise ValueError(f"{key}: expected an odd kernel (the convs keep the length), got {getattr(self, key)}")
        if self.global_batch_size % self.batch_size:
            raise ValueError(
                f"global_batch_size: expected a multiple of batch_size ({self.batch_size}), "
                f"got {self.global_batch_size}"
            )
        return self


# --------------------------------------------------------------------------------------------------
# inference and benchmark
# --------------------------------------------------------------------------------------------------


class InferenceConfig(StrictModel):
    """Synthesis settings (reference 5.2-5.3)."""

    batch_size: int = Field(8, ge=1, description="Utterances per FastPitch call, after sorting by token count.")
    pace: float = Field(1.0, gt=0, description="Speaking rate: durations are divided by it (0.5 = half speed).")
    pitch_flatten: bool = Field(False, description="Monotone: every token at the speaker's mean pitch.")
    pitch_invert: bool = Field(False, description="Mirror the pitch contour around the mean.")
    pitch_amplify: float = Field(1.0, description="Scale the normalised pitch contour (> 1 livelier).")
    pitch_shift_hz: float = Field(0.0, description="Shift the whole contour by this many Hz.")
    denoising_strength: float = Field(
        0.01, ge=0, description="Subtract this x the vocoder's bias spectrum (0 = off; NVIDIA's example: 0.01)."
    )
    fade_out_frames: int = Field(10, ge=0, description="Linear fade to 0 over the last frames of each utterance.")
    normalize_peak: bool = Field(False, description="Scale each utterance to a peak of 1.0, as NVIDIA's script does.")
    amp: Literal["off", "fp16", "bf16"] = Field("off", description="Autocast on CUDA; the CPU runs fp32.")
    gpus: int = Field(1, ge=0, le=1, description="1 = the first visible GPU (CPU if none); 0 = CPU.")
    phrases: str | None = Field(
        None,
        description="Phrase file (name|text per line, or NVIDIA's .tsv); null = the texts of the first "
        "n_val_phrases validation utterances, named by id.",
    )
    n_val_phrases: int = Field(10, ge=1, description="Validation texts synthesised when phrases is null (devset10).")


class BenchmarkConfig(StrictModel):
    """Inference benchmark and objective quality (reference section 5.3)."""

    phrases: str = Field(
        "config/phrases/benchmark_128.txt", description="The phrase timed (NVIDIA's 128-character sentence)."
    )
    batch_sizes: list[int] = Field([1, 2, 4, 8], min_length=1, description="Each batch repeats the phrase.")
    precisions: list[Literal["fp32", "fp16", "bf16"]] = Field(
        ["fp32", "fp16", "bf16"], min_length=1, description="Those the device cannot run are skipped and listed."
    )
    warmup: int = Field(100, ge=0, description="Untimed calls before measuring (NVIDIA: 100).")
    repeats: int = Field(200, ge=1, description="Timed calls per batch size and precision (NVIDIA: 200).")
    denoising_strength: float = Field(0.0, ge=0, description="NVIDIA's benchmark script times without denoising.")
    threads: int = Field(
        2, ge=1, description="CPU threads when benchmarking on the CPU; also speech-recogniser processes at once."
    )
    n_quality: int = Field(100, ge=1, description="Validation utterances for the vocoders' mel L1.")
    intelligibility_clips: int = Field(
        100,
        ge=0,
        description="Held-out utterances (validation, then test) recognised by PocketSphinx in every row of "
        "the intelligibility table (recordings, Griffin-Lim, copy synthesis, TTS); 0 = no intelligibility "
        "section. Each clip costs about 1 s of CPU per row.",
    )
    n_figures: int = Field(
        2, ge=0, description="Held-out utterances drawn as side-by-side spectrograms, with their WAVs, per row."
    )
    gpus: int = Field(1, ge=0, le=1, description="1 = time on the first visible GPU (CPU if none); 0 = CPU.")


# --------------------------------------------------------------------------------------------------
# tracking
# --------------------------------------------------------------------------------------------------


class TrackingConfig(StrictModel):
    """MLflow tracking. Off: the pipeline runs the same and writes the same files."""

    enabled: bool = True
    uri: str | None = Field(None, description="MLflow tracking URI; null = SQLite store at <results_dir>/mlflow.db.")
    log_every_n_steps: int = Field(50, ge=1)


# --------------------------------------------------------------------------------------------------
# the whole pipeline
# --------------------------------------------------------------------------------------------------


class PipelineConfig(StrictModel):
    """The whole pipeline. ``experiment`` decides ``<results_dir>/<experiment>/``."""

    experiment: str = Field(
        pattern=r"^[A-Za-z0-9_.-]+$", description="Experiment name: output folder and MLflow experiment."
    )
    results_dir: str = "results"
    resources_dir: str = "resources"
    tracking: TrackingConfig = TrackingConfig()
    corpus: CorpusConfig = CorpusConfig()
    audio: AudioConfig = AudioConfig()
    text: TextConfig = TextConfig()
    data: DataConfig = DataConfig()
    pitch: PitchConfig = PitchConfig()
    aligner: AlignerConfig = AlignerConfig()
    durations: DurationsConfig = DurationsConfig()
    hifigan: HiFiGANConfig = HiFiGANConfig()
    fastpitch: FastPitchConfig = FastPitchConfig()
    inference: InferenceConfig = InferenceConfig()
    benchmark: BenchmarkConfig = BenchmarkConfig()

    @model_validator(mode="after")
    def _hifigan_matches_audio(self) -> PipelineConfig:
        product = 1
        for rate in self.hifigan.upsample_rates:
            product *= rate
        if product != self.audio.hop_length:
            raise ValueError(
                f"hifigan.upsample_rates: their product ({product}) must equal audio.hop_length "
                f"({self.audio.hop_length})"
            )
        if self.hifigan.segment_size % self.audio.hop_length:
            raise ValueError(f"hifigan.segment_size: expected a multiple of audio.hop_length ({self.audio.hop_length})")
        return self

    @property
    def experiment_dir(self) -> Path:
        return Path(self.results_dir) / self.experiment


def _format_errors(error: ValidationError, source: str) -> str:
    lines = [f"invalid config ({source}):"]
    for item in error.errors():
        path = ".".join(str(part) for part in item["loc"]) or "<top level>"
        message = item["msg"].removeprefix("Value error, ")
        if item["type"] == "extra_forbidden":
            message = "unknown key (check its spelling and section; see config/README.md)"
        elif "input" in item and item["type"] not in ("missing",) and not isinstance(item["input"], dict):
            message += f" (got {item['input']!r})"
        lines.append(f"  - {path}: {message}")
    return "\n".join(lines)


def parse_config(raw: dict[str, Any], source: str = "<dict>") -> PipelineConfig:
    """Validate a config mapping; raise :class:`ConfigError` naming every bad key."""
    if not isinstance(raw, dict):
        raise ConfigError(f"invalid config ({source}): expected a mapping at the top level, got {type(raw).__name__}")
    try:
        return PipelineConfig.model_validate(raw)
    except ValidationError as error:
        raise ConfigError(_format_errors(error, source)) from None


def load_config(path: str | Path) -> PipelineConfig:
    """Read and validate a YAML config file."""
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {path}") from None
    except yaml.YAMLError as error:
        raise ConfigError(f"config file {path} is not valid YAML: {error}") from None
    return parse_config(raw or {}, source=str(path))


def parse_section(model: type[StrictModel], payload: str | dict[str, Any], name: str) -> StrictModel:
    """Rebuild one section from the JSON a rule passed on the command line."""
    raw = json.loads(payload) if isinstance(payload, str) else payload
    try:
        return model.model_validate(raw)
    except ValidationError as error:
        message = _format_errors(error, f"section '{name}'")
        raise ConfigError(message.replace("  - ", f"  - {name}.")) from None


def section_json(config: PipelineConfig, *names: str) -> str:
    """Compact, key-sorted JSON of the named sections: a rule's params and its config hash input."""
    payload = {name: getattr(config, name).model_dump(mode="json") for name in names}
    return json.dumps(payload, sort_keys=True, separators=(",", ":"))


def config_hash(payload: str | dict[str, Any]) -> str:
    """Short stable hash of a config slice (SHA-256 of its canonical JSON, 12 hex digits)."""
    if not isinstance(payload, str):
        payload = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    else:
        payload = json.dumps(json.loads(payload), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:12]


def json_schema() -> dict[str, Any]:
    """The JSON schema of :class:`PipelineConfig`, as written to ``workflow/schemas/config.schema.json``."""
    schema = PipelineConfig.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema
