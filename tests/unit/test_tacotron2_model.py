"""Tacotron 2: NVIDIA's defaults, parameter count and state-dict names, shapes, masking of padding,
the loss, inference stopping on the gate, NVIDIA's checkpoint files, and parity with NVIDIA's code on
the small model of ``tests/fixtures/nvidia_tacotron2`` (see its README)."""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path

import pytest
import torch

from tts_pipeline.errors import UserError
from tts_pipeline.models.model_file import save_model_file
from tts_pipeline.models.tacotron2 import (
    Tacotron2,
    Tacotron2Config,
    gate_targets,
    lengths_to_mask,
    load_tacotron2,
    off_diagonal_attention,
    save_tacotron2,
    tacotron2_loss,
)
from tts_pipeline.text import get_symbols

FIXTURE = Path(__file__).parents[1] / "fixtures" / "nvidia_tacotron2"
CHECKPOINT = FIXTURE / "checkpoint_Tacotron2_0.pt"

# A tiny model with every part, sizes all different so that a transposed weight cannot fit.
TINY = {
    "n_symbols": 20,
    "n_mel_channels": 12,
    "symbols_embedding_dim": 16,
    "encoder_embedding_dim": 16,
    "attention_rnn_dim": 24,
    "decoder_rnn_dim": 20,
    "prenet_dim": 8,
    "postnet_embedding_dim": 10,
    "attention_dim": 6,
    "attention_location_n_filters": 4,
    "attention_location_kernel_size": 7,
}

pytestmark = pytest.mark.usefixtures("one_thread")


def tiny_model(seed: int = 0, **overrides) -> Tacotron2:
    torch.manual_seed(seed)
    model = Tacotron2(Tacotron2Config(**{**TINY, "p_prenet_dropout": 0.0, **overrides}))
    # Non-trivial BatchNorm statistics, so that eval mode is not the identity up to a scale.
    for module in model.modules():
        if isinstance(module, torch.nn.BatchNorm1d):
            module.running_mean.normal_(0.0, 0.2)
            module.running_var.uniform_(0.5, 1.5)
            module.bias.data.normal_(0.0, 0.2)
    return model.eval()


def batch(lengths_text=(7, 5, 3), lengths_mel=(9, 11, 6), seed: int = 1):
    """A padded batch: ids padded with 0, mels with 0; and its items unpadded."""
    g = torch.Generator().manual_seed(seed)
    n_mels = TINY["n_mel_channels"]
    texts = [torch.randint(1, TINY["n_symbols"], (n,), generator=g) for n in lengths_text]
    mels = [torch.randn(n_mels, n, generator=g) - 4.0 for n in lengths_mel]
    text = torch.zeros(len(texts), max(lengths_text), dtype=torch.long)
    mel = torch.zeros(len(mels), n_mels, max(lengths_mel))
    for i, (t, m) in enumerate(zip(texts, mels, strict=True)):
        text[i, : len(t)] = t
        mel[i, :, : m.shape[1]] = m
    return text, torch.tensor(lengths_text), mel, torch.tensor(lengths_mel), texts, mels


def reference() -> dict:
    return torch.load(FIXTURE / "reference_outputs.pt", weights_only=True)


def nvidia_model(**overrides) -> Tacotron2:
    """The fixture model, its config overridden (e.g. NVIDIA's padding behaviour, no prenet dropout)."""
    model, _ = load_tacotron2(CHECKPOINT)
    config = {**model.model_config(), **overrides}
    rebuilt = Tacotron2.from_config(config)
    rebuilt.load_state_dict(model.state_dict())
    return rebuilt.eval()


# --------------------------------------------------------------------------------------------------
# hyperparameters and names
# --------------------------------------------------------------------------------------------------


def test_the_defaults_are_nvidias_published_ones():
    cfg = Tacotron2Config()
    assert cfg.n_symbols == len(get_symbols("english_basic")) == 148
    assert (cfg.symbols_embedding_dim, cfg.encoder_embedding_dim, cfg.encoder_kernel_size) == (512, 512, 5)
    assert (cfg.encoder_n_convolutions, cfg.attention_rnn_dim, cfg.attention_dim) == (3, 1024, 128)
    assert (cfg.attention_location_n_filters, cfg.attention_location_kernel_size) == (32, 31)
    assert (cfg.decoder_rnn_dim, cfg.prenet_dim, cfg.n_mel_channels, cfg.n_frames_per_step) == (1024, 256, 80, 1)
    assert (cfg.postnet_embedding_dim, cfg.postnet_kernel_size, cfg.postnet_n_convolutions) == (512, 5, 5)
    assert (cfg.gate_threshold, cfg.max_decoder_steps) == (0.5, 2000)
    assert (cfg.p_attention_dropout, cfg.p_decoder_dropout, cfg.p_prenet_dropout) == (0.1, 0.1, 0.5)
    assert cfg.mask_padding is False and cfg.decoder_no_early_stopping is False


