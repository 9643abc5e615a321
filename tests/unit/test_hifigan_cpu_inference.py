"""The generator prepared for CPU bf16 inference: the fused convs compute the generator's function,
the bf16 copy stays close to float32, and only CPU bf16 gets it (float32 keeps the generator itself)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tts_pipeline.config import HiFiGANConfig
from tts_pipeline.inference import SynthesisOptions, Synthesizer
from tts_pipeline.models.hifigan import Generator
from tts_pipeline.models.hifigan.cpu_inference import (
    FusedCpuGenerator,
    fused_cpu_kernels_available,
    onednn_bf16_available,
    prepare_generator,
)
from tts_pipeline.precision import Precision

from ..inference_models import AUDIO

needs_onednn = pytest.mark.skipif(not fused_cpu_kernels_available(), reason="torch built without oneDNN")
needs_onednn_bf16 = pytest.mark.skipif(
    not onednn_bf16_available(), reason="oneDNN runs no bf16 convolution on this CPU (no AVX512-BW or AVX-NE-CONVERT)"
)

# v1's layout (resblock 1, three parallel blocks) and the demo's (resblock 2, three stages), narrowed
# so that a forward pass takes milliseconds.
SMALL = {
    "resblock1": HiFiGANConfig(
        upsample_initial_channel=32,
        upsample_rates=[8, 8, 2, 2],
        upsample_kernel_sizes=[16, 16, 4, 4],
        resblock_kernel_sizes=[3, 7, 11],
        resblock_dilation_sizes=[[1, 3, 5]] * 3,
    ),
    "resblock2": HiFiGANConfig(
        resblock="2",
        upsample_initial_channel=32,
        upsample_rates=[8, 8, 4],
        upsample_kernel_sizes=[16, 16, 8],
        resblock_kernel_sizes=[3, 5, 7],
        resblock_dilation_sizes=[[1, 2], [2, 6], [3, 12]],
    ),
}
CPU = torch.device("cpu")


@pytest.fixture(autouse=True)
def one_thread():
    torch.set_num_threads(1)


def generator(layout: str, seed: int = 0) -> Generator:
    torch.manual_seed(seed)
    model = Generator(SMALL[layout], AUDIO.n_mel_channels).eval()
    model.remove_weight_norm()
    return model


def log_mels(batch: int = 2, frames: int = 24, seed: int = 1) -> torch.Tensor:
    """Log-mel-like values (around -5, as speech log-mels are)."""
    return torch.randn(batch, AUDIO.n_mel_channels, frames, generator=torch.Generator().manual_seed(seed)) * 2 - 5


def snr_db(reference: torch.Tensor, estimate: torch.Tensor) -> float:
    reference, estimate = reference.double(), estimate.double()
    return float(10 * torch.log10(reference.pow(2).sum() / (reference - estimate).pow(2).sum()))


@needs_onednn
@pytest.mark.parametrize("layout", sorted(SMALL))
def test_the_fused_convs_compute_the_generators_function_in_float32(layout):
    model, mels = generator(layout), log_mels()
    with torch.inference_mode():
        expected = model(mels)
        fused = FusedCpuGenerator(model, torch.float32)(mels)
    assert fused.shape == expected.shape == (2, 1, 24 * model.hop_length)
    torch.testing.assert_close(fused, expected, atol=1e-5, rtol=1e-4)


@needs_onednn
def test_any_length_and_batch_runs_with_the_prepacked_weights():
    model = generator("resblock1")
    fused = FusedCpuGenerator(model, torch.float32)
    with torch.inference_mode():
        for batch, frames in ((1, 1), (3, 7), (1, 300)):
            mels = log_mels(batch, frames, seed=frames)
            torch.testing.assert_close(fused(mels), model(mels), atol=1e-5, rtol=1e-4)


@needs_onednn_bf16
@pytest.mark.parametrize("layout", sorted(SMALL))
def test_the_bf16_copy_stays_close_to_float32(layout):
    model, mels = generator(layout), log_mels(batch=1, frames=40)
    with torch.inference_mode():
        expected = model(mels)
        prepared = FusedCpuGenerator(model)(mels)
    assert prepared.dtype == torch.float32 and prepared.shape == expected.shape
    # bf16 keeps 8 bits of mantissa; the float32 ends and fused residual sums keep the error near
    # 50 dB below the signal on these models (plain autocast: about 45 dB).
    assert snr_db(expected, prepared) > 40.0
    # The weights really are bf16, and the generator was left as it was.
    copy = FusedCpuGenerator(model)
    assert copy.ups[0].weight.dtype == copy.resblocks[0][0].plain[0].weight.dtype == torch.bfloat16
    assert model.ups[0].weight.dtype == torch.float32


@needs_onednn
def test_a_weight_normalised_generator_gives_its_normalised_weights():
    torch.manual_seed(0)
    model = Generator(SMALL["resblock2"], AUDIO.n_mel_channels).eval()
    mels = log_mels()
    with torch.inference_mode():
        before = FusedCpuGenerator(model, torch.float32)(mels)
        model.remove_weight_norm()
        torch.testing.assert_close(before, model(mels), atol=1e-5, rtol=1e-4)


def test_without_onednn_bf16_cpu_bf16_runs_the_generator_itself(monkeypatch):
    """An AVX2-only CPU: oneDNN would refuse the bf16 weights, so bf16 runs under autocast and auto
    offers the fused copy in float32 only."""
    from tts_pipeline.inference import hifigan_vocoder
    from tts_pipeline.models.hifigan import cpu_inference

    monkeypatch.setattr(cpu_inference, "onednn_bf16_available", lambda: False)
    monkeypatch.setattr(hifigan_vocoder, "onednn_bf16_available", lambda: False)
    model = generator("resblock2")
    assert prepare_generator(model, Precision("bf16", CPU)) is model
    labels = [path.name for path in hifigan_vocoder.cpu_paths()]
    assert "bf16 fused" not in labels and "bf16" in labels


def test_float32_keeps_the_generator_itself():
    model = generator("resblock2")
    assert prepare_generator(model, Precision("off", CPU)) is model


@needs_onednn_bf16
def test_cpu_bf16_gets_the_prepared_copy():
    model = generator("resblock2")
    prepared = prepare_generator(model, Precision("bf16", CPU))
    assert isinstance(prepared, FusedCpuGenerator) and prepared.hop_length == model.hop_length


@needs_onednn_bf16
def test_the_synthesizer_vocodes_through_the_prepared_copy_and_denoises():
    model = generator("resblock1")
    mels = [log_mels(batch=1, frames=frames, seed=frames)[0].numpy() for frames in (30, 17)]
    options = SynthesisOptions(denoising_strength=0.01, fade_out_frames=0)
    fp32 = Synthesizer(model, AUDIO, options, amp="off")
    bf16 = Synthesizer(model, AUDIO, options, amp="bf16")
    assert fp32.vocoder_runner is model and isinstance(bf16.vocoder_runner, FusedCpuGenerator)
    # The denoiser's bias is measured on the float32 generator either way.
    torch.testing.assert_close(bf16.denoiser.bias, fp32.denoiser.bias)
    for exact, fast in zip(fp32.vocode(mels), bf16.vocode(mels), strict=True):
        assert fast.audio.shape == exact.audio.shape == (exact.n_frames * AUDIO.hop_length,)
        assert fast.audio.dtype == np.float32
        assert snr_db(torch.from_numpy(exact.audio), torch.from_numpy(fast.audio)) > 40.0


@needs_onednn
@pytest.mark.parametrize("channels", [1, 4])
@pytest.mark.parametrize("in_place", [False, True])
def test_fused_residual_adds_the_conv_for_any_channel_count(channels, in_place):
    """``skip + conv(x)``; one channel is the case torch 2.11's oneDNN cannot fuse out of place."""
    from tts_pipeline.models.hifigan.cpu_inference import _Conv

    torch.manual_seed(0)
    conv = torch.nn.Conv1d(channels, channels, 3, padding=2, dilation=2)
    x, skip = torch.randn(2, channels, 50), torch.randn(2, channels, 50)
    expected = skip + conv(x).detach()
    fused = _Conv(conv, torch.float32)
    as_2d = lambda t: t.unsqueeze(2).contiguous(memory_format=torch.channels_last)  # noqa: E731
    out = fused.residual(as_2d(x), as_2d(skip.clone()), in_place=in_place)
    torch.testing.assert_close(out.squeeze(2), expected, rtol=1e-5, atol=1e-5)
