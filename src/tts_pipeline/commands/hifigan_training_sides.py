"""One HiFi-GAN training step, ours and NVIDIA's, for ``bench-hifigan``.

Ours is the real thing: :func:`tts_pipeline.training.hifigan.step.train_step` over a
:class:`HiFiGANState` and :class:`Runtime` built as the trainer builds them (``build_state``, the
precision of ``resolve_precision``), so any speed work in training shows up here. A step includes
``Runtime.prepare`` (the input and loss mels of the real audio), as the trainer's step does.

NVIDIA's is their ``train.py`` step with their networks, losses and mel function, one micro-batch,
no AMP (their CPU run): input and target mels of the real audio (their data loader's work, counted
here so both sides do the same), generator forward, MPD + MSD on the detached output and an AdamW
step of both, then discriminators frozen, 45 x mel L1 + adversarial + feature-matching losses and the
generator's AdamW step. Their optimisers are ``train.py``'s: AdamW with the learning rate and betas
given (ours), torch's default weight decay (0.01).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from tts_pipeline.audio import MelSpectrogram
from tts_pipeline.benchmark.nvidia_code import NvidiaCode
from tts_pipeline.benchmark.nvidia_twins import discriminator_twins, generator_twin, max_abs_diff
from tts_pipeline.config import AudioConfig, HiFiGANConfig
from tts_pipeline.precision import Precision
from tts_pipeline.training.distributed import DistributedContext
from tts_pipeline.training.hifigan.state import HiFiGANState, build_state
from tts_pipeline.training.hifigan.step import Runtime, train_step

MEL_LOSS_SCALE = 45.0
"""The weight of the mel L1 term in NVIDIA's generator objective (and ours)."""


@dataclass
class OurTraining:
    """The trainer's state and runtime for one process, and the step it runs."""

    state: HiFiGANState
    runtime: Runtime

    @classmethod
    def build(
        cls, cfg: HiFiGANConfig, audio: AudioConfig, precision: Precision, *, fused_adamw: bool = False
    ) -> OurTraining:
        """Fresh models (seeded by ``cfg.seed``), optimisers and mel functions, as :mod:`training.hifigan.loop`
        (``fused_adamw``: see :func:`build_state`)."""
        state = build_state(
            cfg, audio.n_mel_channels, precision, fused_adamw=fused_adamw, sampling_rate=audio.sampling_rate
        )
        runtime = Runtime(
            context=DistributedContext(device=precision.device),
            precision=precision,
            generator=state.generator,
            discriminators=state.discriminators,
            input_mel=MelSpectrogram(audio).to(precision.device),
            loss_mel=MelSpectrogram.for_loss(audio).to(precision.device),
            accumulation=1,
            stft_loss_scale=cfg.stft_loss_scale,
        )
        state.generator.train()
        state.discriminators.train()
        return cls(state, runtime)

    def step(self, audio: torch.Tensor, *, adversarial: bool = True) -> dict[str, float]:
        """One optimiser step on ``(B, segment_size)`` audio, adversarial or (``adversarial=False``) the
        generator alone on its spectral losses, as before ``discriminator_start_step``; its losses."""
        batch = [self.runtime.prepare({"audio": audio})]
        return train_step(self.state, self.runtime, batch, adversarial=adversarial)


def _set_trainable(modules: tuple[nn.Module, ...], flag: bool) -> None:
    for module in modules:
        for parameter in module.parameters():
            parameter.requires_grad_(flag)