def test_the_default_model_has_nvidias_parameter_count():
    with torch.device("meta"):
        model = Tacotron2()
    # NVIDIA's Tacotron2(**defaults) built by their code: 28,193,153 parameters, 84 state-dict entries.
    assert sum(p.numel() for p in model.parameters()) == 28_193_153
    assert len(model.state_dict()) == 84


def test_the_state_dict_has_nvidias_names_and_shapes():
    checkpoint = torch.load(CHECKPOINT, weights_only=True)
    with torch.device("meta"):
        ours = Tacotron2.from_config(checkpoint["config"]).state_dict()
    theirs = checkpoint["state_dict"]
    assert sorted(ours) == sorted(theirs)
    assert {name: tuple(t.shape) for name, t in ours.items()} == {name: tuple(t.shape) for name, t in theirs.items()}


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"symbols_embedding_dim": 8}, "must equal encoder_embedding_dim"),
        ({"symbols_embedding_dim": 15, "encoder_embedding_dim": 15}, "must be even"),
        ({"postnet_kernel_size": 4}, "postnet_kernel_size must be odd"),
        ({"n_frames_per_step": 0}, "n_frames_per_step must be at least 1"),
        ({"p_decoder_dropout": 1.0}, "p_decoder_dropout"),
        ({"max_decoder_steps": 0}, "max_decoder_steps"),
    ],
)
def test_bad_hyperparameters_are_rejected(overrides, message):
    with pytest.raises(ValueError, match=message):
        Tacotron2Config(**{**TINY, **overrides})


def test_unknown_config_keys_are_named():
    with pytest.raises(ValueError, match="unknown keys.*'zoneout'"):
        Tacotron2.from_config({**TINY, "zoneout": 0.1})


# --------------------------------------------------------------------------------------------------
# teacher-forced forward
# --------------------------------------------------------------------------------------------------


def test_forward_shapes_and_attention():
    model = tiny_model()
    text, text_lengths, mels, mel_lengths, _, _ = batch()
    with torch.no_grad():
        out = model(text, text_lengths, mels, mel_lengths)
    b, n_mels, t = mels.shape
    assert out.mel.shape == out.mel_postnet.shape == (b, n_mels, t)
    assert out.gate.shape == (b, t)
    assert out.alignments.shape == (b, t, int(text_lengths.max()))
    # Each step's attention is a distribution over the item's real symbols only.
    real = lengths_to_mask(text_lengths)[:, None, :]
    torch.testing.assert_close(out.alignments.sum(2), torch.ones(b, t))
    assert (out.alignments.masked_select(~real) == 0).all()


def test_mask_padding_fills_padded_frames_as_nvidia_does():
    text, text_lengths, mels, mel_lengths, _, _ = batch()
    padded = ~lengths_to_mask(mel_lengths, mels.shape[2])
    with torch.no_grad():
        masked = tiny_model(mask_padding=True)(text, text_lengths, mels, mel_lengths)
        plain = tiny_model(mask_padding=False)(text, text_lengths, mels, mel_lengths)
    assert padded.any()
    assert (masked.mel.transpose(1, 2)[padded] == 0).all()
    assert (masked.mel_postnet.transpose(1, 2)[padded] == 0).all()
    assert (masked.gate[padded] == 1e3).all()
    assert (plain.gate[padded] != 1e3).all()
    torch.testing.assert_close(masked.gate[~padded], plain.gate[~padded], rtol=0, atol=0)


@pytest.mark.parametrize("mask_padding", [False, True])
def test_a_padded_batch_gives_each_item_what_it_gives_alone(mask_padding):
    model = tiny_model(mask_padding=mask_padding)
    text, text_lengths, mels, mel_lengths, texts, item_mels = batch()
    with torch.no_grad():
        out = model(text, text_lengths, mels, mel_lengths)
        for i, (t, m) in enumerate(zip(texts, item_mels, strict=True)):
            alone = model(t[None], torch.tensor([len(t)]), m[None], torch.tensor([m.shape[1]]))
            n, f = len(t), m.shape[1]
            torch.testing.assert_close(out.mel[i, :, :f], alone.mel[0], rtol=1e-5, atol=1e-5)
            torch.testing.assert_close(out.mel_postnet[i, :, :f], alone.mel_postnet[0], rtol=1e-5, atol=1e-5)
            torch.testing.assert_close(out.gate[i, :f], alone.gate[0], rtol=1e-5, atol=1e-5)
            torch.testing.assert_close(out.alignments[i, :f, :n], alone.alignments[0], rtol=1e-5, atol=1e-5)


def test_nvidias_padding_behaviour_depends_on_the_batch():
    """With ``padding_invariant=False`` (NVIDIA's code) a shorter item reads the padding: its outputs
    in a batch differ from its outputs alone; the longest item's do not."""
    model = tiny_model(padding_invariant=False)
    text, text_lengths, mels, mel_lengths, texts, item_mels = batch(lengths_mel=(11, 9, 6))
    with torch.no_grad():
        out = model(text, text_lengths, mels, mel_lengths)
        first = model(texts[0][None], text_lengths[:1], item_mels[0][None], mel_lengths[:1])
        last = model(texts[2][None], text_lengths[2:], item_mels[2][None], mel_lengths[2:])
    torch.testing.assert_close(out.mel_postnet[0], first.mel_postnet[0], rtol=1e-5, atol=1e-5)
    assert (out.mel_postnet[2, :, :6] - last.mel_postnet[0]).abs().max() > 1e-3


