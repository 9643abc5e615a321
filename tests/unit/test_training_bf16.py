"""Training under bf16 autocast on the CPU: which parts stay float32, and that a step of each trainer
runs with finite losses. (Whether bf16 is faster is measured, never asserted.)"""

from __future__ import annotations

import logging
import math

import pytest
import torch

from tts_pipeline.audio import MelSpectrogram
from tts_pipeline.config import AlignerConfig, AudioConfig, FastPitchConfig, HiFiGANConfig
from tts_pipeline.models.aligner.data import AlignerCollate, AlignerItem
from tts_pipeline.models.fastpitch import FastPitch, FastPitchInputs, fastpitch_loss
from tts_pipeline.models.fastpitch.data import FastPitchBatch
from tts_pipeline.models.hifigan import discriminator_loss, multi_resolution_stft_loss, split_output
from tts_pipeline.precision import Precision
from tts_pipeline.training import aligner as aligner_trainer
from tts_pipeline.training.checkpoint import CheckpointManager
from tts_pipeline.training.distributed import DistributedContext
from tts_pipeline.training.fastpitch import state as fastpitch_state
from tts_pipeline.training.fastpitch import step as fastpitch_step
from tts_pipeline.training.hifigan.state import build_state as build_hifigan_state
from tts_pipeline.training.hifigan.step import Runtime as HiFiGANRuntime
from tts_pipeline.training.hifigan.step import train_step as hifigan_train_step

CPU = torch.device("cpu")
BF16 = Precision("bf16", CPU, "test")
AUDIO = AudioConfig()
TINY_HIFIGAN = {
    "upsample_initial_channel": 16,
    "resblock_kernel_sizes": [3],
    "resblock_dilation_sizes": [[1, 3]],
    "mpd_periods": [2, 3],
    "discriminator_channels_scale": 0.0625,
    "segment_size": 2048,
    "batch_size": 2,
}
TINY_FASTPITCH = {
    "symbols_embedding_dim": 32,
    "in_fft_output_size": 32,
    "out_fft_output_size": 32,
    "in_fft_n_layers": 1,
    "out_fft_n_layers": 1,
    "in_fft_n_heads": 2,
    "out_fft_n_heads": 2,
    "in_fft_d_head": 8,
    "out_fft_d_head": 8,
    "in_fft_conv1d_filter_size": 64,
    "out_fft_conv1d_filter_size": 64,
    "dur_predictor_filter_size": 16,
    "pitch_predictor_filter_size": 16,
    "energy_predictor_filter_size": 16,
    "warmup_steps": 2,
}
N_SYMBOLS, N_MELS = 20, 12


class _DtypeRecorder(torch.nn.Module):
    """Wraps a loss-mel module and records the dtypes of its inputs and outputs."""

    def __init__(self, inner: MelSpectrogram) -> None:
        super().__init__()
        self.inner = inner
        self.seen: list[tuple[torch.dtype, torch.dtype]] = []

    def forward(self, audio: torch.Tensor) -> torch.Tensor:
        mel = self.inner(audio)
        self.seen.append((audio.dtype, mel.dtype))
        return mel


def _hifigan(stft_loss_scale: float) -> tuple:
    torch.manual_seed(0)
    cfg = HiFiGANConfig(**TINY_HIFIGAN, stft_loss_scale=stft_loss_scale)
    state = build_hifigan_state(cfg, AUDIO.n_mel_channels, BF16)
    loss_mel = _DtypeRecorder(MelSpectrogram.for_loss(AUDIO))
    runtime = HiFiGANRuntime(
        context=DistributedContext(device=CPU),
        precision=BF16,
        generator=state.generator,
        discriminators=state.discriminators,
        input_mel=MelSpectrogram(AUDIO),
        loss_mel=loss_mel,  # type: ignore[arg-type]
        accumulation=1,
        stft_loss_scale=stft_loss_scale,
    )
    batch = runtime.prepare({"audio": 0.3 * torch.randn(2, cfg.segment_size).clamp(-3, 3) / 3})
    return state, runtime, loss_mel, batch


