"""1-D convolutions on channels-last rows: the same function and gradients as the plain layout, the
layouts handed back and forth, and the HiFi-GAN generator computing the same in either layout."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.nn.utils.parametrizations import weight_norm

from tts_pipeline.config import HiFiGANConfig
from tts_pipeline.models import conv_rows
from tts_pipeline.models.hifigan import Generator
from tts_pipeline.models.hifigan.presets import PRESETS


@pytest.mark.parametrize(
    ("channels", "kernel", "stride", "dilation", "groups", "bias"),
    [(16, 7, 1, 12, 1, True), (8, 3, 2, 1, 1, False), (16, 41, 2, 1, 4, True), (4, 5, 1, 2, 1, True)],
)
def test_a_conv_on_rows_computes_the_plain_conv_and_its_gradients(
    channels: int, kernel: int, stride: int, dilation: int, groups: int, bias: bool
) -> None:
    torch.manual_seed(0)
    conv = weight_norm(
        nn.Conv1d(
            channels, channels, kernel, stride=stride, dilation=dilation, groups=groups, bias=bias,
            padding=dilation * (kernel - 1) // 2,
        )
    )  # fmt: skip
    x = torch.randn(3, channels, 300)
    target = torch.randn_like(conv(x))

    def loss_and_grads(rows: bool) -> tuple[torch.Tensor, ...]:
        conv.zero_grad()
        inputs = x.clone().requires_grad_()
        y = conv_rows.from_rows(conv_rows.conv1d(conv, conv_rows.to_rows(inputs))) if rows else conv(inputs)
        loss = (y - target).pow(2).sum()
        loss.backward()
        return (y.detach(), inputs.grad, *(p.grad.clone() for p in conv.parameters()))

    for plain, on_rows in zip(loss_and_grads(False), loss_and_grads(True), strict=True):
        assert on_rows.shape == plain.shape
        # float32 sums in another order: equal to a millionth of each tensor's scale
        torch.testing.assert_close(on_rows, plain, rtol=0, atol=1e-6 * plain.abs().max().item())


def test_the_rows_are_channels_last_and_their_gradients_come_back_in_each_sides_layout() -> None:
    x = torch.randn(2, 16, 50, requires_grad=True)
    rows = conv_rows.to_rows(x)
    assert rows.shape == (2, 16, 1, 50)
    assert rows.is_contiguous(memory_format=torch.channels_last)
    grads_seen = []
    rows.register_hook(lambda grad: grads_seen.append(grad))
    back = conv_rows.from_rows(rows * 2.0)
    assert back.shape == (2, 16, 50) and back.is_contiguous()
    torch.testing.assert_close(back, 2.0 * x)
    back.backward(torch.ones_like(back))
    # the rows' gradient in the rows' layout (no reorder per conv), the input's in the input's
    assert grads_seen[0].is_contiguous(memory_format=torch.channels_last)
    assert x.grad is not None and x.grad.is_contiguous()
    torch.testing.assert_close(x.grad, torch.full_like(x, 2.0))


def test_wrong_shapes_are_named() -> None:
    with pytest.raises(ValueError, match=r"to_rows: expected a \(B, C, L\) tensor, got shape \(2, 3, 1, 4\)"):
        conv_rows.to_rows(torch.zeros(2, 3, 1, 4))
    with pytest.raises(ValueError, match=r"from_rows: expected a \(B, C, 1, L\) tensor, got shape \(2, 3, 4\)"):
        conv_rows.from_rows(torch.zeros(2, 3, 4))
    with pytest.raises(ValueError, match="zero numeric padding only"):
        conv_rows.conv1d(nn.Conv1d(3, 3, 3, padding=1, padding_mode="reflect"), torch.zeros(1, 3, 1, 8))


@pytest.mark.parametrize("name", ["v2", "v3", "demo"])
def test_the_generator_computes_the_same_audio_and_gradients_in_either_layout(name: str) -> None:
    overrides = {
        **PRESETS,
        "demo": {
            "resblock": "2",
            "upsample_rates": [8, 8, 4],
            "upsample_kernel_sizes": [8, 16, 8],
            "upsample_initial_channel": 32,
            "upsampling": ["interpolate", "transposed", "transposed"],
            "source": "harmonic",
        },
    }[name]
    torch.manual_seed(0)
    generator = Generator(HiFiGANConfig(**overrides), 80, sampling_rate=22050)
    mel = torch.randn(2, 80, 12)
    f0 = torch.full((2, 12), 120.0) if generator.has_source else None
    block_inputs: list[int] = []
    generator.resblocks[-1][0].register_forward_pre_hook(lambda module, args: block_inputs.append(args[0].dim()))

    def audio_and_grads(rows: bool) -> list[torch.Tensor]:
        torch.manual_seed(1)  # the source's noise
        generator.cpu_rows = rows
        generator.zero_grad()
        audio = generator(mel, f0)
        audio.pow(2).mean().backward()
        return [audio.detach(), *(p.grad.clone() for p in generator.parameters() if p.grad is not None)]

    plain, on_rows = audio_and_grads(False), audio_and_grads(True)
    assert block_inputs == [3, 4]  # the blocks saw (B, C, L), then rows
    assert len(plain) == len(on_rows) > 1
    for a, b in zip(plain, on_rows, strict=True):
        torch.testing.assert_close(b, a, rtol=0, atol=1e-4 * a.abs().max().item())