def test_the_order_of_the_batch_does_not_matter():
    model = tiny_model()
    text, text_lengths, mels, mel_lengths, _, _ = batch()
    order = torch.tensor([2, 0, 1])
    with torch.no_grad():
        out = model(text, text_lengths, mels, mel_lengths)
        shuffled = model(text[order], text_lengths[order], mels[order], mel_lengths[order])
    for a, b in zip(out, shuffled, strict=True):
        torch.testing.assert_close(a[order], b, rtol=1e-5, atol=1e-6)


def test_the_prenet_drops_in_eval_mode_as_nvidias_does():
    torch.manual_seed(0)
    model = Tacotron2(Tacotron2Config(**TINY)).eval()  # p_prenet_dropout 0.5
    text, text_lengths, mels, mel_lengths, _, _ = batch()
    with torch.no_grad():
        a = model(text, text_lengths, mels, mel_lengths)
        b = model(text, text_lengths, mels, mel_lengths)
    assert (a.mel - b.mel).abs().max() > 1e-4
    model = tiny_model()  # p_prenet_dropout 0: deterministic
    with torch.no_grad():
        a = model(text, text_lengths, mels, mel_lengths)
        b = model(text, text_lengths, mels, mel_lengths)
    torch.testing.assert_close(a.mel_postnet, b.mel_postnet, rtol=0, atol=0)


def test_bad_inputs_are_named():
    model = tiny_model()
    text, text_lengths, mels, mel_lengths, _, _ = batch()
    with pytest.raises(ValueError, match="mels: expected"):
        model(text, text_lengths, mels[:, :5], mel_lengths)
    with pytest.raises(ValueError, match="text_lengths must be in"):
        model(text, text_lengths + 1, mels, mel_lengths)


# --------------------------------------------------------------------------------------------------
# loss
# --------------------------------------------------------------------------------------------------


def test_gate_targets_are_one_from_the_last_real_frame():
    expected = torch.tensor([[0, 0, 1, 1, 1], [0, 0, 0, 0, 1], [1, 1, 1, 1, 1]], dtype=torch.float32)
    torch.testing.assert_close(gate_targets(torch.tensor([3, 5, 1]), 5), expected)
    with pytest.raises(ValueError, match="mel_lengths"):
        gate_targets(torch.tensor([6]), 5)


def test_the_loss_is_mse_on_both_mels_plus_gate_bce():
    model = tiny_model()
    text, text_lengths, mels, mel_lengths, _, _ = batch()
    out = model(text, text_lengths, mels, mel_lengths)
    gate = gate_targets(mel_lengths, mels.shape[2])
    terms = tacotron2_loss(out, mels, gate, text_lengths, mel_lengths)
    torch.testing.assert_close(terms.mel, ((out.mel - mels) ** 2).mean())
    torch.testing.assert_close(terms.mel_postnet, ((out.mel_postnet - mels) ** 2).mean())
    p = torch.sigmoid(out.gate)
    torch.testing.assert_close(terms.gate, -(gate * p.log() + (1 - gate) * (1 - p).log()).mean())
    torch.testing.assert_close(terms.total, terms.mel + terms.mel_postnet + terms.gate)
    with pytest.raises(ValueError, match="shapes differ"):
        tacotron2_loss(out, mels[:, :, :-1], gate, text_lengths, mel_lengths)
    guided = tacotron2_loss(out, mels, gate, text_lengths, mel_lengths, attention_weight=2.5)
    torch.testing.assert_close(guided.total, terms.total + 2.5 * terms.attention)