@pytest.mark.parametrize("adversarial", [pytest.param(True, marks=pytest.mark.slow), False])
def test_a_bf16_hifigan_step_computes_its_loss_mels_in_float32(adversarial):
    state, runtime, loss_mel, batch = _hifigan(stft_loss_scale=1.0)
    assert batch.loss_mel.dtype == torch.float32
    losses = hifigan_train_step(state, runtime, [batch], adversarial=adversarial)
    # The generator's bf16 output reaches the loss mel cast to float32, and the mel comes out float32.
    assert loss_mel.seen and all(seen == (torch.float32, torch.float32) for seen in loss_mel.seen)
    assert all(math.isfinite(value) for value in losses.values())
    assert losses["loss_mel"] > 0 and losses["loss_stft"] > 0
    if adversarial:
        assert losses["loss_discrim"] > 0 and losses["loss_adv"] > 0


def test_under_bf16_autocast_the_generator_runs_in_bf16_and_the_losses_in_float32():
    state, runtime, _, batch = _hifigan(stft_loss_scale=1.0)
    with BF16.autocast():
        fake = state.generator(batch.mel)
        verdicts = state.discriminators(torch.cat([batch.audio.unsqueeze(1), fake], dim=0))
        stft = multi_resolution_stft_loss(batch.audio, fake.squeeze(1))
        mel = runtime.loss_mel(fake.squeeze(1))
    # The last conv and tanh run in float32: the waveform is not rounded to bf16's 8 mantissa bits.
    assert fake.dtype == torch.float32
    assert stft.dtype == torch.float32 and mel.dtype == torch.float32
    with BF16.autocast():
        for family in verdicts:
            real, generated = split_output(family, batch.size)
            assert discriminator_loss(real, generated).dtype == torch.float32


def test_the_bf16_generator_output_is_within_float32_rounding_of_the_float32_output():
    state, _, _, batch = _hifigan(stft_loss_scale=0.0)
    with torch.no_grad():
        reference = state.generator(batch.mel)
        with BF16.autocast():
            fake = state.generator(batch.mel)
    relative = float((fake - reference).norm() / reference.norm())
    # Rounding the waveform itself to bf16 alone would give about 2e-3 (2^-9 relative).
    assert relative < 1e-3


def _fastpitch_batch(seed: int = 0) -> FastPitchBatch:
    generator = torch.Generator().manual_seed(seed)
    lengths = torch.tensor([7, 4])
    tokens = torch.randint(1, N_SYMBOLS, (2, 7), generator=generator) * (torch.arange(7)[None] < lengths[:, None])
    mask = tokens != 0
    durations = (1 + tokens % 3) * mask
    mel_lengths = durations.sum(1)
    mels = torch.randn(2, N_MELS, int(mel_lengths.max()), generator=generator) - 5.0
    mels = mels * (torch.arange(mels.shape[-1])[None] < mel_lengths[:, None])[:, None]
    pitch = torch.randn(2, 7, generator=generator) * mask
    energy = torch.rand(2, 7, generator=generator) * mask
    return FastPitchBatch(["a", "b"], tokens, lengths, durations, pitch, energy, mels, mel_lengths)


def test_fastpitch_layer_norms_and_losses_run_in_float32_under_bf16_autocast():
    torch.manual_seed(0)
    model = FastPitch(FastPitchConfig(**TINY_FASTPITCH), N_SYMBOLS, N_MELS, pitch_mean=200.0, pitch_std=50.0)
    norms = [module for module in model.modules() if isinstance(module, torch.nn.LayerNorm)]
    seen: list[torch.dtype] = []
    for norm in norms:
        norm.register_forward_hook(lambda _module, _args, output: seen.append(output.dtype))
    batch = _fastpitch_batch()
    inputs = FastPitchInputs(batch.tokens, batch.token_lengths, batch.durations, batch.pitch, batch.energy)
    with BF16.autocast():
        output = model(inputs, mel_max_len=batch.mels.shape[-1])
        terms = fastpitch_loss(output, inputs, batch.mels, batch.mel_lengths)
    # CUDA's autocast runs LayerNorm in float32 by itself; the CPU's does not, so the model asks for it.
    assert norms and len(seen) >= len(norms) and set(seen) == {torch.float32}
    assert terms.total.dtype == torch.float32 and terms.mel.dtype == torch.float32


