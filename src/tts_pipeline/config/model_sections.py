"""Config of the models: aligner, durations source, HiFi-GAN, FastPitch, Tacotron 2."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, create_model, model_validator

from tts_pipeline.config.base import FloatPair, StrictModel
from tts_pipeline.config.loop_settings import BucketedLoopSettings, EpochLoopSettings, LoopSettings


class AlignerConfig(
    LoopSettings.with_defaults(
        epochs=100,
        batch_size=16,
        gpus=0,
        num_workers=0,
        keep_checkpoints=3,
        descriptions={
            "gpus": "GPUs the rule asks for: 0 = CPU, more = one CUDA device (the aligner trains in one process).",
            "amp": "Mixed precision, the same on CUDA and a CPU: 'bf16' autocasts the key and query convolutions "
            "to bfloat16 (distances, attention and losses stay float32); 'fp16' with gradient scaling on CUDA "
            "(float32 on a CPU).",
        },
    )
):
    """The standalone aligner of FastPitch 1.1 / RAD-TTS, trained to produce durations."""

    symbols: Literal["characters", "arpabet"] = Field(
        "characters",
        description="'characters': the cleaned text's characters; 'arpabet': CMUdict words as ARPAbet phones.",
    )
    embedding_dim: int = Field(384, ge=8, description="Symbol embedding size (text channels).")
    attention_dim: int = Field(80, ge=4, description="Channels of the key/query space.")
    temperature: float = Field(0.0005, gt=0, description="Scale of the negative squared distance scores.")
    prior_scaling: float = Field(1.0, ge=0, description="Beta-binomial prior scaling; 0 disables the prior.")
    learning_rate: float = Field(1e-3, gt=0)
    weight_decay: float = Field(1e-6, ge=0)
    grad_clip: float = Field(1000.0, gt=0, description="Global gradient-norm clip.")
    binarization_start_epoch: int = Field(0, ge=0, description="Epoch the binarisation loss starts ramping up.")
    binarization_warmup_epochs: int = Field(100, ge=1, description="Epochs over which its weight ramps to 1.")
    checkpoint_every_n_steps: int = Field(
        200, ge=1, description="A resumable checkpoint every this many optimiser steps, and when training stops."
    )
    init_from: str | None = Field(
        None,
        description="Warm start (adapt to a new voice): train_aligner starts from this aligner model file's "
        "weights (another run's R/aligner/model.pt) instead of a random init, and trains on this corpus for "
        "`epochs` / `max_steps` with a fresh optimiser. On a few minutes of a new speaker it places the symbols "
        "far better than an aligner trained on those minutes alone. Checked before any job: the file's symbol "
        "mode, symbol table (text.symbol_set), mel channels, embedding_dim and attention_dim must be this "
        "config's. null: random init.",
    )


class DurationsConfig(StrictModel):
    """Where per-symbol durations come from."""

    source: Literal["aligner", "textgrid", "tacotron2"] = Field(
        "aligner",
        description="'aligner': MAS on the trained aligner; 'textgrid': MFA-style TextGrids; 'tacotron2': "
        "Tacotron 2's teacher-forced attention, argmax per frame, counted (FastPitch 1.0).",
    )
    textgrid_dir: str | None = Field(
        None, description="Folder of <id>.TextGrid files; null = <corpus root>/alignments (the demo corpus)."
    )
    textgrid_tier: str = Field("phones", min_length=1, description="Interval tier whose labels become the symbols.")


# --------------------------------------------------------------------------------------------------
# HiFi-GAN
# --------------------------------------------------------------------------------------------------


UpsamplingMode = Literal["transposed", "balanced", "interpolate"]


class HiFiGANConfig(
    EpochLoopSettings.with_defaults(
        epochs=6500,
        global_batch_size=128,
        batch_size=16,
        checkpoint_every_n_epochs=10,
        descriptions={
            "amp": "Mixed precision, the same on CUDA and a CPU: 'bf16' autocasts the generator and "
            "discriminators to bfloat16, no gradient scaling (loss mels, STFT and GAN losses stay float32); 'fp16' "
            "with two gradient scalers on CUDA (float32 on a CPU).",
        },
    )
):
    """HiFi-GAN vocoder: generator shape (jik876's key names), discriminators, NVIDIA's schedule."""

    resblock: Literal["1", "2"] = Field("1", description="'1' (v1/v2) or '2' (v3) residual blocks.")
    upsample_rates: list[int] = Field([8, 8, 2, 2], min_length=1, description="Product must equal hop_length.")
    upsample_kernel_sizes: list[int] = Field([16, 16, 4, 4], min_length=1)
    upsample_initial_channel: int = Field(512, ge=2)
    upsampling: UpsamplingMode | list[UpsamplingMode] = Field(
        "transposed",
        description="'transposed': jik876's and NVIDIA's upsampling (free transposed-conv kernels). 'balanced': "
        "the same layers with each kernel's phases (taps modulo the rate) held to equal sums, so that a constant "
        "input gives a constant output: no tone at sampling_rate / rate and its harmonics (the checkerboard of "
        "a strided transposed conv) in the pauses. Same shapes and files; folded into plain kernels for "
        "inference and export. 'interpolate': linear interpolation by the rate, then a convolution one tap "
        "longer than the kernel size: no pattern that repeats once per frame, so the voice's periodicity must "
        "come from `source` (without one a briefly trained generator makes no voiced sound at all). A list "
        "gives each stage its own mode (the demo: the first stage, whose transposed conv would repeat once per "
        "mel frame, interpolates; the later ones stay transposed).",
    )
    source: Literal["none", "harmonic"] = Field(
        "none",
        description="'none': the generator makes its periodicity itself (jik876's and NVIDIA's). 'harmonic': "
        "a neural source-filter excitation, `source_harmonics` sines at the F0 the mel carries (read by a "
        "small pitch head trained on the pitch features), added at every upsampling stage. The cure for a "
        "briefly trained vocoder that voices every pitch at the frame rate (sampling_rate / hop_length): "
        "with `upsampling: interpolate` the demo's vocoder follows the recording's pitch (README, 'The "
        "demo vocoder's hum'). Training reads the pitch features, so train_hifigan runs after `features`.",
    )
    source_harmonics: int = Field(
        32, ge=1, le=256, description="Sines in the harmonic excitation (those above Nyquist are silent)."
    )
    source_first_stage: int = Field(
        0,
        ge=0,
        description="The first upsampling stage (0-based) the harmonic excitation is added to; the later ones "
        "all get it. 0 = every stage (NSF-HiFiGAN's way). At the demo's first stage (sampling_rate / 32 = "
        "689 Hz) the sines alias and the voice's pitch snapped to whole fractions of that rate; from stage 1 "
        "on it follows the pitch more closely but, within the demo's steps, keeps fewer words (README, "
        "'Where the pitch snapped').",
    )
    source_injection: Literal["strided", "band_limited"] = Field(
        "strided",
        description="How the harmonic excitation reaches each stage. 'strided': the sines at the audio's rate, "
        "mixed into one signal, through a strided convolution per stage (NSF-HiFiGAN's way; at a stage far "
        "below the audio's rate the harmonics above its Nyquist frequency alias onto false low pitches). "
        "'band_limited': each stage gets the separate sines built at its own rate, those above its Nyquist "
        "frequency faded out, through a 3-tap convolution (README, 'Where the pitch snapped').",
    )
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
        "the start). Fine-tuning has its own: fine_tune_spectral_steps.",
    )
    stft_loss_scale: float = Field(
        0.0,
        ge=0,
        description="Weight of Parallel WaveGAN's multi-resolution STFT loss in the generator's objective "
        "(all steps); 0 = NVIDIA's objective (adversarial + feature matching + 45 x mel L1).",
    )
    learning_rate: float = Field(3e-4, gt=0)
    adam_betas: FloatPair = (0.8, 0.99)
    weight_decay: float = Field(0.01, ge=0, description="AdamW's default, which the recipe keeps.")
    lr_decay: float = Field(0.9998, gt=0, le=1, description="ExponentialLR gamma, stepped once per epoch.")
    segment_size: int = Field(8192, ge=256, description="Audio samples per training item (multiple of hop).")
    validation_repeats: int = Field(5, ge=1, description="Fixed random segments per validation utterance.")
    samples_every_n_epochs: int = Field(100, ge=1, description="Audio samples of validation clips to MLflow.")
    n_samples: int = Field(5, ge=0)
    fine_tune_lr_factor: float = Field(3.0, gt=0, description="Fine-tuning multiplies the restored lr by this.")
    fine_tune_epochs: int = Field(
        3500, ge=1, description="Epochs of fine-tuning on FastPitch mels (the recipe goes from epoch 6500 to 10000)."
    )
    fine_tune_spectral_steps: int = Field(
        0,
        ge=0,
        description="Fine-tuning: optimiser steps in which the generator first learns the FastPitch mels alone, "
        "on its spectral losses (mel + STFT), before the discriminators join; 0 = NVIDIA's recipe "
        "(adversarial throughout).",
    )
    checkpoint: str | None = Field(
        None,
        description="A pretrained HiFi-GAN (model file or trainer checkpoint of this pipeline, NVIDIA's "
        "hifigan_gen_checkpoint_*.pt, jik876's g_*): skips train_hifigan and fine-tunes from it.",
    )
    discriminator_checkpoint: str | None = Field(
        None,
        description="The published discriminators that go with `checkpoint` (NVIDIA's "
        "hifigan_discrim_checkpoint_*.pt, jik876's do_*): fine-tuning starts from them too, as NVIDIA's "
        "recipe does; null: fresh discriminators (or the ones inside a checkpoint of this pipeline).",
    )
    init_from: str | None = Field(
        None,
        description="Warm start (adapt a trained voice): train_hifigan starts from this generator (a model "
        "file or trainer checkpoint of this pipeline, NVIDIA's hifigan_gen_checkpoint_*.pt, jik876's g_*) "
        "instead of a random init, and trains on this corpus for `epochs` / `max_steps` at `learning_rate`, "
        "with fresh optimisers, schedule and step counter; the discriminators come from the file when it holds "
        "them (a trainer checkpoint), else they start fresh. Checked before any job: its audio settings "
        "(sampling rate, n_fft, hop, window, mel channels, fmin/fmax), where the file records them, and its "
        "generator shape must match the audio and hifigan sections. Fine-tuning on FastPitch mels then starts "
        "from this run, as from any base run. null: random init. Not with `checkpoint`, which replaces "
        "train_hifigan with the file as it is.",
    )

    @model_validator(mode="after")
    def _shapes_agree(self) -> HiFiGANConfig:
        if self.checkpoint is not None and self.init_from is not None:
            raise ValueError(
                "init_from: hifigan.checkpoint and hifigan.init_from exclude each other (checkpoint uses the "
                "file as it is and skips train_hifigan; init_from trains from it); set one of them"
            )
        if self.discriminator_checkpoint is not None and self.checkpoint is None:
            raise ValueError("discriminator_checkpoint: needs hifigan.checkpoint, the generator it belongs to")
        if len(self.upsample_kernel_sizes) != len(self.upsample_rates):
            raise ValueError("upsample_kernel_sizes: expected one kernel per upsample rate")
        if isinstance(self.upsampling, list) and len(self.upsampling) != len(self.upsample_rates):
            raise ValueError("upsampling: a list needs one mode per upsample rate")
        if self.source_first_stage >= len(self.upsample_rates):
            raise ValueError(
                f"source_first_stage: {self.source_first_stage} is past the last of the "
                f"{len(self.upsample_rates)} upsampling stages (0-based)"
            )
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
    "n_speakers",
    "speaker_emb_weight",
    "max_duration",
)


def _fft_fields(stack: str, part: str, dropemb: str) -> dict[str, Any]:
    """The fields of one of FastPitch's two FFT transformers, ``{name: (type, Field)}`` for
    :func:`pydantic.create_model`: NVIDIA's constructor names and defaults, the same for both.

    Args:
        stack: ``"in"``, the encoder over symbols, or ``"out"``, the decoder over length-regulated frames.
        part: Its name in the descriptions.
        dropemb: The description of the dropout on its input.
    """
    fft, p_fft = f"{stack}_fft_", f"p_{stack}_fft_"
    return {
        f"{fft}n_layers": (int, Field(6, ge=1, description=f"{part} layers.")),
        f"{fft}n_heads": (int, Field(1, ge=1, description=f"{part} attention heads.")),
        f"{fft}d_head": (int, Field(64, ge=1, description=f"{part} channels per head.")),
        f"{fft}conv1d_kernel_size": (int, Field(3, ge=1, description=f"{part} conv feed-forward kernel (odd).")),
        f"{fft}conv1d_filter_size": (int, Field(1536, ge=1, description=f"{part} conv feed-forward hidden channels.")),
        f"{fft}output_size": (int, Field(384, ge=2, description=f"{part} output channels; = symbols_embedding_dim.")),
        f"{p_fft}dropout": (float, Field(0.1, ge=0, lt=1, description=f"{part} residual dropout.")),
        f"{p_fft}dropatt": (float, Field(0.1, ge=0, lt=1, description=f"{part} attention-probability dropout.")),
        f"{p_fft}dropemb": (float, Field(0.0, ge=0, lt=1, description=dropemb)),
    }


def _predictor_fields(part: str, name: str) -> dict[str, Any]:
    """The fields of one of FastPitch's temporal predictors (``part``: ``dur``, ``pitch`` or ``energy``,
    ``name`` its name in the descriptions), ``{name: (type, Field)}``; the same defaults for all three."""
    return {
        f"{part}_predictor_kernel_size": (int, Field(3, ge=1, description=f"{name} predictor conv kernel (odd).")),
        f"{part}_predictor_filter_size": (int, Field(256, ge=1, description=f"{name} predictor conv channels.")),
        f"p_{part}_predictor_dropout": (float, Field(0.1, ge=0, lt=1)),
        f"{part}_predictor_n_layers": (int, Field(2, ge=1)),
    }


# FastPitchConfig's loop settings, then its network's encoder ("input FFT", over symbols), decoder
# ("output FFT", over length-regulated frames) and predictors, in the order `check-config` prints the
# keys. What the two FFT stacks and the three predictors share is declared once; the keys stay NVIDIA's
# flat constructor names, so the YAML section has no sub-sections.
_FastPitchNetwork = create_model(
    "FastPitchNetwork",
    __base__=BucketedLoopSettings.with_defaults(
        epochs=1000,
        global_batch_size=256,
        batch_size=32,
        checkpoint_every_n_epochs=20,
        descriptions={
            "amp": "Mixed precision, the same on CUDA and a CPU: 'bf16' autocasts matmuls and convolutions to "
            "bfloat16 (softmax, LayerNorm and the losses stay float32); 'fp16' with gradient scaling on CUDA "
            "(float32 on a CPU).",
        },
    ),
    __module__=__name__,
    symbols_embedding_dim=(int, Field(384, ge=2, description="d_model of the embedding and both transformers (even).")),
    **_fft_fields("in", "Encoder", "Dropout on embedding + positional embedding."),
    **_fft_fields("out", "Decoder", "Dropout on the decoder input + positions."),
    **_predictor_fields("dur", "Duration"),
    **_predictor_fields("pitch", "Pitch"),
    **_predictor_fields("energy", "Energy"),
)


class FastPitchConfig(_FastPitchNetwork):
    """FastPitch 1.1 (reference 3.1-3.7): network (NVIDIA's constructor names), loss scales, schedule.

    Durations come from the ``durations`` stage, so there is no aligner in the model.
    """

    # network, besides the transformers and predictors of the base

    pitch_embedding_kernel_size: int = Field(3, ge=1, description="Conv1d(1 -> d_model) over per-token pitch (odd).")
    energy_conditioning: bool = Field(True, description="Predict per-token energy and condition the decoder on it.")
    energy_embedding_kernel_size: int = Field(3, ge=1, description="Conv1d(1 -> d_model) over per-token energy (odd).")
    n_speakers: int = Field(
        1,
        ge=1,
        description="Speakers of a multi-speaker model (NVIDIA's --n-speakers): above 1, a learned speaker "
        "embedding (ids 0 .. n_speakers - 1) is added to the encoder's input. 1: one speaker, no embedding.",
    )
    speaker_emb_weight: float = Field(
        1.0, ge=0, description="Scale of the speaker embedding before it is added (NVIDIA's --speaker-emb-weight)."
    )
    max_duration: int = Field(75, ge=1, description="Inference clamps predicted durations to [0, max_duration] frames.")

    # loss: mel MSE + scale x (duration, pitch, energy) MSE
    duration_loss_scale: float = Field(0.1, ge=0, description="Weight of the log-duration MSE.")
    pitch_loss_scale: float = Field(0.1, ge=0, description="Weight of the normalised-pitch MSE.")
    energy_loss_scale: float = Field(0.1, ge=0, description="Weight of the log-energy MSE.")

    # schedule (reference 3.7)
    optimizer: Literal["lamb", "adam"] = Field("lamb", description="'lamb': NVIDIA's (Fused)LAMB; 'adam': Adam.")
    learning_rate: float = Field(0.1, gt=0, description="Base rate, multiplied by the Noam schedule.")
    betas: FloatPair = (0.9, 0.98)
    eps: float = Field(1e-9, gt=0)
    weight_decay: float = Field(1e-6, ge=0)
    warmup_steps: int = Field(1000, ge=0, description="Noam warm-up: the rate peaks at learning_rate / sqrt(warmup).")
    grad_clip: float = Field(1000.0, gt=0, description="Global gradient-norm clip.")
    n_plots: int = Field(3, ge=0, description="Validation utterances whose mel, duration and pitch are plotted.")
    checkpoint: str | None = Field(
        None,
        description="A pretrained FastPitch model file: the workflow skips train_fastpitch and uses it "
        "(to extract fine-tuning mels and to synthesise).",
    )
    init_from: str | None = Field(
        None,
        description="Warm start (adapt a trained voice): train_fastpitch starts from this FastPitch's weights "
        "(a model file of this pipeline, or NVIDIA's DLE / NGC checkpoint) instead of a random init, and trains "
        "on this corpus for `epochs` / `max_steps` at this section's learning rate and Noam warm-up, with a fresh "
        "optimiser and step counter. Checked before any job: its network keys must match this section, its "
        "symbol table text.symbol_set (and the durations' table), its cleaners text.cleaners (when the file "
        "records them), its mel channels and mel settings the audio section. Pitch is normalised with the new "
        "corpus's statistics (features/pitch_stats.json, the new speaker's), and the model file written "
        "records those, not the file's. null: random init. Not with `checkpoint`, which replaces "
        "train_fastpitch with the file as it is.",
    )
    freeze: list[Annotated[str, Field(pattern=r"^[A-Za-z_]\w*(\.\w+)*$")]] = Field(
        [],
        description="With init_from: parameter-name prefixes kept as the file has them during training "
        "(requires_grad off, left out of the optimiser), matched on whole dotted names: e.g. 'encoder' (the "
        "symbol embedding and the encoder), 'encoder.word_emb' (the embedding alone), 'decoder', 'proj', "
        "'duration_predictor', 'pitch_predictor', 'pitch_emb', 'energy_predictor', 'energy_emb'. "
        "[]: everything trains.",
    )
    extract_batch_size: int = Field(16, ge=1, description="Batch of the teacher-forced mel extraction.")

    @model_validator(mode="after")
    def _warm_start(self) -> FastPitchConfig:
        if self.checkpoint is not None and self.init_from is not None:
            raise ValueError(
                "init_from: fastpitch.checkpoint and fastpitch.init_from exclude each other (checkpoint uses the "
                "file as it is and skips train_fastpitch; init_from trains from it); set one of them"
            )
        if self.freeze and self.init_from is None:
            raise ValueError("freeze: needs fastpitch.init_from (frozen parameters would keep their random init)")
        return self

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
        self.check_global_batch()
        return self


# --------------------------------------------------------------------------------------------------
# Tacotron 2 (FastPitch 1.0's source of durations)
# --------------------------------------------------------------------------------------------------

# The fields of Tacotron2SectionConfig that shape the network (NVIDIA's constructor names, see
# tts_pipeline.models.tacotron2.Tacotron2Config); n_symbols and n_mel_channels come from the text and
# audio settings.
TACOTRON2_MODEL_FIELDS = (
    "mask_padding",
    "symbols_embedding_dim",
    "encoder_kernel_size",
    "encoder_n_convolutions",
    "encoder_embedding_dim",
    "attention_rnn_dim",
    "attention_dim",
    "attention_location_n_filters",
    "attention_location_kernel_size",
    "n_frames_per_step",
    "decoder_rnn_dim",
    "prenet_dim",
    "max_decoder_steps",
    "gate_threshold",
    "p_attention_dropout",
    "p_decoder_dropout",
    "postnet_embedding_dim",
    "postnet_kernel_size",
    "postnet_n_convolutions",
)


class Tacotron2SectionConfig(
    BucketedLoopSettings.with_defaults(
        epochs=1501,
        global_batch_size=1024,
        batch_size=128,
        validation_every_n_epochs=1,
        checkpoint_every_n_epochs=50,
        descriptions={
            "amp": "Mixed precision: 'fp16' with gradient scaling on CUDA, 'bf16' autocast (float32 losses).",
            "global_batch_size": "GPUs x batch_size x accumulation (8 x 128).",
            "validation_every_n_epochs": "NVIDIA validates after every epoch.",
            "length_bucketing": "Put utterances of similar mel length in the same global batch: the decoder runs "
            "as many steps as the longest mel of a batch, so less padding is much less time. false = NVIDIA's "
            "random batches.",
        },
    )
):
    """NVIDIA's Tacotron 2, trained to give FastPitch 1.0 its durations (``durations.source: tacotron2``).

    The schedule is NVIDIA's ``train.py`` recipe (DGX-A100, 8 GPUs x 128): Adam, learning rate 1e-3
    multiplied by the anneal factor at each of ``anneal_epochs``, weight decay 1e-6, gradient-norm clip 1.0,
    1501 epochs.
    """

    symbols: Literal["characters", "arpabet"] = Field(
        "characters",
        description="'characters': the cleaned text's characters (NVIDIA's); 'arpabet': CMUdict words as phones.",
    )
    # network (NVIDIA's constructor names and defaults)
    mask_padding: bool = Field(False, description="Zero the outputs on padded frames (NVIDIA's default: off).")
    symbols_embedding_dim: int = Field(512, ge=2, description="Symbol embedding size; = encoder_embedding_dim.")
    encoder_kernel_size: int = Field(5, ge=1, description="Encoder convolution kernel (odd).")
    encoder_n_convolutions: int = Field(3, ge=1)
    encoder_embedding_dim: int = Field(512, ge=2, description="Encoder channels (even: two LSTM directions).")
    attention_rnn_dim: int = Field(1024, ge=1)
    attention_dim: int = Field(128, ge=1)
    attention_location_n_filters: int = Field(32, ge=1)
    attention_location_kernel_size: int = Field(31, ge=1, description="Location convolution kernel (odd).")
    n_frames_per_step: int = Field(
        1,
        ge=1,
        description="Mel frames per decoder step (Tacotron's reduction factor r); 1 = NVIDIA's recipe. r > 1 "
        "takes r times fewer attention steps per utterance, which aligns in fewer updates on little data; "
        "durations then come in whole steps of r frames.",
    )
    decoder_rnn_dim: int = Field(1024, ge=1)
    prenet_dim: int = Field(256, ge=1)
    max_decoder_steps: int = Field(2000, ge=1, description="Most frames decoded at inference.")
    gate_threshold: float = Field(0.5, gt=0, lt=1)
    p_attention_dropout: float = Field(0.1, ge=0, lt=1)
    p_decoder_dropout: float = Field(0.1, ge=0, lt=1)
    postnet_embedding_dim: int = Field(512, ge=1)
    postnet_kernel_size: int = Field(5, ge=1, description="Postnet convolution kernel (odd).")
    postnet_n_convolutions: int = Field(5, ge=2)

    # guided attention (not in NVIDIA's recipe)
    guided_attention_weight: float = Field(
        0.0,
        ge=0,
        description="Weight of the guided-attention loss (Tachibana et al. 2017: attention off the diagonal); "
        "0 = NVIDIA's objective. Lets attention align in hundreds of steps instead of thousands on small data.",
    )
    guided_attention_sigma: float = Field(
        0.2, gt=0, description="Width of the unpenalised band around the diagonal, as a fraction of text and audio."
    )
    guided_attention_constant_epochs: int | None = Field(
        None,
        ge=0,
        description="Epochs at the full guided-attention weight, after which it decays by guided_attention_decay "
        "per epoch; null = the full weight throughout.",
    )
    guided_attention_decay: float = Field(
        1.0, gt=0, le=1, description="Factor of the guided-attention weight per epoch after the constant epochs."
    )
    # alignment prior (not in NVIDIA's recipe)
    attention_prior_scaling: float = Field(
        0.0,
        ge=0,
        description="Beta-binomial alignment prior (FastPitch 1.1's, scaling 1.0 there) added as a log-prior to "
        "the attention energies wherever the mel length is known: teacher-forced training, validation and "
        "duration extraction. 0 = NVIDIA's attention. Lets attention align on little data.",
    )
    attention_prior_epochs: int | None = Field(
        None,
        ge=0,
        description="Epochs with the prior at full weight, after which its weight falls linearly to 0 over "
        "attention_prior_fade_epochs (then training, duration extraction and inference go without it); "
        "null = the full prior throughout, and in the model file.",
    )
    attention_prior_fade_epochs: int = Field(0, ge=0, description="Epochs over which the prior's weight falls to 0.")
    attention_prior_at_inference: bool = Field(
        False,
        description="Free-running inference with the prior too, built for the expected length (the training "
        "set's mean frames per symbol, recorded in the model file); false = the attention decodes on its own.",
    )

    # schedule (NVIDIA's train.py)
    learning_rate: float = Field(1e-3, gt=0)
    weight_decay: float = Field(1e-6, ge=0, description="Adam's (L2) weight decay.")
    grad_clip: float = Field(1.0, gt=0, description="Global gradient-norm clip.")
    anneal_epochs: list[int] = Field(
        [500, 1000, 1500],
        description="Epochs (counted from 0, as NVIDIA's --anneal-steps) from which the rate is annealed once more.",
    )
    anneal_factor: Literal[0.1, 0.3] = Field(
        0.3,
        description="0.1: the rate x 0.1 per anneal epoch passed; 0.3: x 0.3, x 0.1, x 0.03, ... (NVIDIA's "
        "platform scripts).",
    )
    checkpoint: str | None = Field(
        None,
        description="A trained Tacotron 2 (model file of this pipeline, or NVIDIA's checkpoint such as "
        "nvidia_tacotron2pyt_fp16.pt): the workflow skips train_tacotron2 and takes durations from it.",
    )
    durations_batch_size: int = Field(16, ge=1, description="Batch of the teacher-forced duration extraction.")

    @model_validator(mode="after")
    def _shapes_agree(self) -> Tacotron2SectionConfig:
        if self.symbols_embedding_dim != self.encoder_embedding_dim:
            raise ValueError(
                f"symbols_embedding_dim: must equal encoder_embedding_dim ({self.encoder_embedding_dim}), "
                f"got {self.symbols_embedding_dim}"
            )
        if self.encoder_embedding_dim % 2:
            raise ValueError(f"encoder_embedding_dim: expected an even number, got {self.encoder_embedding_dim}")
        for key in ("encoder_kernel_size", "attention_location_kernel_size", "postnet_kernel_size"):
            if getattr(self, key) % 2 == 0:
                raise ValueError(f"{key}: expected an odd kernel (the convs keep the length), got {getattr(self, key)}")
        self.check_global_batch()
        return self
