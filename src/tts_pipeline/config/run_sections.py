"""Config of inference, the benchmark and experiment tracking."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from tts_pipeline.config import model_kinds
from tts_pipeline.config.base import StrictModel

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
    amp: Literal["auto", "off", "fp16", "bf16"] = Field(
        "auto",
        description="Autocast precision; auto = on a CPU, per model the fastest way to run it whose output stays "
        "within 40 dB SNR of float32's, timed once per CPU model and torch version and cached (bf16 is tried only "
        "where the CPU advertises it; never a way slower than plain float32); float32 on CUDA. fp16 is CUDA-only.",
    )
    gpus: int = Field(1, ge=0, le=1, description="1 = the first visible GPU (CPU if none); 0 = CPU.")
    phrases: str | None = Field(
        None,
        description="Phrase file (name|text per line, or NVIDIA's .tsv); null = the texts of the first "
        "n_val_phrases validation utterances, named by id.",
    )
    n_val_phrases: int = Field(10, ge=1, description="Validation texts synthesised when phrases is null (devset10).")
    vocoder: str = Field(
        model_kinds.PIPELINE_VOCODER,
        description="The vocoder of synthesis: the fine-tuned HiFi-GAN, or WaveGlow (trained by train_waveglow, or "
        "waveglow.checkpoint); with waveglow the benchmark adds WaveGlow rows beside HiFi-GAN's.",
        json_schema_extra={"enum": list(model_kinds.vocoder_names())},
    )
    waveglow_sigma: float = Field(
        0.9, ge=0, description="WaveGlow's noise scale at synthesis (NVIDIA's inference scripts: 0.9; the paper 0.6)."
    )
    acoustic_model: str = Field(
        model_kinds.PIPELINE_ACOUSTIC_MODEL,
        description="The acoustic model of synthesis: FastPitch, or Tacotron 2 (NVIDIA's Tacotron 2 + WaveGlow "
        "system: trained by train_tacotron2, or tacotron2.checkpoint); with tacotron2 the benchmark adds "
        "Tacotron 2 rows beside FastPitch's.",
        json_schema_extra={"enum": list(model_kinds.acoustic_model_names())},
    )
    speaker: str | None = Field(
        None,
        min_length=1,
        description="The voice of a multi-speaker FastPitch: a speaker its model file names (the corpus's "
        "speaker names), or for a file that names none (NVIDIA's) an id 0 .. n_speakers - 1; null = speaker 0.",
    )
    tacotron2_gate_threshold: float | None = Field(
        None,
        gt=0,
        lt=1,
        description="Stop-gate probability that ends a Tacotron 2 utterance; null = the model file's "
        "(NVIDIA's 0.5).",
    )
    tacotron2_max_decoder_steps: int | None = Field(
        None,
        ge=1,
        description="Most mel frames Tacotron 2 decodes for one text before it is cut (with a warning naming "
        "the phrase); null = the model file's (NVIDIA's 2000, 23 s).",
    )

    @field_validator("vocoder")
    @classmethod
    def _known_vocoder(cls, name: str) -> str:
        # the choices are the rows of the table of kinds (model_kinds.VOCODERS), not a list kept here
        if name not in model_kinds.vocoder_names():
            raise ValueError(f"unknown vocoder; expected one of {', '.join(model_kinds.vocoder_names())}")
        return name

    @field_validator("acoustic_model")
    @classmethod
    def _known_acoustic_model(cls, name: str) -> str:
        if name not in model_kinds.acoustic_model_names():
            raise ValueError(f"unknown acoustic model; expected one of {', '.join(model_kinds.acoustic_model_names())}")
        return name

    @model_validator(mode="after")
    def _fits_the_acoustic_model(self) -> InferenceConfig:
        # Pace and pitch act on FastPitch's predicted durations and pitch; a model without them would
        # silently speak as if they were unset.
        kind = model_kinds.acoustic_model_kind(self.acoustic_model)
        if not kind.speaks_with_pace:
            changed = [
                key
                for key, unset in (("pace", 1.0), ("pitch_flatten", False), ("pitch_invert", False),
                                   ("pitch_amplify", 1.0), ("pitch_shift_hz", 0.0))
                if getattr(self, key) != unset
            ]  # fmt: skip
            if changed:
                raise ValueError(
                    f"{', '.join(changed)}: {kind.label} has no durations or pitch of its own to change; "
                    f"unset them or use acoustic_model {model_kinds.PIPELINE_ACOUSTIC_MODEL}"
                )
        if self.speaker is not None and "speaker" not in kind.settings:
            raise ValueError(f"speaker: {kind.label} speaks with one voice; leave speaker null")
        return self


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
        "section. Each clip costs about 0.3 s of CPU per row (closed-set decode).",
    )
    open_decode_clips: int | None = Field(
        None,
        ge=0,
        description="The first this many of them also get the open-vocabulary decode (about 1.5 s of CPU "
        "per clip and row, a secondary figure); null = all of them.",
    )
    recognise: bool = Field(
        True,
        description="false: the held-out rows are still synthesised, measured for pauses and drawn, but not "
        "recognised (for a machine without PocketSphinx, as make gpu-check's; recognise their WAVs elsewhere).",
    )
    n_figures: int = Field(
        2, ge=0, description="Held-out utterances drawn as side-by-side spectrograms, with their WAVs, per row."
    )
    gpus: int = Field(1, ge=0, le=1, description="1 = time on the first visible GPU (CPU if none); 0 = CPU.")


class ExportConfig(StrictModel):
    """The voice exported for serving (export_voice): ONNX and TorchScript files of FastPitch and the
    vocoder of inference.vocoder, checked against the eager models before the voice card is written."""

    formats: list[Literal["onnx", "torchscript"]] = Field(
        ["onnx", "torchscript"], min_length=1, description="What to write: ONNX (ONNX Runtime) and/or TorchScript."
    )
    opset: int = Field(17, ge=14, le=20, description="ONNX opset (14 at least: fused attention; 20: PyTorch's most).")
    n_texts: int = Field(
        16, ge=1, description="Validation texts the exports are checked on, alone and in padded batches."
    )
    batch_size: int = Field(4, ge=2, description="Items of the padded batches checked.")
    mel_tolerance: float = Field(
        1e-4, gt=0, description="Largest absolute difference of an exported FastPitch's mel from the eager one."
    )
    min_snr_db: float = Field(60.0, description="Least SNR of an exported vocoder's audio against the eager audio.")
    # not "register": pydantic models inherit ABCMeta.register, which a field of that name would shadow
    register_voice: bool = Field(
        True,
        description="Under tracking: log the ONNX voice as an MLflow model (text in, WAV out) in the export's run "
        "and register it in the Model Registry under the experiment's name, a new version only when the voice "
        "changed.",
    )
    registry_alias: str = Field(
        "champion",
        pattern=r"^[A-Za-z0-9_-]+$",
        max_length=255,
        description="The alias set on the registered voice's version: models:/<experiment>@<alias> is what "
        "`mlflow models serve -m` and `tts-pipeline serve` take. Letters, digits, _ and -; not latest nor "
        "v<number> (MLflow's own).",
    )

    @field_validator("registry_alias")
    @classmethod
    def _not_reserved(cls, alias: str) -> str:
        # MLflow refuses these as aliases (they already mean the newest and a numbered version)
        if alias.lower() == "latest" or (alias[:1] in "vV" and alias[1:].isdigit()):
            raise ValueError("reserved by MLflow (latest, v<number>); expected another name, e.g. champion")
        return alias


# --------------------------------------------------------------------------------------------------
# tracking
# --------------------------------------------------------------------------------------------------


class TrackingConfig(StrictModel):
    """MLflow tracking. Off: the pipeline runs the same and writes the same files."""

    enabled: bool = True
    uri: str | None = Field(None, description="MLflow tracking URI; null = SQLite store at <results_dir>/mlflow.db.")
    log_every_n_steps: int = Field(50, ge=1)
    log_models: bool = Field(
        True, description="Copy each trained model.pt into its MLflow run's artifacts (off: the store stays small)."
    )