def test_a_bf16_fastpitch_step_on_the_cpu_has_finite_losses_and_gradients():
    cfg = FastPitchConfig(**TINY_FASTPITCH)
    pitch = type("PitchStats", (), {"mean": 200.0, "std": 50.0})()
    state = fastpitch_state.build_state(cfg, N_SYMBOLS, N_MELS, pitch, BF16)  # type: ignore[arg-type]
    assert not state.scaler.is_enabled()  # bf16 has fp32's range: no gradient scaling
    runtime = fastpitch_step.Runtime(DistributedContext(device=CPU), BF16, state.model, cfg, accumulation=1)
    before = [parameter.detach().clone() for parameter in state.model.parameters()]
    figures = fastpitch_step.train_step(state, runtime, [_fastpitch_batch()], checkpoints=[])
    assert all(math.isfinite(value) for value in figures.values()) and figures["grad_norm"] > 0
    assert all(parameter.dtype == torch.float32 for parameter in state.model.parameters())
    assert any(not torch.equal(old, new) for old, new in zip(before, state.model.parameters(), strict=True))


def _aligner_batch():
    generator = torch.Generator().manual_seed(0)
    items = []
    for index, n_tokens in enumerate((6, 4)):
        tokens = torch.randint(1, N_SYMBOLS, (n_tokens,), generator=generator)
        frames = torch.repeat_interleave(tokens, 1 + tokens % 3)
        items.append(AlignerItem(str(index), tokens, torch.randn(N_MELS, frames.numel(), generator=generator)))
    return AlignerCollate(prior_scaling=1.0)(items)


def test_the_aligner_follows_the_shared_precision_policy(caplog):
    with caplog.at_level(logging.INFO, logger="tts_pipeline.precision"):
        bf16 = aligner_trainer.resolve_aligner_precision(AlignerConfig(amp="bf16"), CPU)
        fp16 = aligner_trainer.resolve_aligner_precision(AlignerConfig(amp="fp16"), CPU)
    # bf16 autocast runs on a CPU (before, the aligner silently trained in float32); fp16 falls back.
    assert (bf16.amp, fp16.amp) == ("bf16", "off")
    assert "aligner.amp fp16 is a CUDA mode" in caplog.text
    state = aligner_trainer.build_state(AlignerConfig(amp="bf16"), N_SYMBOLS, N_MELS, bf16)
    assert not state.scaler.is_enabled()


def test_a_bf16_aligner_step_keeps_its_attention_and_losses_in_float32(tmp_path):
    cfg = AlignerConfig(amp="bf16", embedding_dim=16, attention_dim=8)
    state = aligner_trainer.build_state(cfg, N_SYMBOLS, N_MELS, BF16)
    batch = _aligner_batch()
    output, losses = aligner_trainer.compute_losses(state.model, batch, 0.5, BF16)
    assert output.attn_logprob.dtype == torch.float32 and output.attn_soft.dtype == torch.float32
    assert losses.ctc.dtype == torch.float32 and losses.bin.dtype == torch.float32
    before = [parameter.detach().clone() for parameter in state.model.parameters()]
    stepped = aligner_trainer.train_step(state, batch, 0.5, cfg, CheckpointManager(tmp_path, "h"), BF16)
    assert math.isfinite(float(stepped.total.detach())) and float(stepped.ctc.detach()) > 0
    assert any(not torch.equal(old, new) for old, new in zip(before, state.model.parameters(), strict=True))
