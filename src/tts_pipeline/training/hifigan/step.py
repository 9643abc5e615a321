"""One HiFi-GAN optimiser step: the discriminators' phase then the generator's (adversarial), or the
generator alone on its spectral losses (the warm-up before ``discriminator_start_step``); see the
package docstring for the order of micro-batches and where DDP synchronises."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from tts_pipeline.audio import MelSpectrogram
from tts_pipeline.models.hifigan import (
    discriminator_loss,
    generator_losses,
    mel_loss,
    multi_resolution_stft_loss,
    split_output,
)
from tts_pipeline.models.hifigan.source import pitch_head_loss
from tts_pipeline.precision import Precision
from tts_pipeline.training.distributed import DistributedContext, no_sync
from tts_pipeline.training.hifigan.state import HiFiGANState

LOSS_NAMES = ("loss_discrim", "loss_gen", "loss_mel", "loss_adv", "loss_fm", "loss_stft", "loss_pitch")


@dataclass
class MicroBatch:
    """One micro-batch on the device.

    Attributes:
        audio: ``(B, segment_size)`` real audio.
        mel: ``(B, n_mels, segment_size / hop)`` generator input.
        loss_mel: ``(B, n_mels, segment_size / hop)`` loss mel of the real audio (fp32).
        f0: ``(B, segment_size / hop)`` pitch features in Hz (``source: harmonic``), else None.
    """

    audio: torch.Tensor
    mel: torch.Tensor
    loss_mel: torch.Tensor
    f0: torch.Tensor | None = None

    @property
    def size(self) -> int:
        return int(self.audio.shape[0])


@dataclass
class Runtime:
    """What a step needs besides the state: wrapped models, precision, mel functions, processes."""

    context: DistributedContext
    precision: Precision
    generator: nn.Module  # the generator, inside DDP when several processes train
    discriminators: nn.Module
    input_mel: MelSpectrogram
    loss_mel: MelSpectrogram
    accumulation: int
    stft_loss_scale: float = 0.0

    def prepare(self, batch: Mapping[str, Any]) -> MicroBatch:
        """A collated batch (``audio`` and, when fine-tuning, ``mel``) moved to the device, with its mels."""
        device = self.context.device
        audio = batch["audio"].to(device, non_blocking=True).float()
        with torch.no_grad():
            mel = batch["mel"].to(device, non_blocking=True).float() if "mel" in batch else self.input_mel(audio)
            loss_mel = self.loss_mel(audio)
        f0 = batch["f0"].to(device, non_blocking=True).float() if "f0" in batch else None
        return MicroBatch(audio=audio, mel=mel, loss_mel=loss_mel, f0=f0)


def generate(generator: nn.Module, batch: MicroBatch) -> tuple[torch.Tensor, torch.Tensor]:
    """The generator's ``(B, 1, N)`` audio for ``batch`` and its pitch head's loss (0 without a source).

    With pitch features the excitation runs at their F0 (teacher forcing) and the head learns to read
    the same F0 from the mel, which is what inference then uses.
    """
    if batch.f0 is None:
        fake = generator(batch.mel)
        return fake, fake.new_zeros((), dtype=torch.float)
    fake, prediction = generator(batch.mel, batch.f0, with_pitch=True)
    return fake, pitch_head_loss(prediction, batch.f0)


def _set_requires_grad(module: nn.Module, flag: bool) -> None:
    for parameter in module.parameters():
        parameter.requires_grad_(flag)


def train_step(
    state: HiFiGANState, runtime: Runtime, micro_batches: Sequence[MicroBatch], *, adversarial: bool = True
) -> dict[str, float]:
    """One optimiser step of D then G over ``micro_batches`` (see the module docstring); with
    ``adversarial`` off (the warm-up before ``discriminator_start_step``), G alone on its spectral losses.

    Returns the step's losses averaged over micro-batches and processes (``LOSS_NAMES``; the
    discriminator terms are 0 in the warm-up); the caller checks them with the NaN guard (every rank
    gets the same values, so every rank stops alike).
    """
    k = len(micro_batches)
    if k == 0:
        raise ValueError("train_step: no micro-batches")
    sums = torch.zeros(len(LOSS_NAMES), dtype=torch.float64, device=runtime.context.device)

    if not adversarial:
        _spectral_phase(state, runtime, micro_batches, sums)
    else:
        with contextlib.ExitStack() as power_iteration:
            kept = _discriminator_phase(state, runtime, micro_batches, sums, power_iteration)
            _generator_phase(state, runtime, micro_batches, sums, kept)

    totals = runtime.context.all_reduce_sum(sums).tolist()
    scale = 1.0 / (k * runtime.context.world_size)
    return {name: value * scale for name, value in zip(LOSS_NAMES, totals, strict=True)}


def _discriminator_phase(
    state: HiFiGANState,
    runtime: Runtime,
    micro_batches: Sequence[MicroBatch],
    sums: torch.Tensor,
    power_iteration: contextlib.ExitStack,
) -> tuple[torch.Tensor, torch.Tensor]:
    """D's update; returns the generator's output of the last micro-batch and its pitch head loss,
    with autograd."""
    k = len(micro_batches)
    autocast = runtime.precision.autocast
    g_ddp, d_ddp = runtime.generator, runtime.discriminators
    state.optim_d.zero_grad(set_to_none=True)
    kept: tuple[torch.Tensor, torch.Tensor] | None = None
    for index, batch in enumerate(micro_batches):
        last = index == k - 1
        if last:
            # Kept with autograd for the generator phase. With k > 1 its backward must not all-reduce:
            # the generator phase's final backward (of micro-batch 0) does that for all of them.
            with no_sync(g_ddp, k > 1), autocast():
                kept = generate(g_ddp, batch)
            fake = kept[0]
        else:
            with torch.no_grad(), autocast():
                fake, _ = generate(state.generator, batch)
        with no_sync(d_ddp, not last), autocast():
            verdict = d_ddp(torch.cat([batch.audio.unsqueeze(1), fake.detach().to(batch.audio.dtype)], dim=0))
            loss_d = torch.zeros((), device=batch.audio.device)
            for family in verdict:
                real, generated = split_output(family, batch.size)
                loss_d = loss_d + discriminator_loss(real, generated)
        if index == 0:
            # One power iteration per optimiser step (SN-GAN's rule), on the first call only: the
            # number of discriminator calls grows with k, and the update must not depend on k.
            power_iteration.enter_context(_spectral_norm_frozen(state.discriminators))
        state.scaler_d.scale(loss_d / k).backward()
        sums[0] += loss_d.detach().double()
    state.scaler_d.step(state.optim_d)
    state.scaler_d.update()
    assert kept is not None
    return kept


def _generator_phase(
    state: HiFiGANState,
    runtime: Runtime,
    micro_batches: Sequence[MicroBatch],
    sums: torch.Tensor,
    kept: tuple[torch.Tensor, torch.Tensor],
) -> None:
    """G's update, discriminators frozen, micro-batches in reverse (the last reuses its output)."""
    k = len(micro_batches)
    autocast = runtime.precision.autocast
    g_ddp, discriminators = runtime.generator, state.discriminators
    state.optim_g.zero_grad(set_to_none=True)
    _set_requires_grad(discriminators, False)
    try:
        for order, index in enumerate(reversed(range(k))):
            batch = micro_batches[index]
            final = order == k - 1
            with no_sync(g_ddp, not final):
                if index == k - 1:
                    fake, pitch = kept
                else:
                    with autocast():
                        fake, pitch = generate(g_ddp, batch)
                fake_mel = runtime.loss_mel(fake.squeeze(1).float())
                with autocast():
                    fake_verdict = discriminators(fake)
                    with torch.no_grad():
                        real_verdict = discriminators(batch.audio.unsqueeze(1))
                    losses = generator_losses(list(real_verdict), list(fake_verdict), batch.loss_mel, fake_mel)
                stft = _stft_term(runtime, batch, fake)
                total = losses.total + runtime.stft_loss_scale * stft + pitch
                state.scaler_g.scale(total / k).backward()
            sums[1] += total.detach().double()
            sums[2] += losses.mel.detach().double()
            sums[3] += losses.adversarial.detach().double()
            sums[4] += losses.feature_matching.detach().double()
            sums[5] += stft.detach().double()
            sums[6] += pitch.detach().double()
    finally:
        _set_requires_grad(discriminators, True)
    state.scaler_g.step(state.optim_g)
    state.scaler_g.update()


