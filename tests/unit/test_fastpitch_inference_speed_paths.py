"""FastPitch's inference fast paths compute the training function: the fused attention kernel, the
skipped masking of unpadded batches, and the copy held in bfloat16 (close to float32, same durations)."""

from __future__ import annotations

import pytest
import torch

from tts_pipeline.inference import SynthesisOptions, Synthesizer, TextEncoder
from tts_pipeline.models.fastpitch.bf16 import bf16_inference_copy, is_held_in_bf16
from tts_pipeline.models.fastpitch.transformer import FFTLayer, MultiHeadAttention

from ..inference_models import AUDIO, text_settings, tiny_fastpitch, tiny_generator
from .test_fastpitch_model import make_batch, tiny_model

pytestmark = pytest.mark.usefixtures("one_thread")


def test_fused_attention_equals_the_explicit_softmax_with_padding_and_an_empty_sequence() -> None:
    torch.manual_seed(0)
    attention = MultiHeadAttention(d_model=16, n_heads=2, d_head=8, dropout=0.0, dropatt=0.0)
    x = torch.randn(3, 5, 16)
    mask = torch.tensor([[True] * 5, [True, True, True, False, False], [False] * 5])
    explicit = attention.train()(x, mask)  # training spells the softmax out
    fused = attention.eval()(x, mask)
    torch.testing.assert_close(fused, explicit, atol=1e-6, rtol=1e-5)
    assert torch.isfinite(fused).all()  # a sequence with no real key gets uniform weights, not NaN
    torch.testing.assert_close(attention(x[:1], None), explicit[:1], atol=1e-6, rtol=1e-5)


def test_a_layer_without_padding_skips_the_mask_and_changes_nothing() -> None:
    torch.manual_seed(0)
    layer = FFTLayer(d_model=16, n_heads=2, d_head=8, d_inner=32, kernel_size=3, dropout=0.0, dropatt=0.0).eval()
    x = torch.randn(2, 7, 16)
    assert torch.equal(layer(x, None), layer(x, torch.ones(2, 7, dtype=torch.bool)))


def test_the_bf16_copy_holds_matrix_weights_in_bf16_and_the_rest_in_fp32() -> None:
    model = tiny_model().eval()
    held = bf16_inference_copy(model)
    assert is_held_in_bf16(held) and not is_held_in_bf16(model)
    assert all(p.dtype == torch.float32 for p in model.parameters())  # the original is untouched
    for name, module in held.named_modules():
        if isinstance(module, (torch.nn.Linear, torch.nn.Conv1d)) and not name.endswith("predictor.fc"):
            assert {p.dtype for p in module.parameters()} == {torch.bfloat16}, name
    full = [name for name, p in held.named_parameters() if p.dtype == torch.float32]
    assert full and all(
        name.endswith(("predictor.fc.weight", "predictor.fc.bias", "word_emb.weight"))
        or ".layer_norm." in name
        or ".norm." in name
        for name in full
    )
    assert all(buffer.dtype == torch.float32 for buffer in held.buffers())


def test_the_bf16_copy_gives_the_fp32_durations_and_a_close_mel() -> None:
    model = tiny_model(seed=3).eval()
    batch = make_batch([9, 6])
    exact = model.infer(batch.tokens, batch.token_lengths)
    held = bf16_inference_copy(model).infer(batch.tokens, batch.token_lengths)
    assert held.pitch.dtype == torch.float32
    torch.testing.assert_close(held.pitch, exact.pitch, atol=0.05, rtol=0)
    given = model.infer(batch.tokens, batch.token_lengths, durations=exact.durations)
    held_given = bf16_inference_copy(model).infer(batch.tokens, batch.token_lengths, durations=exact.durations)
    assert torch.equal(held_given.mel_lengths, given.mel_lengths)
    difference = (held_given.mel.float() - given.mel).abs()
    assert difference.max() < 0.1 * given.mel.abs().max()
    assert difference.mean() < 0.02 * given.mel.abs().mean()


def test_a_cpu_synthesizer_in_bf16_runs_fastpitch_from_a_bf16_copy() -> None:
    generator = tiny_generator()
    generator.remove_weight_norm()
    fastpitch = tiny_fastpitch()
    encoder = TextEncoder.from_settings(text_settings(), "fastpitch.pt")
    synths = {
        amp: Synthesizer(generator, AUDIO, SynthesisOptions(), acoustic_model=fastpitch, text_encoder=encoder, amp=amp)
        for amp in ("off", "bf16")
    }
    runners = {amp: synth.acoustic_runner for amp, synth in synths.items()}
    assert is_held_in_bf16(runners["bf16"].model) and not is_held_in_bf16(runners["off"].model)
    # The model as given stays float32, so synthesizers in other precisions can share it.
    assert synths["bf16"].acoustic_model is fastpitch and not is_held_in_bf16(fastpitch)
    exact, low = (synths[amp].synthesize(["Hello there."])[0] for amp in ("off", "bf16"))
    assert low.n_frames == exact.n_frames
    assert abs(low.mel - exact.mel).max() < 0.1 * abs(exact.mel).max()
