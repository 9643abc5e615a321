"""WaveGlow (Prenger et al. 2019) as NVIDIA's DeepLearningExamples recipe builds it: a normalising flow
from audio to Gaussian noise, conditioned on the log-mel.

Audio ``(B, L)`` is cut into groups of ``n_group`` consecutive samples, giving ``(B, n_group, L /
n_group)``; the mel is upsampled to the audio rate by one transposed conv (kernel 1024, stride 256) and
grouped the same way, ``(B, n_mels * n_group, L / n_group)``. Each of ``n_flows`` flows mixes the
channels with an invertible 1x1 conv, then an affine coupling: a WaveNet-like stack (:class:`WN`) sees
the first half of the channels and the mel and returns ``log s`` and ``b`` for the second half,
``x_1 -> exp(log s) * x_1 + b``. Every ``n_early_every`` flows, ``n_early_size`` channels leave the
flow early (they are already noise). Inference runs the flows backwards from ``sigma``-scaled noise.

Module and parameter names are NVIDIA's (``upsample``, ``WN.<k>.in_layers.<i>``, ``convinv.<k>.conv``),
so a checkpoint of theirs loads once torch's old weight-norm names (``weight_g`` / ``weight_v``) are
renamed to the parametrisation's (``parametrizations.weight.original0`` / ``original1``); see
:mod:`tts_pipeline.models.waveglow.foreign`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any, NamedTuple

import torch
from torch import nn
from torch.nn import functional as F
from torch.nn.utils import parametrize
from torch.nn.utils.parametrizations import weight_norm

# NVIDIA's mel upsampler is fixed: a transposed conv of kernel 1024 and stride 256 (the hop). Its
# output for T frames is (T - 1) * 256 + 1024 samples; inference drops the last 1024 - 256.
HOP_LENGTH = 256
UPSAMPLE_KERNEL = 1024


@dataclass(frozen=True)
class WaveGlowConfig:
    """WaveGlow's hyperparameters; the defaults are NVIDIA's published model (``--flows 12 --groups 8
    --early-every 4 --early-size 2 --wn-layers 8 --wn-channels 512 --wn-kernel-size 3``).

    Attributes:
        n_mel_channels: Mel channels of the conditioning input.
        n_flows: Flows (1x1 conv + affine coupling).
        n_group: Audio samples per group (channels at the first flow).
        n_early_every: Flows between two early outputs.
        n_early_size: Channels each early output takes out of the flow.
        wn_layers: Dilated layers per coupling network (dilation 1, 2, 4, ...).
        wn_channels: Residual channels of the coupling network.
        wn_kernel_size: Kernel of the dilated convs (odd).
    """

    n_mel_channels: int = 80
    n_flows: int = 12
    n_group: int = 8
    n_early_every: int = 4
    n_early_size: int = 2
    wn_layers: int = 8
    wn_channels: int = 512
    wn_kernel_size: int = 3

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"waveglow {field.name}: expected a positive integer, got {value!r}")
        if self.n_group % 2 or self.n_early_size % 2:
            raise ValueError(
                f"waveglow n_group ({self.n_group}) and n_early_size ({self.n_early_size}): expected even numbers "
                "(each coupling splits its channels in halves)"
            )
        if self.remaining_channels < 2:
            raise ValueError(
                f"waveglow: {self.n_flows} flows with {self.n_early_size} channels out every {self.n_early_every} "
                f"leave {self.remaining_channels} of n_group {self.n_group} channels; at least 2 must remain"
            )
        if self.wn_kernel_size % 2 == 0:
            raise ValueError(f"waveglow wn_kernel_size: expected an odd kernel, got {self.wn_kernel_size}")
        if self.wn_channels % 2:
            raise ValueError(f"waveglow wn_channels: expected an even number, got {self.wn_channels}")

    @property
    def n_early_outputs(self) -> int:
        """How many early outputs the flows make (at flows n_early_every, 2 n_early_every, ...)."""
        return (self.n_flows - 1) // self.n_early_every

    @property
    def remaining_channels(self) -> int:
        """Channels still in the flow after the last early output."""
        return self.n_group - self.n_early_outputs * self.n_early_size

    def channels_at(self, flow: int) -> int:
        """Channels that flow ``flow`` (0-based) transforms."""
        return self.n_group - (flow // self.n_early_every) * self.n_early_size

    def to_dict(self) -> dict[str, int]:
        """JSON-able constructor arguments (this project's flat key names)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> WaveGlowConfig:
        """From :meth:`to_dict`; unknown keys are an error, missing ones take the defaults."""
        unknown = sorted(set(values) - {field.name for field in fields(cls)})
        if unknown:
            raise ValueError(f"waveglow config: unknown keys {unknown}; expected {[f.name for f in fields(cls)]}")
        return cls(**values)

    def to_nvidia(self) -> dict[str, Any]:
        """The ``config`` NVIDIA's ``train.py`` stores (``WaveGlow(**config)`` arguments)."""
        return {
            "n_mel_channels": self.n_mel_channels,
            "n_flows": self.n_flows,
            "n_group": self.n_group,
            "n_early_every": self.n_early_every,
            "n_early_size": self.n_early_size,
            "WN_config": {
                "n_layers": self.wn_layers,
                "kernel_size": self.wn_kernel_size,
                "n_channels": self.wn_channels,
            },
        }

    @classmethod
    def from_nvidia(cls, config: Mapping[str, Any]) -> WaveGlowConfig:
        """From an NVIDIA ``config`` (nested ``WN_config``). Raises ValueError when keys are missing."""
        try:
            wn = config["WN_config"]
            return cls(
                n_mel_channels=config["n_mel_channels"],
                n_flows=config["n_flows"],
                n_group=config["n_group"],
                n_early_every=config["n_early_every"],
                n_early_size=config["n_early_size"],
                wn_layers=wn["n_layers"],
                wn_channels=wn["n_channels"],
                wn_kernel_size=wn["kernel_size"],
            )
        except (KeyError, TypeError) as error:
            raise ValueError(f"NVIDIA WaveGlow config {dict(config)!r} lacks {error}") from None


class WaveGlowOutput(NamedTuple):
    """What :meth:`WaveGlow.forward` returns (a tuple, so NVIDIA's ``z, log_s, log_det_W = ...`` works).

    Attributes:
        z: ``(B, n_group, L / n_group)`` latent: the early outputs in the order they left the flow, then
            the remaining channels.
        log_s: Per flow, ``(B, C_k / 2, L / n_group)`` log-scales of its coupling.
        log_det_w: Per flow, a scalar: ``B * L / n_group * log|det W_k|`` of its 1x1 conv (float32).
    """

    z: torch.Tensor
    log_s: list[torch.Tensor]
    log_det_w: list[torch.Tensor]


class Invertible1x1Conv(nn.Module):
    """A channel-mixing 1x1 conv with an invertible weight, initialised to a random rotation (det +1).

    The inverse weight is computed once (in float64, stored in the weight's dtype) and kept until the
    weight changes: an optimiser step, ``load_state_dict`` or ``.to()`` gives the weight a new version
    or storage, which recomputes it. NVIDIA computes the inverse in float32 and casts it to the
    weight's dtype (fp16 under their ``--amp``), caching it for the module's lifetime.

    Args:
        channels: ``C``.
    """

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, kernel_size=1, bias=False)
        rotation = torch.linalg.qr(torch.randn(channels, channels))[0]
        if torch.det(rotation) < 0:
            rotation[:, 0] = -rotation[:, 0]
        with torch.no_grad():
            self.conv.weight.copy_(rotation.unsqueeze(-1))
        self._inverse: torch.Tensor | None = None
        self._inverse_key: tuple[Any, ...] | None = None

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(B, C, G)`` -> ``(B, C, G)`` and ``B * G * log|det W|`` (float32 scalar)."""
        batch, _, groups = x.shape
        # log|det W|: the same as NVIDIA's logdet while det W > 0 (where training keeps it), finite beyond.
        log_abs_det = torch.linalg.slogdet(self.conv.weight.squeeze(-1).float())[1]
        return self.conv(x), batch * groups * log_abs_det

    def inverse_weight(self) -> torch.Tensor:
        """``W^-1`` as a ``(C, C, 1)`` conv weight, cached while the weight is unchanged."""
        weight = self.conv.weight
        key = (weight.data_ptr(), weight._version, weight.dtype, weight.device)
        if self._inverse is None or self._inverse_key != key:
            inverse = torch.linalg.inv(weight.detach().squeeze(-1).double())
            self._inverse = inverse.to(weight.dtype).unsqueeze(-1)
            self._inverse_key = key
        return self._inverse

    def infer(self, x: torch.Tensor) -> torch.Tensor:
        """The inverse map, ``(B, C, G) -> (B, C, G)``."""
        return F.conv1d(x, self.inverse_weight())


class WN(nn.Module):
    """The coupling network: a non-causal WaveNet whose dilation doubles every layer (no reset).

    ``start`` (1x1) lifts the audio half to ``wn_channels``; each layer adds the dilated conv of the
    audio and a 1x1 conv of the grouped mel, gates ``tanh(a) * sigmoid(b)`` and splits a 1x1 conv of
    that into a residual (added to the audio path) and a skip (summed; the last layer has skip only);
    ``end`` (1x1, zero-initialised so each coupling starts as the identity) maps the skip sum to
    ``[b, log s]``. Every conv but ``end`` is weight-normalised.

    Args:
        n_in_channels: Audio channels in (half of the flow's channels).
        n_cond_channels: Grouped mel channels (``n_mels * n_group``).
        n_layers, n_channels, kernel_size: ``wn_layers``, ``wn_channels``, ``wn_kernel_size``.

    Shapes: audio ``(B, n_in_channels, G)`` and mel ``(B, n_cond_channels, G)`` -> ``(B, 2 *
    n_in_channels, G)``.
    """

    def __init__(self, n_in_channels: int, n_cond_channels: int, n_layers: int, n_channels: int, kernel_size: int):
        super().__init__()
        self.n_layers = n_layers
        self.n_channels = n_channels
        # Registered in NVIDIA's order, so state dicts list their keys alike.
        self.in_layers = nn.ModuleList()
        self.res_skip_layers = nn.ModuleList()
        self.cond_layers = nn.ModuleList()
        self.start = weight_norm(nn.Conv1d(n_in_channels, n_channels, 1))
        self.end = nn.Conv1d(n_channels, 2 * n_in_channels, 1)
        nn.init.zeros_(self.end.weight)
        nn.init.zeros_(self.end.bias)
        for i in range(n_layers):
            dilation = 2**i
            padding = (kernel_size * dilation - dilation) // 2
            self.in_layers.append(
                weight_norm(nn.Conv1d(n_channels, 2 * n_channels, kernel_size, dilation=dilation, padding=padding))
            )
            self.cond_layers.append(weight_norm(nn.Conv1d(n_cond_channels, 2 * n_channels, 1)))
            res_skip_channels = 2 * n_channels if i < n_layers - 1 else n_channels
            self.res_skip_layers.append(weight_norm(nn.Conv1d(n_channels, res_skip_channels, 1)))

    def forward(self, audio: torch.Tensor, mel: torch.Tensor) -> torch.Tensor:
        x = self.start(audio)
        skip_sum: torch.Tensor | None = None
        for i, (in_layer, cond_layer, res_skip_layer) in enumerate(
            zip(self.in_layers, self.cond_layers, self.res_skip_layers, strict=True)
        ):
            gates = in_layer(x) + cond_layer(mel)
            acts = torch.tanh(gates[:, : self.n_channels]) * torch.sigmoid(gates[:, self.n_channels :])
            res_skip = res_skip_layer(acts)
            if i < self.n_layers - 1:
                x = x + res_skip[:, : self.n_channels]
                skip = res_skip[:, self.n_channels :]
            else:
                skip = res_skip
            skip_sum = skip if skip_sum is None else skip_sum + skip
        return self.end(skip_sum)


class WaveGlow(nn.Module):
    """NVIDIA's WaveGlow: training direction :meth:`forward`, synthesis :meth:`infer`.

    Args:
        config: The hyperparameters (:class:`WaveGlowConfig`).
    """

    hop_length = HOP_LENGTH

    def __init__(self, config: WaveGlowConfig | None = None) -> None:
        super().__init__()
        self.config = config = config or WaveGlowConfig()
        n_mels, n_group = config.n_mel_channels, config.n_group
        self.upsample = nn.ConvTranspose1d(n_mels, n_mels, UPSAMPLE_KERNEL, stride=HOP_LENGTH)
        self.WN = nn.ModuleList()  # noqa: N815 (NVIDIA's state-dict name)
        self.convinv = nn.ModuleList()
        for k in range(config.n_flows):
            channels = config.channels_at(k)
            self.convinv.append(Invertible1x1Conv(channels))
            self.WN.append(
                WN(channels // 2, n_mels * n_group, config.wn_layers, config.wn_channels, config.wn_kernel_size)
            )

    # ----------------------------------------------------------------------------------------------
    # construction
    # ----------------------------------------------------------------------------------------------

    def model_config(self) -> dict[str, int]:
        """JSON-able constructor arguments (:meth:`WaveGlowConfig.to_dict`)."""
        return self.config.to_dict()

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> WaveGlow:
        """Rebuild from :meth:`model_config` (unknown keys are an error)."""
        return cls(WaveGlowConfig.from_dict(config))

    def remove_weight_norm(self) -> None:
        """Fold every weight norm into a plain ``.weight`` (NVIDIA's ``remove_weightnorm``, which their
        inference applies on load): the same function, one conv instead of a norm and a conv per call.
        State-dict names become NVIDIA's folded ones (``WN.<k>.start.weight``)."""
        for module in self.modules():
            if parametrize.is_parametrized(module, "weight"):
                parametrize.remove_parametrizations(module, "weight", leave_parametrized=True)

    @property
    def has_weight_norm(self) -> bool:
        """Whether the coupling convs are still weight-normalised."""
        return parametrize.is_parametrized(self.WN[0].start, "weight")

    # ----------------------------------------------------------------------------------------------
    # running
    # ----------------------------------------------------------------------------------------------

    def _grouped_mel(self, upsampled: torch.Tensor) -> torch.Tensor:
        """``(B, n_mels, L)`` -> ``(B, n_mels * n_group, L / n_group)``; channel ``c * n_group + j`` holds
        mel channel ``c`` at the group's sample ``j`` (NVIDIA's unfold / permute order)."""
        batch, n_mels, length = upsampled.shape
        n_group = self.config.n_group
        grouped = upsampled.reshape(batch, n_mels, length // n_group, n_group).transpose(2, 3)
        return grouped.reshape(batch, n_mels * n_group, length // n_group)

    def forward(self, mel: torch.Tensor, audio: torch.Tensor) -> WaveGlowOutput:
        """Audio to latent, for the likelihood loss (:func:`tts_pipeline.models.waveglow.loss.waveglow_loss`).

        Args:
            mel: ``(B, n_mels, T)`` log-mel covering the audio: ``(T - 1) * 256 + 1024 >= L``.
            audio: ``(B, L)`` waveform, ``L`` a multiple of ``n_group``.

        Raises:
            ValueError when the shapes disagree.
        """
        cfg = self.config
        if audio.dim() != 2 or mel.dim() != 3 or mel.shape[0] != audio.shape[0]:
            raise ValueError(f"waveglow: expected mel (B, n_mels, T) and audio (B, L), got {tuple(mel.shape)} and "
                             f"{tuple(audio.shape)}")
        length = audio.shape[1]
        if length % cfg.n_group:
            raise ValueError(f"waveglow: audio length {length} is not a multiple of n_group {cfg.n_group}")
        upsampled = self.upsample(mel)
        if upsampled.shape[2] < length:
            raise ValueError(
                f"waveglow: {mel.shape[2]} mel frames upsample to {upsampled.shape[2]} samples, fewer than the "
                f"audio's {length}"
            )
        cond = self._grouped_mel(upsampled[:, :, :length])
        x = audio.reshape(audio.shape[0], length // cfg.n_group, cfg.n_group).transpose(1, 2)

        early: list[torch.Tensor] = []
        log_s_list: list[torch.Tensor] = []
        log_det_list: list[torch.Tensor] = []
        for k in range(cfg.n_flows):
            if k % cfg.n_early_every == 0 and k > 0:
                early.append(x[:, : cfg.n_early_size])
                x = x[:, cfg.n_early_size :]
            x, log_det_w = self.convinv[k](x)
            log_det_list.append(log_det_w)
            half = x.shape[1] // 2
            x_0, x_1 = x[:, :half], x[:, half:]
            out = self.WN[k](x_0, cond)
            b, log_s = out[:, :half], out[:, half:]
            x = torch.cat([x_0, torch.exp(log_s) * x_1 + b], 1)
            log_s_list.append(log_s)
        return WaveGlowOutput(torch.cat([*early, x], 1), log_s_list, log_det_list)

    @torch.no_grad()
    def infer(
        self,
        mel: torch.Tensor,
        sigma: float = 0.6,
        *,
        z: torch.Tensor | None = None,
        generator: torch.Generator | None = None,
    ) -> torch.Tensor:
        """Synthesise audio: noise ``sigma * z`` through the flows backwards (no gradients).

        Args:
            mel: ``(B, n_mels, T)`` log-mel.
            sigma: Scale of the noise (NVIDIA's ``--sigma-infer``: 0.9 in their inference scripts; 0.6
                in the WaveGlow paper; 0 gives the model's output for zero noise, the denoiser's bias).
            z: ``(B, n_group, T * 256 / n_group)`` standard-normal noise in :attr:`WaveGlowOutput.z`'s
                layout (early outputs first), in the mel's dtype; drawn when None. With ``sigma=1`` and
                the ``z`` that :meth:`forward` gave for audio and the same mel, this returns that audio.
            generator: The random generator for the draw (deterministic synthesis); torch's default
                when None.

        Returns:
            ``(B, T * 256)`` waveform.
        """
        cfg = self.config
        # Drop the transposed conv's tail, which only part of the kernel reaches: T * 256 samples left.
        upsampled = self.upsample(mel)[:, :, : mel.shape[2] * HOP_LENGTH]
        cond = self._grouped_mel(upsampled)
        batch, groups = mel.shape[0], cond.shape[2]
        if z is None:
            z = torch.randn(batch, cfg.n_group, groups, generator=generator, device=mel.device, dtype=torch.float32)
            z = z.to(mel.dtype)
        elif tuple(z.shape) != (batch, cfg.n_group, groups):
            raise ValueError(f"waveglow infer: z must have shape {(batch, cfg.n_group, groups)}, got {tuple(z.shape)}")
        z = sigma * z

        x = z[:, cfg.n_group - cfg.remaining_channels :]
        for k in reversed(range(cfg.n_flows)):
            half = x.shape[1] // 2
            x_0, x_1 = x[:, :half], x[:, half:]
            out = self.WN[k](x_0, cond)
            b, log_s = out[:, :half], out[:, half:]
            x = torch.cat([x_0, (x_1 - b) / torch.exp(log_s)], 1)
            x = self.convinv[k].infer(x)
            if k % cfg.n_early_every == 0 and k > 0:
                j = k // cfg.n_early_every - 1  # the j-th early output left at flow k
                x = torch.cat([z[:, j * cfg.n_early_size : (j + 1) * cfg.n_early_size], x], 1)
        return x.transpose(1, 2).reshape(batch, -1)