def test_off_diagonal_attention_is_zero_on_the_diagonal_and_large_off_it():
    # Two items of different lengths; the second's padding holds attention that must not count.
    text_lengths, mel_lengths = torch.tensor([20, 16]), torch.tensor([80, 60])
    frames, symbols = 80, 20
    diagonal = torch.zeros(2, frames, symbols)
    anti = torch.zeros(2, frames, symbols)
    for b in range(2):
        n_b, t_b = int(text_lengths[b]), int(mel_lengths[b])
        for t in range(t_b):
            diagonal[b, t, t * n_b // t_b] = 1.0
            anti[b, t, n_b - 1 - t * n_b // t_b] = 1.0
        diagonal[b, t_b:, :] = 1.0  # padded frames: ignored
    on = off_diagonal_attention(diagonal, text_lengths, mel_lengths, sigma=0.2)
    off = off_diagonal_attention(anti, text_lengths, mel_lengths, sigma=0.2)
    spread = off_diagonal_attention(
        torch.nn.functional.pad(torch.full((2, frames, 16), 1 / 16), (0, 4)), torch.tensor([16, 16]), mel_lengths, 0.2
    )
    assert float(on) < 0.05
    assert float(off) > 0.5
    assert float(on) < float(spread) < float(off)
    # A wider band forgives more.
    assert float(off_diagonal_attention(anti, text_lengths, mel_lengths, sigma=1.0)) < float(off)
    with pytest.raises(ValueError, match="lengths of shape"):
        off_diagonal_attention(anti, text_lengths[:1], mel_lengths, sigma=0.2)


def test_guided_attention_pulls_the_attention_to_the_diagonal():
    torch.manual_seed(0)
    plain, guided = tiny_model().train(), tiny_model().train()
    guided.load_state_dict(plain.state_dict())
    text, text_lengths, mels, mel_lengths, _, _ = batch(lengths_text=(12, 9), lengths_mel=(40, 30))
    gate = gate_targets(mel_lengths, mels.shape[2])
    figures = {}
    for name, model, weight in (("plain", plain, 0.0), ("guided", guided, 10.0)):
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
        for _ in range(20):
            torch.manual_seed(0)
            terms = tacotron2_loss(
                model(text, text_lengths, mels, mel_lengths), mels, gate, text_lengths, mel_lengths,
                attention_weight=weight,
            )  # fmt: skip
            optimizer.zero_grad()
            terms.total.backward()
            optimizer.step()
        figures[name] = float(terms.attention.detach())
    assert figures["guided"] < 0.5 * figures["plain"], figures


def test_a_few_training_steps_lower_the_loss():
    model = tiny_model(mask_padding=True).train()
    text, text_lengths, mels, mel_lengths, _, _ = batch()
    gate = gate_targets(mel_lengths, mels.shape[2])
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    losses = []
    for _ in range(6):
        torch.manual_seed(0)  # the same dropout masks every step
        terms = tacotron2_loss(model(text, text_lengths, mels, mel_lengths), mels, gate, text_lengths, mel_lengths)
        optimizer.zero_grad()
        terms.total.backward()
        optimizer.step()
        losses.append(float(terms.total.detach()))
    assert all(torch.isfinite(torch.tensor(losses)))
    assert losses[-1] < 0.9 * losses[0]


# --------------------------------------------------------------------------------------------------
# inference
# --------------------------------------------------------------------------------------------------


def set_gate(model: Tacotron2, bias: float, weight_scale: float = 0.0) -> Tacotron2:
    layer = model.decoder.gate_layer.linear_layer
    with torch.no_grad():
        layer.weight.mul_(weight_scale)
        layer.bias.fill_(bias)
    return model


def test_inference_stops_when_the_gate_fires():
    model = set_gate(tiny_model(), bias=10.0)
    text, text_lengths, *_ = batch()
    result = model.infer(text, text_lengths)
    assert result.mel.shape == (3, TINY["n_mel_channels"], 1)
    assert result.mel_lengths.tolist() == [1, 1, 1]
    assert result.stopped.all()
    assert result.gate.shape == (3, 1) and result.alignments.shape == (3, 1, 7)


def test_inference_that_never_stops_is_cut_with_a_warning(caplog):
    model = set_gate(tiny_model(), bias=-10.0)
    text, text_lengths, *_ = batch()
    with caplog.at_level(logging.WARNING):
        result = model.infer(text[:2], text_lengths[:2], max_decoder_steps=7)
    assert result.mel.shape[2] == 7 and result.mel_lengths.tolist() == [7, 7]
    assert not result.stopped.any()
    assert "never fired for 2 of 2" in caplog.text and "max_decoder_steps=7" in caplog.text
    # The config's limit is the default.
    model = set_gate(tiny_model(max_decoder_steps=4), bias=-10.0)
    assert model.infer(text[:1], text_lengths[:1]).mel.shape[2] == 4


def test_without_early_stopping_inference_runs_to_the_limit():
    model = set_gate(tiny_model(decoder_no_early_stopping=True, max_decoder_steps=5), bias=10.0)
    text, text_lengths, *_ = batch()
    result = model.infer(text, text_lengths)
    assert result.mel.shape[2] == 5 and result.mel_lengths.tolist() == [1, 1, 1] and result.stopped.all()


def test_batched_inference_gives_each_item_what_it_gives_alone():
    """On the fixture model with a sharper gate, the three items stop on different steps; a batch
    gives each item its frames alone (up to its length)."""
    model = set_gate(nvidia_model(p_prenet_dropout=0.0), bias=-1.5, weight_scale=30.0)
    ref = reference()
    text, lengths = ref["text"], ref["text_lengths"]
    together = model.infer(text, lengths, max_decoder_steps=40, gate_threshold=0.5175)
    assert together.stopped.all()
    assert len(set(together.mel_lengths.tolist())) > 1, together.mel_lengths
    for i in range(len(text)):
        alone = model.infer(text[i : i + 1, : lengths[i]], max_decoder_steps=40, gate_threshold=0.5175)
        n = int(alone.mel_lengths[0])
        assert n == int(together.mel_lengths[i])
        torch.testing.assert_close(together.mel[i, :, :n], alone.mel[0, :, :n], rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(
            together.alignments[i, :n, : lengths[i]], alone.alignments[0, :n], rtol=1e-5, atol=1e-5
        )


# --------------------------------------------------------------------------------------------------
# several frames per decoder step (the reduction factor, not NVIDIA's recipe)
# --------------------------------------------------------------------------------------------------


def test_with_three_frames_a_step_the_outputs_are_still_per_frame():
    model = tiny_model(n_frames_per_step=3)
    text, text_lengths, mels, mel_lengths, _, _ = batch()  # 11 frames: the last step has 2
    with torch.no_grad():
        out = model(text, text_lengths, mels, mel_lengths)
    b, n_mels, t = mels.shape
    assert out.mel.shape == out.mel_postnet.shape == (b, n_mels, t) and out.gate.shape == (b, t)
    assert out.alignments.shape == (b, t, int(text_lengths.max()))
    torch.testing.assert_close(out.alignments.sum(2), torch.ones(b, t))
    # one gate and one attention per step, on each of its frames; steps differ
    for first in range(0, t, 3):
        group = slice(first, min(first + 3, t))
        assert (out.gate[:, group] == out.gate[:, first : first + 1]).all()
        assert (out.alignments[:, group] == out.alignments[:, first : first + 1]).all()
    assert not torch.equal(out.alignments[:, 0], out.alignments[:, 3])
    assert not torch.equal(out.mel[:, :, 0], out.mel[:, :, 1])


@pytest.mark.parametrize("frames_per_step", [1, 2, 3])
def test_teacher_forcing_reads_the_frames_of_the_step_before(frames_per_step):
    """Fed the frames free-running decoding made, the teacher-forced decoder makes them again: both
    group a step's frames the same way and read the step before's."""
    model = tiny_model(n_frames_per_step=frames_per_step)
    text, text_lengths, *_ = batch()
    with torch.no_grad():
        memory = model._encode(text, text_lengths)
        mel, gate, alignments, lengths, _ = model.decoder.infer(
            memory, text_lengths, max_decoder_steps=12, gate_threshold=0.5, early_stopping=False
        )
        assert mel.shape[2] == 12 and gate.shape[1] == 12
        forced_mel, forced_gate, forced_alignments = model.decoder(memory, mel, text_lengths)
    torch.testing.assert_close(forced_mel, mel, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(forced_gate, gate, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(forced_alignments, alignments, rtol=1e-5, atol=1e-6)


def test_stop_targets_cover_the_whole_step_that_holds_the_last_frame():
    # three frames a step: a last frame at index 4 or 5 is in the step of frames 3-5
    expected = torch.tensor([[0, 0, 0, 1, 1, 1, 1], [0, 0, 0, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1, 1]], dtype=torch.float32)
    torch.testing.assert_close(gate_targets(torch.tensor([5, 6, 3]), 7, frames_per_step=3), expected)
    assert gate_targets(torch.tensor([7]), 7, frames_per_step=3).tolist() == [[0, 0, 0, 0, 0, 0, 1]]


def test_inference_with_three_frames_a_step_counts_whole_steps():
    model = set_gate(tiny_model(n_frames_per_step=3), bias=10.0)
    text, text_lengths, *_ = batch()
    result = model.infer(text, text_lengths)
    assert result.mel.shape == (3, TINY["n_mel_channels"], 3) and result.mel_lengths.tolist() == [3, 3, 3]
    assert result.alignments.shape == (3, 3, 7)
    # the frame limit is rounded up to whole steps
    model = set_gate(tiny_model(n_frames_per_step=3), bias=-10.0)
    cut = model.infer(text[:1], text_lengths[:1], max_decoder_steps=7)
    assert cut.mel.shape[2] == 9 and cut.mel_lengths.tolist() == [9] and not cut.stopped.any()


def test_a_few_training_steps_with_two_frames_a_step_lower_the_loss():
    model = tiny_model(mask_padding=True, n_frames_per_step=2).train()
    text, text_lengths, mels, mel_lengths, _, _ = batch()
    gate = gate_targets(mel_lengths, mels.shape[2], frames_per_step=2)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    losses = []
    for _ in range(15):
        torch.manual_seed(0)
        terms = tacotron2_loss(model(text, text_lengths, mels, mel_lengths), mels, gate, text_lengths, mel_lengths)
        optimizer.zero_grad()
        terms.total.backward()
        optimizer.step()
        losses.append(float(terms.total.detach()))
    assert losses[-1] < 0.8 * losses[0]


# --------------------------------------------------------------------------------------------------
# parity with NVIDIA's code (tests/fixtures/nvidia_tacotron2)
# --------------------------------------------------------------------------------------------------


def max_diff(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a - b).abs().max())


def test_nvidias_checkpoint_gives_nvidias_teacher_forced_outputs():
    ref = reference()
    model = nvidia_model(padding_invariant=False, p_prenet_dropout=0.0)
    with torch.no_grad():
        out = model(ref["text"], ref["text_lengths"], ref["mels"], ref["mel_lengths"])
    for name in ("mel", "mel_postnet", "gate", "alignments"):
        assert max_diff(getattr(out, name), ref[name]) < 1e-5, name
    gate = gate_targets(ref["mel_lengths"], ref["mels"].shape[2])
    loss = tacotron2_loss(out, ref["mels"], gate, ref["text_lengths"], ref["mel_lengths"])
    torch.testing.assert_close(gate_targets(ref["mel_lengths"], 20), ref["gate_target"])
    torch.testing.assert_close(loss.total, ref["loss"], rtol=1e-6, atol=1e-6)


def test_the_padding_invariant_default_agrees_with_nvidia_on_the_longest_item():
    """The longest item reads no padding, so the project's default gives it NVIDIA's outputs; the
    shorter ones differ near their ends, where NVIDIA's outputs depend on the batch."""
    ref = reference()
    model = nvidia_model(p_prenet_dropout=0.0)
    assert model.cfg.padding_invariant
    with torch.no_grad():
        out = model(ref["text"], ref["text_lengths"], ref["mels"], ref["mel_lengths"])
    assert max_diff(out.mel_postnet[0], ref["mel_postnet"][0]) < 1e-5
    assert max_diff(out.alignments[0], ref["alignments"][0]) < 1e-5
    assert max_diff(out.mel_postnet[1:], ref["mel_postnet"][1:]) > 1e-3


def test_nvidias_prenet_dropout_is_reproduced_with_the_same_seed():
    ref = reference()
    if ref["torch_version"].split("+")[0] != torch.__version__.split("+")[0]:
        pytest.skip(f"the dropout reference was drawn by torch {ref['torch_version']}")
    model = nvidia_model(padding_invariant=False)
    assert model.cfg.p_prenet_dropout == 0.5
    torch.manual_seed(2024)
    with torch.no_grad():
        out = model(ref["text"], ref["text_lengths"], ref["mels"], ref["mel_lengths"])
    for name in ("mel", "mel_postnet", "gate", "alignments"):
        assert max_diff(getattr(out, name), ref[f"dropout_{name}"]) < 1e-5, name


def test_nvidias_checkpoint_gives_nvidias_inference():
    ref = reference()
    model = nvidia_model(padding_invariant=False, p_prenet_dropout=0.0)
    result = model.infer(ref["text"], ref["text_lengths"], max_decoder_steps=40)
    assert result.mel.shape == ref["infer_mel_postnet"].shape
    assert max_diff(result.mel, ref["infer_mel_postnet"]) < 1e-5
    assert max_diff(result.alignments, ref["infer_alignments"]) < 1e-5
    # NVIDIA counts the frames before the one on which the gate fires; this project counts that one too.
    assert result.mel_lengths.tolist() == (ref["infer_lengths"] + 1).tolist()


# --------------------------------------------------------------------------------------------------
# model files and NVIDIA's checkpoints
# --------------------------------------------------------------------------------------------------


def test_nvidias_training_checkpoint_loads_as_it_is():
    model, info = load_tacotron2(CHECKPOINT)
    assert not model.training
    assert info.epoch == 0 and info.extra["source_format"].startswith("NVIDIA")
    assert info.model_config["mask_padding"] is True and info.model_config["decoder_rnn_dim"] == 48


def test_an_ngc_style_file_with_a_ddp_prefix_and_half_weights_loads(tmp_path):
    checkpoint = torch.load(CHECKPOINT, weights_only=True)
    ngc = {
        "state_dict": {
            f"module.{name}": t.half() if t.is_floating_point() else t for name, t in checkpoint["state_dict"].items()
        },
        "config": checkpoint["config"],
    }
    torch.save(ngc, tmp_path / "nvidia_tacotron2pyt_fp16.pt")
    model, _ = load_tacotron2(tmp_path / "nvidia_tacotron2pyt_fp16.pt")
    for name, tensor in model.state_dict().items():
        expected = checkpoint["state_dict"][name]
        assert tensor.dtype == expected.dtype, name
        if tensor.is_floating_point():
            torch.testing.assert_close(tensor, expected.half().float(), rtol=0, atol=0)


def test_weights_that_do_not_fit_are_named(tmp_path):
    checkpoint = torch.load(CHECKPOINT, weights_only=True)
    state = dict(checkpoint["state_dict"])
    del state["postnet.convolutions.4.1.running_var"]
    state["decoder.extra.weight"] = torch.zeros(1)
    state["embedding.weight"] = torch.zeros(100, 32)
    torch.save({**checkpoint, "state_dict": state}, tmp_path / "broken.pt")
    with pytest.raises(UserError) as error:
        load_tacotron2(tmp_path / "broken.pt")
    message = str(error.value)
    assert "broken.pt" in message
    assert "missing: postnet.convolutions.4.1.running_var" in message
    assert "unexpected: decoder.extra.weight" in message
    assert "embedding.weight (100, 32) (expected (148, 32))" in message


def test_a_config_tacotron2_does_not_have_is_named(tmp_path):
    checkpoint = torch.load(CHECKPOINT, weights_only=True)
    torch.save({**checkpoint, "config": {**checkpoint["config"], "n_speakers": 4}}, tmp_path / "multi.pt")
    with pytest.raises(UserError, match=r"multi\.pt: .*unknown keys \['n_speakers'\]"):
        load_tacotron2(tmp_path / "multi.pt")


def test_other_files_are_refused_with_the_accepted_formats(tmp_path):
    torch.save({"state_dict": {"encoder.word_emb.weight": torch.zeros(2, 2)}, "config": {}}, tmp_path / "fp.pt")
    with pytest.raises(UserError, match=r"fp\.pt: not a Tacotron 2 checkpoint; accepted: .*NVIDIA"):
        load_tacotron2(tmp_path / "fp.pt")
    save_model_file(tmp_path / "other.pt", torch.nn.Linear(2, 2), {}, 0, {"kind": "aligner"})
    with pytest.raises(UserError, match=r"other\.pt: a model file of another model \(aligner\)"):
        load_tacotron2(tmp_path / "other.pt")
    with pytest.raises(UserError, match="not found"):
        load_tacotron2(tmp_path / "missing.pt")


def test_a_model_file_round_trips(tmp_path):
    model = tiny_model(mask_padding=True)
    save_tacotron2(tmp_path / "model.pt", model, step=12, epoch=3, extra={"symbol_set": "english_basic"})
    loaded, info = load_tacotron2(tmp_path / "model.pt")
    assert (info.step, info.epoch, info.extra["symbol_set"]) == (12, 3, "english_basic")
    assert info.model_config == dataclasses.asdict(model.cfg)
    text, text_lengths, mels, mel_lengths, _, _ = batch()
    with torch.no_grad():
        a, b = model(text, text_lengths, mels, mel_lengths), loaded(text, text_lengths, mels, mel_lengths)
    torch.testing.assert_close(a.mel_postnet, b.mel_postnet, rtol=0, atol=0)


# --------------------------------------------------------------------------------------------------
# the attention prior (not NVIDIA's; off by default)
# --------------------------------------------------------------------------------------------------


def flat_attention(model: Tacotron2) -> Tacotron2:
    """Zero the attention's output layer: every energy is 0, so the weights are the prior's alone."""
    with torch.no_grad():
        model.decoder.attention_layer.v.linear_layer.weight.zero_()
    return model


def test_the_prior_is_off_by_default_and_leaves_nvidias_forward_alone():
    cfg = Tacotron2Config()
    assert (cfg.attention_prior_scaling, cfg.attention_prior_frames_per_symbol) == (0.0, 0.0)
    assert nvidia_model().cfg.attention_prior_scaling == 0.0  # NVIDIA's files load without it
    text, text_lengths, mels, mel_lengths, _, _ = batch()
    with torch.no_grad():
        plain = tiny_model()(text, text_lengths, mels, mel_lengths)
        # The prior's inference setting alone does nothing without its scaling.
        unused = tiny_model(attention_prior_frames_per_symbol=3.0)(text, text_lengths, mels, mel_lengths)
    torch.testing.assert_close(plain.alignments, unused.alignments, rtol=0, atol=0)


def test_the_log_prior_multiplies_the_attention_weights():
    model = tiny_model()
    attention = model.decoder.attention_layer
    torch.manual_seed(3)
    memory = torch.randn(2, 5, TINY["encoder_embedding_dim"])
    query = torch.randn(2, TINY["attention_rnn_dim"])
    previous = torch.rand(2, 2, 5)
    padded = torch.tensor([[False] * 5, [False] * 3 + [True] * 2])
    prior = torch.rand(2, 5) + 0.1
    with torch.no_grad():
        processed = attention.memory_layer(memory)
        _, plain = attention(query, memory, processed, previous, padded)
        _, with_prior = attention(query, memory, processed, previous, padded, torch.log(prior))
    expected = plain * prior
    expected = expected / expected.sum(1, keepdim=True)
    torch.testing.assert_close(with_prior, expected)
    assert (with_prior[1, 3:] == 0).all()


def test_teacher_forced_log_prior_is_the_beta_binomial_and_constant_on_padded_frames():
    from tts_pipeline.models.aligner.prior import beta_binomial_prior
    from tts_pipeline.models.tacotron2.attention import teacher_forced_log_prior

    log_prior = teacher_forced_log_prior(torch.tensor([4, 6]), torch.tensor([9, 5]), 9, 6, 1.0)
    assert log_prior.shape == (2, 9, 6) and log_prior.dtype == torch.float32
    torch.testing.assert_close(
        log_prior[0, :, :4].exp(), torch.from_numpy(beta_binomial_prior(9, 4)), atol=1e-6, rtol=0
    )
    # A padded frame's row is the same for every symbol: its softmax is not changed.
    assert (log_prior[1, 5:] == log_prior[1, 5, 0]).all()
    # The mass slides from the first symbol to the last.
    assert log_prior[0, 0].argmax() == 0 and log_prior[0, -1, :4].argmax() == 3


def test_with_the_prior_the_teacher_forced_attention_follows_it():
    from tts_pipeline.models.aligner.prior import beta_binomial_prior

    text, text_lengths, mels, mel_lengths, _, _ = batch()
    with torch.no_grad():
        out = flat_attention(tiny_model(attention_prior_scaling=1.0))(text, text_lengths, mels, mel_lengths)
        # Without mel lengths there is no prior: the flat energies give uniform weights.
        blind = flat_attention(tiny_model(attention_prior_scaling=1.0))(text, text_lengths, mels)
    for i, (n, t) in enumerate(zip(text_lengths.tolist(), mel_lengths.tolist(), strict=True)):
        expected = torch.from_numpy(beta_binomial_prior(t, n)) + 1e-8
        torch.testing.assert_close(out.alignments[i, :t, :n], expected / expected.sum(1, keepdim=True))
        torch.testing.assert_close(blind.alignments[i, :, :n], torch.full((mels.shape[2], n), 1.0 / n))
    # Trained attention with the prior: less mass off the diagonal than the same weights without it.
    with torch.no_grad():
        plain = tiny_model()(text, text_lengths, mels, mel_lengths)
        guided = tiny_model(attention_prior_scaling=1.0)(text, text_lengths, mels, mel_lengths)
    off = [float(off_diagonal_attention(o.alignments, text_lengths, mel_lengths, 0.2)) for o in (plain, guided)]
    assert off[1] < 0.7 * off[0], off


def test_expected_length_log_prior_holds_the_last_row():
    from tts_pipeline.models.aligner.prior import beta_binomial_prior
    from tts_pipeline.models.tacotron2.attention import expected_length_log_prior

    log_prior = expected_length_log_prior(torch.tensor([4, 2]), 4, frames_per_symbol=2.0, scaling=1.0)
    assert log_prior.shape == (2, 8, 4)  # 2 x 4 frames expected for the longest item
    torch.testing.assert_close(log_prior[0].exp(), torch.from_numpy(beta_binomial_prior(8, 4)) + 1e-8)
    torch.testing.assert_close(log_prior[1, :4, :2].exp(), torch.from_numpy(beta_binomial_prior(4, 2)) + 1e-8)
    assert (log_prior[1, 4:, :2] == log_prior[1, 3, :2]).all()


def test_free_running_uses_the_prior_only_with_an_expected_pace():
    from tts_pipeline.models.aligner.prior import beta_binomial_prior

    text, text_lengths, *_ = batch(lengths_text=(4,), lengths_mel=(9,))
    steps = 12
    with torch.no_grad():
        without = set_gate(flat_attention(tiny_model(attention_prior_scaling=1.0)), bias=-10.0)
        out = without.infer(text, text_lengths, max_decoder_steps=steps)
        torch.testing.assert_close(out.alignments[0], torch.full((steps, 4), 0.25))
        paced = tiny_model(attention_prior_scaling=1.0, attention_prior_frames_per_symbol=2.0)
        out = set_gate(flat_attention(paced), bias=-10.0).infer(text, text_lengths, max_decoder_steps=steps)
    expected = torch.from_numpy(beta_binomial_prior(8, 4)) + 1e-8
    expected = expected / expected.sum(1, keepdim=True)
    torch.testing.assert_close(out.alignments[0, :8], expected)
    # Past the expected 8 frames the decoder keeps to the last row: attention on the last symbol.
    torch.testing.assert_close(out.alignments[0, 8:], expected[-1].expand(steps - 8, 4))


def test_bad_prior_settings_are_rejected():
    with pytest.raises(ValueError, match="attention_prior_scaling must be >= 0"):
        Tacotron2Config(attention_prior_scaling=-1.0)
    with pytest.raises(ValueError, match="attention_prior_frames_per_symbol must be >= 0"):
        Tacotron2Config(attention_prior_frames_per_symbol=-2.0)


def test_a_model_file_keeps_the_prior(tmp_path):
    model = tiny_model(attention_prior_scaling=0.5, attention_prior_frames_per_symbol=6.5)
    save_tacotron2(tmp_path / "model.pt", model, step=1, epoch=1)
    loaded, info = load_tacotron2(tmp_path / "model.pt")
    assert (loaded.cfg.attention_prior_scaling, loaded.cfg.attention_prior_frames_per_symbol) == (0.5, 6.5)


def test_the_prior_weight_scales_the_log_prior_and_zero_turns_it_off():
    from tts_pipeline.models.aligner.prior import beta_binomial_prior

    text, text_lengths, mels, mel_lengths, _, _ = batch()
    model = flat_attention(tiny_model(attention_prior_scaling=1.0))
    model.set_attention_prior_weight(0.5)
    assert model.cfg.attention_prior_weight == 0.5 and model.model_config()["attention_prior_weight"] == 0.5
    with torch.no_grad():
        half = model(text, text_lengths, mels, mel_lengths)
        model.set_attention_prior_weight(0.0)
        off = model(text, text_lengths, mels, mel_lengths)
    assert not model.uses_prior()
    n, t = int(text_lengths[0]), int(mel_lengths[0])
    expected = (torch.from_numpy(beta_binomial_prior(t, n)) + 1e-8).sqrt()
    torch.testing.assert_close(half.alignments[0, :t, :n], expected / expected.sum(1, keepdim=True))
    torch.testing.assert_close(off.alignments[0, :t, :n], torch.full((t, n), 1.0 / n))
