"""The HiFi-GAN generator: log-mel ``(B, n_mels, T)`` to waveform ``(B, 1, T * hop)``.

A 7-tap input conv, then one stage per upsampling rate (leaky ReLU 0.1, transposed conv that
multiplies the length by the rate and halves the channels, the mean of parallel multi-receptive-field
residual blocks), then leaky ReLU 0.01, a 7-tap output conv and tanh (reference section 2.2).

On a CPU each stage's residual blocks run on channels-last ``(B, C, 1, L)`` rows
(:mod:`tts_pipeline.models.conv_rows`; ``cpu_rows = False`` keeps the plain layout, e.g. for export).

Every conv is weight-normalised with :func:`torch.nn.utils.parametrizations.weight_norm` (``dim=0``);
:meth:`Generator.remove_weight_norm` folds the norm into plain ``.weight`` tensors for inference.
State-dict names follow NVIDIA's nested layout (``resblocks.<stage>.<block>.convs1.<k>``), with the
parametrisation names of current torch (``parametrizations.weight.original0`` = g,
``original1`` = v); :func:`convert_state_dict` maps jik876 / NVIDIA files (``weight_g``/``weight_v``,
flat ``resblocks.<3 * stage + block>``) onto them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F
from torch.nn.utils import parametrize
from torch.nn.utils.parametrizations import weight_norm

from tts_pipeline.config import HiFiGANConfig
from tts_pipeline.models import conv_rows
from tts_pipeline.models.hifigan.source import HarmonicSource, PitchHead, SourceInjection

# The hidden activations' slope; the last activation before conv_post uses torch's default (0.01),
# as the reference does.
LRELU_SLOPE = 0.1
FINAL_LRELU_SLOPE = 0.01
INIT_STD = 0.01

# The HiFiGANConfig fields that shape the generator (jik876's key names); model_config() adds n_mels.
GENERATOR_FIELDS = (
    "resblock",
    "upsample_rates",
    "upsample_kernel_sizes",
    "upsample_initial_channel",
    "upsampling",
    "resblock_kernel_sizes",
    "resblock_dilation_sizes",
    "source",
    "source_harmonics",
    "source_first_stage",
    "source_injection",
)
# The fields of the harmonic source: a generator without one records none of them.
SOURCE_FIELDS = ("source", "source_harmonics", "source_first_stage", "source_injection")


def _normal_init(module: nn.Module) -> nn.Module:
    """N(0, 0.01) weights, drawn *before* weight norm is applied so that v and g inherit them.

    (jik876 and NVIDIA draw them after ``weight_norm``, into the derived ``weight`` that the next
    forward recomputes from g and v, so upstream the draw has no effect; the stated intent is kept here.)
    """
    nn.init.normal_(module.weight, 0.0, INIT_STD)
    return module


class BalancedPhases(nn.Module):
    """A transposed conv's kernel with equal phase sums: ``(C_in, C_out, K) -> (C_in, C_out, K)``.

    A stride-``r`` transposed conv computes each output sample from the taps of one phase (tap index modulo
    ``r``); where the phases' sums differ, a constant input gives a pattern that repeats every ``r`` samples,
    i.e. a tone at the output rate / ``r`` and its harmonics (the checkerboard artefact). This projection
    moves each phase's taps by the same amount so that every phase sums to the kernel's mean phase sum:
    a constant input then gives a constant output, and only those ``r - 1`` sums per channel pair are fixed,
    so the kernel keeps its other degrees of freedom (unlike a nearest-neighbour resize, whose box filter
    also dulls the highs).
    """

    def __init__(self, rate: int) -> None:
        super().__init__()
        self.rate = rate

    def forward(self, kernel: torch.Tensor) -> torch.Tensor:
        taps = kernel.shape[-1]
        phase = torch.arange(taps, device=kernel.device) % self.rate
        one_hot = F.one_hot(phase, self.rate).to(kernel.dtype)  # (K, r)
        per_phase = one_hot.sum(dim=0)  # taps in each phase
        sums = kernel @ one_hot  # (C_in, C_out, r)
        excess = sums - sums.mean(dim=-1, keepdim=True)
        return kernel - (excess / per_phase) @ one_hot.T


class InterpolatingUpsample(nn.Module):
    """Linear interpolation by ``rate``, then a convolution (``upsampling: interpolate``):
    ``(B, C_in, L) -> (B, C_out, L * rate)``.

    A strided transposed conv computes each output sample from one phase of its kernel, so features
    that change once per input frame come out with a pattern that repeats every frame: at the first
    stage that is a comb at the mel's frame rate, which a briefly trained generator voices speech with.
    Interpolated features carry no such pattern; the periodicity then has to come from the excitation
    (``source: harmonic``).
    """

    def __init__(self, in_channels: int, out_channels: int, rate: int, kernel_size: int) -> None:
        super().__init__()
        self.rate = rate
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(F.interpolate(x, scale_factor=float(self.rate), mode="linear"))


def _same_padding(kernel_size: int, dilation: int = 1) -> int:
    return (kernel_size * dilation - dilation) // 2


def _check_odd(kernel_sizes: Sequence[int]) -> None:
    for kernel in kernel_sizes:
        if kernel < 1 or kernel % 2 == 0:
            raise ValueError(f"resblock_kernel_sizes: expected odd kernels (length-preserving convs), got {kernel}")


class ResBlock1(nn.Module):
    """Per dilation d: x + conv_1(lrelu(conv_d(lrelu(x)))), kernel k, same length (v1/v2 blocks).

    Args:
        channels: Channels ``C`` in and out.
        kernel_size: Odd kernel ``k``.
        dilations: Dilations of the first conv of each pair (the second is undilated).

    Shapes: ``(B, C, L) -> (B, C, L)``, or channels-last rows ``(B, C, 1, L) -> (B, C, 1, L)``.
    """

    def __init__(self, channels: int, kernel_size: int, dilations: Sequence[int]) -> None:
        super().__init__()
        self.convs1 = nn.ModuleList(
            weight_norm(
                _normal_init(
                    nn.Conv1d(channels, channels, kernel_size, dilation=d, padding=_same_padding(kernel_size, d))
                )
            )
            for d in dilations
        )
        self.convs2 = nn.ModuleList(
            weight_norm(_normal_init(nn.Conv1d(channels, channels, kernel_size, padding=_same_padding(kernel_size))))
            for _ in dilations
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for dilated, plain in zip(self.convs1, self.convs2, strict=True):
            y = conv_rows.conv1d(dilated, F.leaky_relu(x, LRELU_SLOPE))
            x = x + conv_rows.conv1d(plain, F.leaky_relu(y, LRELU_SLOPE))
        return x


class ResBlock2(nn.Module):
    """Per dilation d: x + conv_d(lrelu(x)), kernel k, same length (v3 blocks).

    Shapes: ``(B, C, L) -> (B, C, L)``, or channels-last rows ``(B, C, 1, L) -> (B, C, 1, L)``.
    """

    def __init__(self, channels: int, kernel_size: int, dilations: Sequence[int]) -> None:
        super().__init__()
        self.convs = nn.ModuleList(
            weight_norm(
                _normal_init(
                    nn.Conv1d(channels, channels, kernel_size, dilation=d, padding=_same_padding(kernel_size, d))
                )
            )
            for d in dilations
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for conv in self.convs:
            x = x + conv_rows.conv1d(conv, F.leaky_relu(x, LRELU_SLOPE))
        return x


class Generator(nn.Module):
    """HiFi-GAN generator (reference section 2.2); widths halve per stage from
    ``upsample_initial_channel``.

    Args:
        cfg: The ``hifigan`` section; only the fields in :data:`GENERATOR_FIELDS` are read.
        n_mels: Mel channels of the input.
        sampling_rate: The audio's rate; needed (and recorded in :meth:`model_config`) only with
            ``source: harmonic``, whose sines advance by F0 / sampling_rate per sample.
    """

    def __init__(self, cfg: HiFiGANConfig, n_mels: int, sampling_rate: int | None = None) -> None:
        super().__init__()
        rates, kernels = list(cfg.upsample_rates), list(cfg.upsample_kernel_sizes)
        for rate, kernel in zip(rates, kernels, strict=True):
            # The transposed conv's output is exactly L * rate only when (kernel - rate) is even and >= 0.
            if kernel < rate or (kernel - rate) % 2:
                raise ValueError(
                    f"upsample_kernel_sizes: kernel {kernel} for rate {rate} must be >= the rate and differ "
                    "from it by an even number"
                )
        _check_odd(cfg.resblock_kernel_sizes)
        self._config: dict[str, Any] = {name: _plain(getattr(cfg, name)) for name in GENERATOR_FIELDS}
        self._config["n_mels"] = int(n_mels)
        self.hop_length = 1
        for rate in rates:
            self.hop_length *= rate
        modes = cfg.upsampling if isinstance(cfg.upsampling, list) else [cfg.upsampling] * len(rates)
        self.upsampling = list(modes)  # one mode per stage
        self.has_source = cfg.source == "harmonic"
        if not self.has_source:
            # a generator without a source records what jik876's, NVIDIA's and older files of ours record
            for key in SOURCE_FIELDS:
                del self._config[key]
        else:
            if sampling_rate is None:
                raise ValueError("hifigan.source: harmonic needs the audio's sampling_rate")
            self._config["sampling_rate"] = int(sampling_rate)
            self.pitch_head = PitchHead(n_mels)
            band_limited = cfg.source_injection == "band_limited"
            self.source = HarmonicSource(
                self.hop_length, int(sampling_rate), cfg.source_harmonics, merged=not band_limited
            )
            self.source_injection = SourceInjection(
                self.hop_length,
                rates,
                cfg.upsample_initial_channel,
                cfg.source_first_stage,
                mode=cfg.source_injection,
                n_harmonics=cfg.source_harmonics,
            )

        # On a CPU the residual blocks run their convs on channels-last rows (models/conv_rows.py): the same
        # function, in about two thirds of the time on an AVX2 CPU. A plain attribute, not part of the model.
        self.cpu_rows = True
        channels = cfg.upsample_initial_channel
        block_class = ResBlock1 if cfg.resblock == "1" else ResBlock2
        # conv_pre keeps torch's default init, as the reference does.
        self.conv_pre = weight_norm(nn.Conv1d(n_mels, channels, 7, padding=3))
        self.ups = nn.ModuleList()
        self.resblocks = nn.ModuleList()
        for rate, kernel, mode in zip(rates, kernels, modes, strict=True):
            if mode == "interpolate":
                # an odd kernel one tap longer than the transposed conv's, centred
                up = InterpolatingUpsample(channels, channels // 2, rate, kernel + 1)
                up.conv = weight_norm(_normal_init(up.conv))
            else:
                up = nn.ConvTranspose1d(channels, channels // 2, kernel, stride=rate, padding=(kernel - rate) // 2)
                up = weight_norm(_normal_init(up))
            if mode == "balanced":
                parametrize.register_parametrization(up, "weight", BalancedPhases(rate))
            self.ups.append(up)
            channels //= 2
            self.resblocks.append(
                nn.ModuleList(
                    block_class(channels, k, d)
                    for k, d in zip(cfg.resblock_kernel_sizes, cfg.resblock_dilation_sizes, strict=True)
                )
            )
        self.conv_post = weight_norm(_normal_init(nn.Conv1d(channels, 1, 7, padding=3)))

    def forward(
        self, mel: torch.Tensor, f0: torch.Tensor | None = None, with_pitch: bool = False
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """``(B, n_mels, T)`` log-mel -> ``(B, 1, T * prod(upsample_rates))`` waveform in (-1, 1).

        With ``source: harmonic`` the excitation's F0 is ``f0`` ``(B, T)`` (Hz, 0 = unvoiced; training
        passes the pitch features) or, when None, the pitch head's reading of the mel (inference);
        ``with_pitch`` also returns the head's ``(B, 2, T)`` output (for its loss). Without a source
        ``f0`` must be None.
        """
        excitation, phase, prediction = None, None, None
        if self.has_source:
            # In float32 even under autocast: bf16's 8 mantissa bits move the F0 bins and the sines' phase
            # (the excitation of a bf16 run was 1 dB SNR from float32's).
            with torch.autocast(device_type=mel.device.type, enabled=False):
                prediction = self.pitch_head(mel.float())
                if f0 is None:
                    f0 = self.pitch_head.f0_of(prediction.detach())
                if self.source_injection.mode == "band_limited":
                    phase = self.source.phase(f0.float())
                else:
                    excitation = self.source(f0.float())
        elif f0 is not None or with_pitch:
            raise ValueError("Generator: f0 and with_pitch need hifigan.source: harmonic")
        x = self.conv_pre(mel)
        for stage, (up, blocks) in enumerate(zip(self.ups, self.resblocks, strict=True)):
            x = up(F.leaky_relu(x, LRELU_SLOPE))
            if self.has_source and self.source_injection.feeds(stage):
                if phase is not None:
                    with torch.autocast(device_type=mel.device.type, enabled=False):
                        excitation = self.source.harmonics_at(phase, self.source_injection.strides[stage])
                x = x + self.source_injection(excitation, stage).to(x.dtype)
            # The blocks see the same input and their outputs are averaged (multi-receptive-field fusion).
            rows = self.cpu_rows and x.device.type == "cpu"
            if rows:
                x = conv_rows.to_rows(x)
            total = blocks[0](x)
            for block in blocks[1:]:
                total = total + block(x)
            x = total / len(blocks)
            if rows:
                x = conv_rows.from_rows(x)
        # The waveform itself in the parameters' precision even under autocast: rounded to bf16's 8
        # mantissa bits it would carry a noise floor about 50 dB below the signal, which the log-mel
        # loss magnifies in quiet bins (v1 at initialisation: a mel loss 9 % off). One output channel:
        # float32 costs next to nothing here.
        dtype = next(self.conv_post.parameters()).dtype
        with torch.autocast(device_type=x.device.type, enabled=False):
            audio = torch.tanh(self.conv_post(F.leaky_relu(x.to(dtype), FINAL_LRELU_SLOPE)))
        if with_pitch:
            assert prediction is not None
            return audio, prediction
        return audio

    def remove_weight_norm(self) -> None:
        """Fold every weight norm (and :class:`BalancedPhases`, and the pitch head's rate scaling) into plain
        ``.weight`` and ``.bias`` tensors (for inference; the output is unchanged)."""
        for module in self.modules():
            for name in ("weight", "bias"):
                if parametrize.is_parametrized(module, name):
                    parametrize.remove_parametrizations(module, name, leave_parametrized=True)

    @property
    def has_weight_norm(self) -> bool:
        """Whether the convs are still weight-normalised (False after :meth:`remove_weight_norm`)."""
        return parametrize.is_parametrized(self.conv_pre, "weight")

    def model_config(self) -> dict[str, Any]:
        """JSON-able constructor arguments: the generator fields of ``HiFiGANConfig`` plus ``n_mels``."""
        return {key: _plain(value) for key, value in self._config.items()}

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> Generator:
        """Rebuild from :meth:`model_config` (unknown keys are an error, missing ones take the defaults)."""
        fields = dict(config)
        if "n_mels" not in fields:
            raise ValueError("generator config: missing 'n_mels'")
        n_mels = int(fields.pop("n_mels"))
        sampling_rate = fields.pop("sampling_rate", None)
        unknown = sorted(set(fields) - set(GENERATOR_FIELDS))
        if unknown:
            raise ValueError(f"generator config: unknown keys {unknown}; expected {list(GENERATOR_FIELDS)} and n_mels")
        return cls(HiFiGANConfig(**fields), n_mels, sampling_rate)


def _plain(value: Any) -> Any:
    """A deep copy with tuples as lists, so the config is JSON-able and callers cannot mutate ours."""
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


_FLAT_RESBLOCK = re.compile(r"^resblocks\.(\d+)\.(convs1|convs2|convs)\.")


def convert_state_dict(state_dict: Mapping[str, torch.Tensor], n_blocks: int) -> dict[str, torch.Tensor]:
    """Map a jik876 / NVIDIA generator state dict onto this module's names.

    Handles a ``module.`` prefix (DDP), the old weight-norm names (``weight_g`` -> g =
    ``parametrizations.weight.original0``, ``weight_v`` -> v = ``original1``) and the flat resblock
    layout ``resblocks.<3 * stage + block>`` (``n_blocks`` = blocks per stage = len(resblock_kernel_sizes)).
    Already-converted names pass through unchanged. Plain ``weight`` tensors (a file saved without
    weight norm) also pass through: load those into a generator after :meth:`Generator.remove_weight_norm`.
    """
    converted: dict[str, torch.Tensor] = {}
    for name, tensor in state_dict.items():
        name = name.removeprefix("module.")
        match = _FLAT_RESBLOCK.match(name)
        if match:
            flat = int(match[1])
            name = f"resblocks.{flat // n_blocks}.{flat % n_blocks}.{name[len(f'resblocks.{flat}.') :]}"
        if name.endswith(".weight_g"):
            name = name.removesuffix(".weight_g") + ".parametrizations.weight.original0"
        elif name.endswith(".weight_v"):
            name = name.removesuffix(".weight_v") + ".parametrizations.weight.original1"
        converted[name] = tensor
    return converted
