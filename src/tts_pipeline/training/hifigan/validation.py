"""HiFi-GAN's validation losses on the fixed validation segments."""

from __future__ import annotations

import torch
from torch.utils.data import DataLoader

from tts_pipeline.models.hifigan import discriminator_loss, generator_losses, split_output
from tts_pipeline.models.hifigan.source import pitch_head_loss
from tts_pipeline.training.hifigan.state import HiFiGANState
from tts_pipeline.training.hifigan.step import Runtime


@torch.no_grad()
def evaluate(state: HiFiGANState, runtime: Runtime, loader: DataLoader) -> dict[str, float]:
    """Validation losses on the fixed segments (each rank its shard, averaged over all items):
    ``val_loss_mel`` (45 x L1), ``val_loss_discrim``, ``val_loss_gen``, and with a harmonic source
    ``val_loss_pitch`` (its pitch head against the pitch features). The generator runs as inference
    does: its excitation follows the head's F0, not the features'. Models in eval mode, so the
    spectral norm's power iteration does not move and validation leaves training untouched."""
    generator, discriminators = state.generator, state.discriminators
    modes = generator.training, discriminators.training
    generator.eval()
    discriminators.eval()
    sums = [0.0, 0.0, 0.0, 0.0, 0.0]  # mel, discrim, gen, items, pitch
    autocast = runtime.precision.autocast
    for raw in loader:
        batch = runtime.prepare(raw)
        with autocast():
            if batch.f0 is None:
                fake = generator(batch.mel)
            else:
                fake, prediction = generator(batch.mel, with_pitch=True)
                sums[4] += float(pitch_head_loss(prediction, batch.f0)) * batch.size
        fake_mel = runtime.loss_mel(fake.squeeze(1).float())
        with autocast():
            verdict = discriminators(torch.cat([batch.audio.unsqueeze(1), fake.to(batch.audio.dtype)], dim=0))
            pairs = [split_output(family, batch.size) for family in verdict]
            loss_d = sum(float(discriminator_loss(real, generated)) for real, generated in pairs)
            losses = generator_losses([r for r, _ in pairs], [g for _, g in pairs], batch.loss_mel, fake_mel)
        sums[0] += float(losses.mel) * batch.size
        sums[1] += loss_d * batch.size
        sums[2] += float(losses.total) * batch.size
        sums[3] += batch.size
    generator.train(modes[0])
    discriminators.train(modes[1])
    mel, discrim, gen, items, pitch = runtime.context.sum_floats(sums)
    if not items:
        return {}
    figures = {"val_loss_mel": mel / items, "val_loss_discrim": discrim / items, "val_loss_gen": gen / items}
    if state.generator.has_source:
        figures["val_loss_pitch"] = pitch / items
    return figures
