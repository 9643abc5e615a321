"""Config of the WaveGlow vocoder (FastPitch 1.0 / Tacotron 2 recipe): architecture, NVIDIA's schedule,
and the pretrained shortcut.

The section is read by ``train_waveglow`` only. WaveGlow is an optional vocoder, chosen through its row
in :mod:`tts_pipeline.config.model_kinds`: the DAG builds it when ``inference.vocoder`` is ``waveglow`` or
``waveglow.checkpoint`` (the row's ``pretrained`` key) names a file
(:func:`~tts_pipeline.config.model_kinds.vocoders_in_use`), and ``snakemake train_waveglow`` trains it on
request.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from tts_pipeline.config.data_sections import AudioConfig
from tts_pipeline.config.loop_settings import EpochLoopSettings

# NVIDIA's mel upsampler is a transposed conv of stride 256: WaveGlow's hop is fixed.
WAVEGLOW_HOP = 256

# The network's fields, in the names of :class:`tts_pipeline.models.waveglow.WaveGlowConfig` (the model
# file stores them with n_mel_channels from the audio section).
WAVEGLOW_MODEL_FIELDS = (
    "n_flows",
    "n_group",
    "n_early_every",
    "n_early_size",
    "wn_layers",
    "wn_channels",
    "wn_kernel_size",
)


class WaveGlowSection(
    EpochLoopSettings.with_defaults(
        epochs=1001,
        global_batch_size=80,
        batch_size=10,
        checkpoint_every_n_epochs=50,
        descriptions={
            "epochs": "NVIDIA: --epochs 1001.",
            "global_batch_size": "GPUs x batch_size x accumulation (NVIDIA: 8 x 10).",
            "batch_size": "Per process and micro-step (NVIDIA: -bs 10 with AMP).",
            "amp": "Mixed precision: 'fp16' with gradient scaling on CUDA (NVIDIA's --amp), 'bf16' autocast "
            "(no scaling); the loss stays float32.",
            "checkpoint_every_n_epochs": "NVIDIA: --epochs-per-checkpoint 50.",
        },
    )
):
    """WaveGlow: NVIDIA's published network and their ``train.py -m WaveGlow`` settings (DGX scripts)."""

    n_flows: int = Field(12, ge=1, description="Flows (invertible 1x1 conv + affine coupling).")
    n_group: int = Field(8, ge=2, description="Audio samples per group (even).")
    n_early_every: int = Field(4, ge=1, description="Flows between two early outputs.")
    n_early_size: int = Field(2, ge=2, description="Channels each early output takes out of the flow (even).")
    wn_layers: int = Field(8, ge=1, description="Dilated layers per coupling network.")
    wn_channels: int = Field(512, ge=2, description="Residual channels of the coupling network (even).")
    wn_kernel_size: int = Field(3, ge=1, description="Kernel of the dilated convs (odd).")
    sigma: float = Field(1.0, gt=0, description="Standard deviation of the prior in the training loss (NVIDIA: 1.0).")
    learning_rate: float = Field(1e-4, gt=0, description="Adam's learning rate, constant (NVIDIA: -lr 1e-4).")
    weight_decay: float = Field(0.0, ge=0, description="Adam's L2 weight decay (NVIDIA's scripts: 0).")
    grad_clip: float | None = Field(
        None,
        gt=0,
        description="Global gradient-norm clip; null = none (NVIDIA's scripts pass 65504 / 3.4e38, which never bind).",
    )
    segment_size: int = Field(
        8192,
        ge=256,
        description="Audio samples per training item, a multiple of the hop (NVIDIA's 8000 rounded up to whole "
        "256-sample frames).",
    )
    checkpoint: str | None = Field(
        None,
        description="A pretrained WaveGlow (this pipeline's model file, NVIDIA's / NGC's "
        "nvidia_waveglow*.pt or waveglow_*.pt as they are): replaces train_waveglow.",
    )

    @model_validator(mode="after")
    def _shapes_agree(self) -> WaveGlowSection:
        # the network's own rules (tts_pipeline.models.waveglow.WaveGlowConfig), checked before any job
        if self.n_group % 2 or self.n_early_size % 2:
            raise ValueError("n_group, n_early_size: expected even numbers (a coupling splits its channels in halves)")
        remaining = self.n_group - (self.n_flows - 1) // self.n_early_every * self.n_early_size
        if remaining < 2:
            raise ValueError(
                f"n_early_size: {self.n_flows} flows taking {self.n_early_size} channels out every "
                f"{self.n_early_every} leave {remaining} of n_group {self.n_group}; at least 2 must remain"
            )
        if self.wn_kernel_size % 2 == 0:
            raise ValueError("wn_kernel_size: expected an odd kernel")
        if self.wn_channels % 2:
            raise ValueError("wn_channels: expected an even number")
        return self

    def network(self, n_mel_channels: int) -> dict[str, int]:
        """The constructor arguments of :class:`tts_pipeline.models.waveglow.WaveGlowConfig`."""
        return {"n_mel_channels": n_mel_channels, **{name: getattr(self, name) for name in WAVEGLOW_MODEL_FIELDS}}


def check_waveglow_fits_audio(waveglow: WaveGlowSection, audio: AudioConfig) -> None:
    """WaveGlow's upsampler has NVIDIA's fixed hop of 256, and a training segment holds whole frames."""
    hop = audio.hop_length
    if hop != WAVEGLOW_HOP:
        raise ValueError(f"waveglow: its upsampler has a hop of {WAVEGLOW_HOP} samples, but audio.hop_length is {hop}")
    if waveglow.segment_size % hop:
        raise ValueError(f"waveglow.segment_size: expected a multiple of audio.hop_length ({hop})")