def _stft_term(runtime: Runtime, batch: MicroBatch, fake: torch.Tensor) -> torch.Tensor:
    """The multi-resolution STFT loss of ``(B, 1, N)`` ``fake`` (unscaled); 0 without cost when its scale is 0."""
    if runtime.stft_loss_scale == 0:
        return fake.new_zeros((), dtype=torch.float)
    return multi_resolution_stft_loss(batch.audio, fake.squeeze(1))


def _spectral_phase(
    state: HiFiGANState, runtime: Runtime, micro_batches: Sequence[MicroBatch], sums: torch.Tensor
) -> None:
    """G's warm-up update: ``45 x mel L1 + stft_loss_scale x STFT loss`` (+ the pitch head's loss) per
    micro-batch, no discriminator call at all (so a warm-up step costs the generator's forward and
    backward only)."""
    k = len(micro_batches)
    autocast = runtime.precision.autocast
    g_ddp = runtime.generator
    state.optim_g.zero_grad(set_to_none=True)
    for index, batch in enumerate(micro_batches):
        with no_sync(g_ddp, index < k - 1):
            with autocast():
                fake, pitch = generate(g_ddp, batch)
            mel = mel_loss(batch.loss_mel, runtime.loss_mel(fake.squeeze(1).float()))
            stft = _stft_term(runtime, batch, fake)
            total = mel + runtime.stft_loss_scale * stft + pitch
            state.scaler_g.scale(total / k).backward()
        sums[1] += total.detach().double()
        sums[2] += mel.detach().double()
        sums[5] += stft.detach().double()
        sums[6] += pitch.detach().double()
    state.scaler_g.step(state.optim_g)
    state.scaler_g.update()


@contextlib.contextmanager
def _spectral_norm_frozen(module: nn.Module) -> Iterator[None]:
    """Spectral norms of ``module`` use their stored singular vectors (no power iteration) in the block."""
    norms = [m for m in module.modules() if hasattr(m, "n_power_iterations") and hasattr(m, "_u")]
    modes = [m.training for m in norms]
    for norm in norms:
        norm.train(False)
    try:
        yield
    finally:
        for norm, mode in zip(norms, modes, strict=True):
            norm.train(mode)