@dataclass
class NvidiaTraining:
    """NVIDIA's networks (our initial weights), AdamW optimisers and mel functions."""

    generator: nn.Module
    mpd: nn.Module
    msd: nn.Module
    optim_g: torch.optim.Optimizer
    optim_d: torch.optim.Optimizer
    code: NvidiaCode
    input_mel: Any
    loss_mel: Any

    @classmethod
    def twin_of(cls, code: NvidiaCode, ours: OurTraining, cfg: HiFiGANConfig, audio: AudioConfig) -> NvidiaTraining:
        """NVIDIA's models with ``ours``'s current weights, their optimisers and mel settings."""
        device = ours.runtime.context.device
        generator = generator_twin(code, ours.state.generator).to(device)
        mpd, msd = discriminator_twins(code, ours.state.discriminators, cfg.mpd_periods)
        mpd, msd = mpd.to(device), msd.to(device)
        options = {"lr": cfg.learning_rate, "betas": tuple(cfg.adam_betas)}  # train.py passes no weight decay
        mel = functools.partial(
            code.mel_spectrogram,
            n_fft=audio.filter_length,
            num_mels=audio.n_mel_channels,
            sampling_rate=audio.sampling_rate,
            hop_size=audio.hop_length,
            win_size=audio.win_length,
            fmin=audio.mel_fmin,
        )
        return cls(
            generator=generator.train(),
            mpd=mpd.train(),
            msd=msd.train(),
            optim_g=torch.optim.AdamW(generator.parameters(), **options),
            optim_d=torch.optim.AdamW([*msd.parameters(), *mpd.parameters()], **options),
            code=code,
            input_mel=functools.partial(mel, fmax=audio.mel_fmax),
            loss_mel=functools.partial(mel, fmax=audio.mel_fmax_loss),
        )

    def step(self, audio: torch.Tensor) -> dict[str, float]:
        """One step in ``train.py``'s order on ``(B, segment_size)`` audio; its losses."""
        code = self.code
        x, y_mel, y = self.input_mel(audio), self.loss_mel(audio), audio.unsqueeze(1)
        self.optim_d.zero_grad(set_to_none=True)
        self.optim_g.zero_grad(set_to_none=True)
        y_hat = self.generator(x)

        _set_trainable((self.mpd, self.msd), True)
        real_p, fake_p, _, _ = self.mpd(y, y_hat.detach())
        real_s, fake_s, _, _ = self.msd(y, y_hat.detach())
        loss_d = code.discriminator_loss(real_p, fake_p)[0] + code.discriminator_loss(real_s, fake_s)[0]
        loss_d.backward()
        self.optim_d.step()

        _set_trainable((self.mpd, self.msd), False)
        loss_mel = F.l1_loss(y_mel, self.loss_mel(y_hat.squeeze(1))) * MEL_LOSS_SCALE
        _, fake_p, fmap_pr, fmap_pg = self.mpd(y, y_hat)
        _, fake_s, fmap_sr, fmap_sg = self.msd(y, y_hat)
        loss_g = (
            code.generator_loss(fake_s)[0]
            + code.generator_loss(fake_p)[0]
            + code.feature_loss(fmap_sr, fmap_sg)
            + code.feature_loss(fmap_pr, fmap_pg)
            + loss_mel
        )
        loss_g.backward()
        self.optim_g.step()
        losses = {"loss_discrim": loss_d, "loss_gen": loss_g, "loss_mel": loss_mel}
        return {name: float(value.detach()) for name, value in losses.items()}


def fp32_differences(ours: OurTraining, theirs: NvidiaTraining, audio: torch.Tensor) -> dict[str, float]:
    """Max abs differences of the generator's output and of both discriminators' scores between the
    sides, in fp32 on ``(B, N)`` ``audio`` (evaluated without gradients; weights as they are now)."""
    with torch.no_grad():
        mel = ours.runtime.input_mel(audio)
        ours_fake = ours.state.generator(mel)
        their_fake = theirs.generator(theirs.input_mel(audio))
        verdict = ours.state.discriminators(audio.unsqueeze(1))
        real_p, _, _, _ = theirs.mpd(audio.unsqueeze(1), audio.unsqueeze(1))
        real_s, _, _, _ = theirs.msd(audio.unsqueeze(1), audio.unsqueeze(1))
    return {
        "input_mel": max_abs_diff(mel, theirs.input_mel(audio)),
        "generator": max_abs_diff(ours_fake, their_fake),
        "mpd": max(max_abs_diff(a, b) for a, b in zip(verdict.mpd.logits, real_p, strict=True)),
        "msd": max(max_abs_diff(a, b) for a, b in zip(verdict.msd.logits, real_s, strict=True)),
    }
