"""FastPitch 1.1: parameter counts and state-dict names of the reference, shapes, padding invariance,
the length regulator, inference options, the loss, a few real training steps, and the config section."""

from __future__ import annotations

import copy
import math

import pytest
import torch
import yaml

from tts_pipeline.config import FASTPITCH_MODEL_FIELDS, ConfigError, FastPitchConfig, load_config, parse_config
from tts_pipeline.models.fastpitch import (
    FastPitch,
    FastPitchInputs,
    FastPitchOutput,
    PitchTransform,
    config_from_nvidia,
    convert_state_dict,
    fastpitch_loss,
    length_regulate,
)
from tts_pipeline.models.model_file import load_model_file, save_model_file

from ..conftest import REPO

# A tiny model that still has every part: 2 heads, 2 layers per stack, energy conditioning, dropout.
TINY = {
    "symbols_embedding_dim": 32,
    "in_fft_output_size": 32,
    "out_fft_output_size": 32,
    "in_fft_n_layers": 2,
    "out_fft_n_layers": 2,
    "in_fft_n_heads": 2,
    "out_fft_n_heads": 2,
    "in_fft_d_head": 8,
    "out_fft_d_head": 8,
    "in_fft_conv1d_filter_size": 64,
    "out_fft_conv1d_filter_size": 64,
    "dur_predictor_filter_size": 16,
    "pitch_predictor_filter_size": 16,
    "energy_predictor_filter_size": 16,
    "max_duration": 20,
}
N_SYMBOLS, N_MELS = 20, 12


pytestmark = pytest.mark.usefixtures("one_thread")


def count(module: torch.nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


def tiny_model(seed: int = 0, **overrides) -> FastPitch:
    torch.manual_seed(seed)
    return FastPitch(FastPitchConfig(**{**TINY, **overrides}), N_SYMBOLS, N_MELS, pitch_mean=200.0, pitch_std=50.0)


def make_batch(token_lengths: list[int], durations: list[list[int]] | None = None, seed: int = 0) -> FastPitchInputs:
    """A zero-padded batch with random symbols, durations (1..4 unless given), pitch and energy."""
    generator = torch.Generator().manual_seed(seed)
    batch, width = len(token_lengths), max(token_lengths)
    tokens = torch.zeros(batch, width, dtype=torch.long)
    dur = torch.zeros(batch, width, dtype=torch.long)
    pitch, energy = torch.zeros(batch, width), torch.zeros(batch, width)
    for b, length in enumerate(token_lengths):
        tokens[b, :length] = torch.randint(1, N_SYMBOLS, (length,), generator=generator)
        if durations is None:
            dur[b, :length] = torch.randint(1, 5, (length,), generator=generator)
        else:
            dur[b, :length] = torch.tensor(durations[b])
        pitch[b, :length] = torch.randn(length, generator=generator)
        energy[b, :length] = torch.rand(length, generator=generator) * 3
    return FastPitchInputs(tokens, torch.tensor(token_lengths), dur, pitch, energy)


def item(inputs: FastPitchInputs, b: int) -> FastPitchInputs:
    """Item ``b`` of a batch alone, without padding."""
    length = int(inputs.token_lengths[b])
    return FastPitchInputs(
        inputs.tokens[b : b + 1, :length],
        inputs.token_lengths[b : b + 1],
        inputs.durations[b : b + 1, :length],
        inputs.pitch[b : b + 1, :length],
        None if inputs.energy is None else inputs.energy[b : b + 1, :length],
    )


# --------------------------------------------------------------------------------------------------
# the reference's sizes and names (section 6.3)
# --------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def recipe_model() -> FastPitch:
    return FastPitch(FastPitchConfig(), n_symbols=148, n_mels=80, pitch_mean=214.72203, pitch_std=65.72038)


def test_recipe_parameter_counts_match_the_reference(recipe_model: FastPitch) -> None:
    assert count(recipe_model) == 45_261_395
    assert count(recipe_model.encoder) == 21_902_208
    assert count(recipe_model.encoder.word_emb) == 56_832
    assert count(recipe_model.decoder) == 21_845_376
    for predictor in (recipe_model.duration_predictor, recipe_model.pitch_predictor, recipe_model.energy_predictor):
        assert count(predictor) == 493_313
    assert count(recipe_model.pitch_emb) == count(recipe_model.energy_emb) == 1_536
    assert count(recipe_model.proj) == 30_800
    without_energy = FastPitch(FastPitchConfig(energy_conditioning=False), n_symbols=148, n_mels=80)
    assert count(without_energy) == 44_766_546
    assert not any(name.startswith("energy_") for name in without_energy.state_dict())


def _reference_state_dict_shapes() -> dict[str, tuple[int, ...]]:
    """Every key and shape of NVIDIA's FastPitch 1.1 inference state dict (energy on), from section 6.3."""
    shapes: dict[str, tuple[int, ...]] = {"pitch_mean": (1,), "pitch_std": (1,), "encoder.word_emb.weight": (148, 384)}
    for stack in ("encoder", "decoder"):
        shapes[f"{stack}.pos_emb.inv_freq"] = (192,)
        for n in range(6):
            layer = f"{stack}.layers.{n}"
            shapes |= {
                f"{layer}.dec_attn.qkv_net.weight": (192, 384),
                f"{layer}.dec_attn.qkv_net.bias": (192,),
                f"{layer}.dec_attn.o_net.weight": (384, 64),
                f"{layer}.dec_attn.layer_norm.weight": (384,),
                f"{layer}.dec_attn.layer_norm.bias": (384,),
                f"{layer}.pos_ff.CoreNet.0.weight": (1536, 384, 3),
                f"{layer}.pos_ff.CoreNet.0.bias": (1536,),
                f"{layer}.pos_ff.CoreNet.2.weight": (384, 1536, 3),
                f"{layer}.pos_ff.CoreNet.2.bias": (384,),
                f"{layer}.pos_ff.layer_norm.weight": (384,),
                f"{layer}.pos_ff.layer_norm.bias": (384,),
            }
    for predictor in ("duration_predictor", "pitch_predictor", "energy_predictor"):
        for n, in_channels in enumerate((384, 256)):
            shapes |= {
                f"{predictor}.layers.{n}.conv.weight": (256, in_channels, 3),
                f"{predictor}.layers.{n}.conv.bias": (256,),
                f"{predictor}.layers.{n}.norm.weight": (256,),
                f"{predictor}.layers.{n}.norm.bias": (256,),
            }
        shapes |= {f"{predictor}.fc.weight": (1, 256), f"{predictor}.fc.bias": (1,)}
    for embedding in ("pitch_emb", "energy_emb"):
        shapes |= {f"{embedding}.weight": (384, 1, 3), f"{embedding}.bias": (384,)}
    return shapes | {"proj.weight": (80, 384), "proj.bias": (80,)}


def test_state_dict_names_and_shapes_are_nvidias(recipe_model: FastPitch) -> None:
    ours = {name: tuple(tensor.shape) for name, tensor in recipe_model.state_dict().items()}
    assert ours == _reference_state_dict_shapes()
    state = recipe_model.state_dict()
    assert state["pitch_mean"].item() == pytest.approx(214.72203)
    assert state["pitch_std"].item() == pytest.approx(65.72038)
    # inv_freq = 1 / 10000^(2i / 384), i = 0..191
    expected = 1.0 / 10000.0 ** (torch.arange(192, dtype=torch.float64) * 2 / 384)
    torch.testing.assert_close(state["encoder.pos_emb.inv_freq"].double(), expected, rtol=1e-6, atol=0)


def test_positional_embedding_is_concatenated_sin_cos(recipe_model: FastPitch) -> None:
    table = recipe_model.encoder.pos_emb(5)
    assert table.shape == (5, 384)
    inv_freq = recipe_model.encoder.pos_emb.inv_freq
    position = 3.0
    torch.testing.assert_close(table[3, :192], torch.sin(position * inv_freq))
    torch.testing.assert_close(table[3, 192:], torch.cos(position * inv_freq))


def test_nvidia_checkpoint_loads_after_conversion() -> None:
    source = tiny_model(seed=1)
    nvidia_state = {f"module.{name}": tensor.clone() for name, tensor in source.state_dict().items()}
    nvidia_state["module.attention.key_proj.0.conv.weight"] = torch.zeros(3)  # training-only aligner
    nvidia_config = {key: value for key, value in source.model_config().items() if key in FASTPITCH_MODEL_FIELDS}
    del nvidia_config["max_duration"]  # not one of NVIDIA's constructor arguments
    nvidia_config |= {"n_mel_channels": N_MELS, "n_symbols": N_SYMBOLS, "padding_idx": 0, "n_speakers": 1}
    model = FastPitch.from_config(config_from_nvidia(nvidia_config))
    model.load_state_dict(convert_state_dict(nvidia_state))  # strict
    assert model.max_duration == 75
    assert config_from_nvidia({**nvidia_config, "n_speakers": 4})["n_speakers"] == 4
    old = {key: value for key, value in nvidia_config.items() if key != "energy_conditioning"}
    assert config_from_nvidia(old)["energy_conditioning"] is False  # NVIDIA's loader default


# --------------------------------------------------------------------------------------------------
# teacher-forced forward
# --------------------------------------------------------------------------------------------------


def test_forward_shapes_and_lengths_equal_the_sum_of_durations() -> None:
    model = tiny_model().eval()
    # 7, 13 and 1 frames: odd totals, and a one-frame utterance
    inputs = make_batch([3, 5, 1], durations=[[2, 0, 5], [1, 2, 3, 4, 3], [1]])
    output = model(inputs)
    assert isinstance(output, FastPitchOutput)
    assert output.mel_lengths.tolist() == [7, 13, 1]
    assert output.mel.shape == (3, N_MELS, 13)
    assert output.log_duration.shape == output.pitch.shape == output.energy.shape == (3, 5)
    assert output.token_mask.tolist() == [[True] * 3 + [False] * 2, [True] * 5, [True] + [False] * 4]
    for b, length in enumerate(output.mel_lengths.tolist()):
        assert bool(output.mel[b, :, length:].eq(0).all()), "padded frames must be zero"
        assert bool(output.mel[b, :, :length].ne(0).any())
    masked = ~output.token_mask
    for name in ("log_duration", "pitch", "energy"):
        assert bool(getattr(output, name)[masked].eq(0).all()), name
    cut = model(inputs, mel_max_len=6)
    assert cut.mel.shape == (3, N_MELS, 6) and cut.mel_lengths.tolist() == [6, 6, 1]
    longer = model(inputs, mel_max_len=16)
    assert longer.mel.shape == (3, N_MELS, 16)
    torch.testing.assert_close(longer.mel[..., :13], output.mel)


def test_an_utterance_gives_the_same_output_alone_and_in_a_padded_batch() -> None:
    model = tiny_model(seed=3).eval()
    inputs = make_batch([4, 9, 1, 6], seed=5)
    with torch.no_grad():
        batched = model(inputs)
    for b in range(4):
        with torch.no_grad():
            alone = model(item(inputs, b))
        length, frames = int(inputs.token_lengths[b]), int(batched.mel_lengths[b])
        assert int(alone.mel_lengths[0]) == frames
        torch.testing.assert_close(batched.mel[b, :, :frames], alone.mel[0], atol=1e-5, rtol=0)
        for name in ("log_duration", "pitch", "energy"):
            torch.testing.assert_close(
                getattr(batched, name)[b, :length], getattr(alone, name)[0], atol=1e-5, rtol=0, msg=name
            )


def test_inference_is_padding_invariant_too() -> None:
    model = tiny_model(seed=4).eval()
    with torch.no_grad():
        model.duration_predictor.fc.bias.fill_(1.5)  # about 3.5 frames per token
    inputs = make_batch([7, 2, 5], seed=6)
    batched = model.infer(inputs.tokens, inputs.token_lengths, pace=1.3)
    for b in range(3):
        alone = model.infer(item(inputs, b).tokens, item(inputs, b).token_lengths, pace=1.3)
        frames = int(batched.mel_lengths[b])
        assert int(alone.mel_lengths[0]) == frames > 0
        torch.testing.assert_close(batched.mel[b, :, :frames], alone.mel[0], atol=1e-5, rtol=0)


def test_training_mode_uses_dropout_and_energy_is_required() -> None:
    model = tiny_model()
    inputs = make_batch([5, 3])
    torch.manual_seed(0)
    first = model(inputs).mel
    torch.manual_seed(1)
    assert not torch.allclose(first, model(inputs).mel)
    with pytest.raises(ValueError, match="energy"):
        model(inputs._replace(energy=None))
    no_energy = tiny_model(energy_conditioning=False)
    assert no_energy(inputs._replace(energy=None)).energy is None


def test_bad_inputs_are_rejected_with_the_name_of_the_tensor() -> None:
    model = tiny_model()
    inputs = make_batch([5, 3])
    with pytest.raises(ValueError, match="pitch"):
        model(inputs._replace(pitch=inputs.pitch[:, :4]))
    with pytest.raises(ValueError, match="token_lengths"):
        model(inputs._replace(token_lengths=torch.tensor([6, 3])))
    with pytest.raises(ValueError, match="durations"):
        model(inputs._replace(durations=inputs.durations.float()))


# --------------------------------------------------------------------------------------------------
# length regulator
# --------------------------------------------------------------------------------------------------


def test_length_regulate_repeats_each_token_for_its_frames() -> None:
    encoded = torch.tensor([[[1.0], [2.0], [3.0]], [[4.0], [5.0], [0.0]]])  # (2, 3, 1)
    durations = torch.tensor([[2, 0, 3], [1, 1, 0]])
    frames, lengths = length_regulate(encoded, durations)
    assert lengths.tolist() == [5, 2]
    assert frames.squeeze(2).tolist() == [[1, 1, 3, 3, 3], [4, 5, 0, 0, 0]]


@pytest.mark.parametrize(
    ("pace", "durations", "expected"),
    [
        (0.5, [1, 2, 3], [2, 4, 6]),  # half speed: twice the frames
        (2.0, [1, 3, 5], [1, 2, 3]),  # floor(0.5 + 0.5), floor(1.5 + 0.5), floor(2.5 + 0.5): halves round up
        (2.0, [2, 4, 1.4], [1, 2, 1]),  # float durations (predictions): floor(0.7 + 0.5) = 1
        (1.5, [3, 2, 4], [2, 1, 3]),  # floor(2.5), floor(1.83), floor(3.17)
    ],
)
def test_pace_rounds_half_up(pace: float, durations: list[float], expected: list[int]) -> None:
    encoded = torch.arange(3.0).view(1, 3, 1)
    frames, lengths = length_regulate(encoded, torch.tensor([durations]), pace=pace)
    assert lengths.tolist() == [sum(expected)]
    expected_frames = [float(token) for token, repeat in enumerate(expected) for _ in range(repeat)]
    assert frames[0, :, 0].tolist() == expected_frames


def test_mel_max_len_cuts_and_pads() -> None:
    encoded = torch.ones(2, 2, 4)
    durations = torch.tensor([[3, 4], [1, 1]])
    frames, lengths = length_regulate(encoded, durations, mel_max_len=5)
    assert frames.shape == (2, 5, 4) and lengths.tolist() == [5, 2]
    assert frames[1, 2:].abs().sum() == 0
    frames, lengths = length_regulate(encoded, durations, mel_max_len=9)
    assert frames.shape == (2, 9, 4) and lengths.tolist() == [7, 2]
    assert frames[0, 7:].abs().sum() == 0
    with pytest.raises(ValueError, match="pace"):
        length_regulate(encoded, durations, pace=0.0)


# --------------------------------------------------------------------------------------------------
# inference
# --------------------------------------------------------------------------------------------------


def test_predicted_durations_are_clamped_to_zero_and_max_duration() -> None:
    model = tiny_model(max_duration=20).eval()
    inputs = make_batch([4, 2])
    with torch.no_grad():
        model.duration_predictor.fc.bias.fill_(10.0)  # exp(10) - 1 frames, clamped to 20
    result = model.infer(inputs.tokens, inputs.token_lengths)
    assert result.durations.dtype == torch.long
    assert result.durations.tolist() == [[20] * 4, [20, 20, 0, 0]]
    assert result.mel_lengths.tolist() == [80, 40] and result.mel.shape == (2, N_MELS, 80)
    assert model.infer(inputs.tokens, inputs.token_lengths, pace=2.0).durations.tolist() == [[10] * 4, [10, 10, 0, 0]]
    with torch.no_grad():
        model.duration_predictor.fc.bias.fill_(-10.0)  # below zero frames: clamped to 0
    silent = model.infer(inputs.tokens, inputs.token_lengths)
    assert silent.durations.sum() == 0 and silent.mel_lengths.tolist() == [0, 0]
    assert torch.isfinite(silent.mel).all() and silent.mel.abs().sum() == 0


def test_pace_scales_the_length_of_given_durations() -> None:
    model = tiny_model().eval()
    inputs = make_batch([3], durations=[[3, 5, 4]])
    for pace, expected in ((1.0, [3, 5, 4]), (0.5, [6, 10, 8]), (2.0, [2, 3, 2]), (1.25, [2, 4, 3])):
        result = model.infer(inputs.tokens, inputs.token_lengths, pace=pace, durations=inputs.durations)
        assert result.durations.tolist() == [expected], pace
        assert result.mel_lengths.tolist() == [sum(expected)] and result.mel.shape[-1] == sum(expected)


def test_pitch_transform_arithmetic_and_order() -> None:
    pitch = torch.tensor([[1.0, -2.0, 0.5, 7.0]])
    mask = torch.tensor([[True, True, True, False]])
    std = 5.0
    torch.testing.assert_close(PitchTransform()(pitch, mask, std), torch.tensor([[1.0, -2.0, 0.5, 0.0]]))
    torch.testing.assert_close(PitchTransform(flatten=True)(pitch, mask, std), torch.zeros(1, 4))
    torch.testing.assert_close(PitchTransform(invert=True)(pitch, mask, std), torch.tensor([[-1.0, 2.0, -0.5, 0.0]]))
    torch.testing.assert_close(PitchTransform(amplify=3.0)(pitch, mask, std), torch.tensor([[3.0, -6.0, 1.5, 0.0]]))
    torch.testing.assert_close(PitchTransform(shift_hz=10.0)(pitch, mask, std), torch.tensor([[3.0, 0.0, 2.5, 0.0]]))
    # amplify before shift: p * 2 + 10 / 5, not (p + 2) * 2
    both = PitchTransform(invert=True, amplify=2.0, shift_hz=10.0)
    torch.testing.assert_close(both(pitch, mask, std), torch.tensor([[0.0, 6.0, 1.0, 0.0]]))
    # flatten first: the contour is gone, the shift survives
    flat = PitchTransform(flatten=True, amplify=4.0, shift_hz=-25.0)
    torch.testing.assert_close(flat(pitch, mask, std), torch.tensor([[-5.0, -5.0, -5.0, 0.0]]))
    assert PitchTransform().is_identity and not both.is_identity


def test_infer_applies_the_transform_with_the_models_pitch_std() -> None:
    model = tiny_model().eval()  # pitch_std 50 Hz
    inputs = make_batch([5, 3])
    plain = model.infer(inputs.tokens, inputs.token_lengths)
    shifted = model.infer(inputs.tokens, inputs.token_lengths, pitch_transform=PitchTransform(shift_hz=25.0))
    mask = inputs.tokens != 0
    torch.testing.assert_close(shifted.pitch[mask], plain.pitch[mask] + 0.5)
    assert shifted.pitch[~mask].abs().sum() == 0
    assert not torch.allclose(shifted.mel, plain.mel)
    torch.testing.assert_close(shifted.durations, plain.durations)  # pitch does not change durations


def test_given_durations_pitch_and_energy_override_the_predictions() -> None:
    model = tiny_model().eval()
    inputs = make_batch([4, 2], durations=[[1, 3, 2, 2], [5, 1]])
    given = model.infer(
        inputs.tokens, inputs.token_lengths, durations=inputs.durations, pitch=inputs.pitch, energy=inputs.energy
    )
    torch.testing.assert_close(given.durations, inputs.durations)
    torch.testing.assert_close(given.pitch, inputs.pitch)
    torch.testing.assert_close(given.energy, inputs.energy)
    # ... and with the targets of a training batch, inference is the teacher-forced forward
    torch.testing.assert_close(given.mel, model(inputs).mel)
    predicted = model.infer(inputs.tokens, inputs.token_lengths, durations=inputs.durations)
    assert not torch.allclose(predicted.pitch, inputs.pitch)
    assert not torch.allclose(predicted.mel, given.mel)


# --------------------------------------------------------------------------------------------------
# loss
# --------------------------------------------------------------------------------------------------


def _perfect_output(inputs: FastPitchInputs, target: torch.Tensor, lengths: torch.Tensor) -> FastPitchOutput:
    mask = inputs.tokens != 0
    return FastPitchOutput(
        mel=target.clone(),
        mel_lengths=lengths,
        log_duration=torch.log1p(inputs.durations.float()),
        pitch=inputs.pitch.clone(),
        energy=inputs.energy.clone(),
        token_mask=mask,
    )


def test_loss_is_zero_when_predictions_equal_targets() -> None:
    inputs = make_batch([4, 2])
    lengths = inputs.durations.sum(1)
    target = torch.randn(2, N_MELS, int(lengths.max())) * (torch.arange(int(lengths.max())) < lengths[:, None, None])
    terms = fastpitch_loss(_perfect_output(inputs, target, lengths), inputs, target, lengths)
    for name in ("total", "mel", "duration", "pitch", "energy", "duration_error"):
        assert getattr(terms, name).item() == pytest.approx(0.0, abs=1e-6), name


def test_loss_ignores_padding_and_weighs_the_terms() -> None:
    inputs = make_batch([4, 2], seed=2)
    lengths = inputs.durations.sum(1)
    frames = int(lengths.max())
    generator = torch.Generator().manual_seed(0)
    target = torch.randn(2, N_MELS, frames, generator=generator)
    output = FastPitchOutput(
        mel=torch.randn(2, N_MELS, frames, generator=generator),
        mel_lengths=lengths,
        log_duration=torch.randn(2, 4, generator=generator),
        pitch=torch.randn(2, 4, generator=generator),
        energy=torch.randn(2, 4, generator=generator),
        token_mask=inputs.tokens != 0,
    )
    scales = {"duration_scale": 0.1, "pitch_scale": 0.2, "energy_scale": 0.3}
    terms = fastpitch_loss(output, inputs, target, lengths, **scales)
    expected_total = terms.mel + 0.1 * terms.duration + 0.2 * terms.pitch + 0.3 * terms.energy
    torch.testing.assert_close(terms.total, expected_total)
    # the mel term by hand, item by item over real frames
    squared = [((output.mel[b, :, :n] - target[b, :, :n]) ** 2) for b, n in enumerate(lengths.tolist())]
    torch.testing.assert_close(terms.mel, sum(s.sum() for s in squared) / sum(s.numel() for s in squared))

    # garbage in every padded frame and token, and 3 more padded frames and 2 more padded tokens
    def pad(x: torch.Tensor, extra: int, value: float) -> torch.Tensor:
        return torch.cat([x, torch.full((*x.shape[:-1], extra), value, dtype=x.dtype)], dim=-1)

    token_mask = inputs.tokens != 0
    garbage = 37.0
    padded_inputs = FastPitchInputs(
        pad(inputs.tokens, 2, 0),
        inputs.token_lengths,
        pad(inputs.durations, 2, 0),
        pad(inputs.pitch.masked_fill(~token_mask, 0.0), 2, 0.0),
        pad(inputs.energy.masked_fill(~token_mask, 0.0), 2, 0.0),
    )
    frame_mask = torch.arange(frames) < lengths[:, None]
    padded_output = FastPitchOutput(
        mel=pad(output.mel.masked_fill(~frame_mask[:, None], garbage), 3, garbage),
        mel_lengths=lengths,
        log_duration=pad(output.log_duration.masked_fill(~token_mask, garbage), 2, garbage),
        pitch=pad(output.pitch.masked_fill(~token_mask, garbage), 2, garbage),
        energy=pad(output.energy.masked_fill(~token_mask, garbage), 2, garbage),
        token_mask=pad(token_mask, 2, False),
    )
    padded = fastpitch_loss(padded_output, padded_inputs, pad(target, 3, 0.0), lengths, **scales)
    for name in ("total", "mel", "duration", "pitch", "energy", "duration_error"):
        torch.testing.assert_close(getattr(padded, name), getattr(terms, name), msg=name)


def test_mel_loss_counts_real_frames_whose_target_is_zero() -> None:
    """A log-mel bin can be exactly 0; masking by ``target != 0`` would skip it, the lengths do not."""
    inputs = make_batch([2], durations=[[2, 1]])
    lengths = torch.tensor([3])
    target = torch.zeros(1, N_MELS, 3)
    output = _perfect_output(inputs, target, lengths)._replace(mel=torch.ones(1, N_MELS, 3))
    assert fastpitch_loss(output, inputs, target, lengths).mel.item() == pytest.approx(1.0)
    with pytest.raises(ValueError, match="mel_max_len"):
        fastpitch_loss(output, inputs, torch.zeros(1, N_MELS, 4), lengths)


def test_duration_error_is_in_frames() -> None:
    inputs = make_batch([3], durations=[[2, 4, 1]])
    lengths = torch.tensor([7])
    output = _perfect_output(inputs, torch.zeros(1, N_MELS, 7), lengths)
    output = output._replace(log_duration=torch.log1p(torch.tensor([[3.0, 4.0, 0.0]])))  # off by 1, 0, 1
    assert fastpitch_loss(output, inputs, torch.zeros(1, N_MELS, 7), lengths).duration_error.item() == pytest.approx(
        2 / 3
    )


# --------------------------------------------------------------------------------------------------
# training
# --------------------------------------------------------------------------------------------------


def _learnable_batch() -> tuple[FastPitchInputs, torch.Tensor, torch.Tensor]:
    """A fixed batch whose targets are functions of the symbols, so the model can learn them all."""
    generator = torch.Generator().manual_seed(7)
    symbol_mel = torch.randn(N_SYMBOLS, N_MELS, generator=generator) * 2.0 - 5.0  # log-mel-like levels
    symbol_pitch = torch.randn(N_SYMBOLS, generator=generator)
    symbol_energy = torch.rand(N_SYMBOLS, generator=generator) * 3.0
    inputs = make_batch([9, 6, 11, 4], seed=8)
    mask = inputs.tokens != 0
    durations = (1 + inputs.tokens % 4) * mask  # 1..4 frames, by symbol
    inputs = FastPitchInputs(
        inputs.tokens,
        inputs.token_lengths,
        durations,
        symbol_pitch[inputs.tokens] * mask,
        symbol_energy[inputs.tokens] * mask,
    )
    lengths = durations.sum(1)
    target = torch.zeros(4, N_MELS, int(lengths.max()))
    for b in range(4):
        frames = torch.repeat_interleave(inputs.tokens[b], durations[b])
        target[b, :, : frames.numel()] = symbol_mel[frames].T
    return inputs, target, lengths


def test_a_tiny_model_learns_a_fixed_batch() -> None:
    model = tiny_model(seed=0)
    inputs, target, lengths = _learnable_batch()
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    history = []
    for _ in range(100):
        output = model(inputs, mel_max_len=target.shape[-1])
        terms = fastpitch_loss(output, inputs, target, lengths)
        optimizer.zero_grad()
        terms.total.backward()
        optimizer.step()
        history.append(terms)
    first, last = history[0], history[-1]
    assert math.isfinite(last.total.item())
    assert last.mel < first.mel / 10, (first.mel, last.mel)
    assert last.duration < first.duration / 10, (first.duration, last.duration)
    assert last.pitch < first.pitch / 5, (first.pitch, last.pitch)
    assert last.energy < first.energy / 5, (first.energy, last.energy)


# --------------------------------------------------------------------------------------------------
# model files and config
# --------------------------------------------------------------------------------------------------


def test_model_file_round_trip(tmp_path) -> None:
    model = tiny_model(seed=9).eval()
    config = model.model_config()
    assert set(config) == set(FASTPITCH_MODEL_FIELDS) | {"n_symbols", "n_mels"}
    save_model_file(tmp_path / "model.pt", model, config, step=12)
    loaded = load_model_file(tmp_path / "model.pt")
    rebuilt = FastPitch.from_config(loaded.model_config)
    rebuilt.load_state_dict(loaded.state_dict)
    rebuilt.eval()
    assert float(rebuilt.pitch_std) == 50.0 and float(rebuilt.pitch_mean) == 200.0
    inputs = make_batch([5, 3])
    torch.testing.assert_close(rebuilt(inputs).mel, model(inputs).mel)
    with pytest.raises(ValueError, match="unknown keys"):
        FastPitch.from_config({**config, "pitch_conditioning_formants": 2})


@pytest.fixture
def demo() -> dict:
    return yaml.safe_load((REPO / "config/demo.yaml").read_text())


@pytest.mark.parametrize("name", ["config.yaml", "demo.yaml"])
def test_shipped_fastpitch_sections_build(name: str) -> None:
    cfg = load_config(REPO / "config" / name).fastpitch
    model = FastPitch(cfg, n_symbols=148, n_mels=80)
    if name == "config.yaml":
        # NVIDIA's values, on 4 GPUs (beside HiFi-GAN's 4; accumulation keeps the global batch)
        assert cfg == FastPitchConfig(amp="fp16", gpus=4), "the recipe file should hold NVIDIA's values"
        assert count(model) == 45_261_395
    else:
        assert cfg.energy_conditioning and count(model) < 5_000_000


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("in_fft_n_layers", 0, "fastpitch.in_fft_n_layers"),
        ("p_out_fft_dropout", 1.5, "fastpitch.p_out_fft_dropout"),
        ("optimizer", "sgd", "fastpitch.optimizer"),
        ("amp", "fp8", "fastpitch.amp"),
        ("in_fft_output_size", 256, "in_fft_output_size: must equal symbols_embedding_dim"),
        ("symbols_embedding_dim", 191, "symbols_embedding_dim: expected an even number"),
        ("dur_predictor_kernel_size", 4, "dur_predictor_kernel_size: expected an odd kernel"),
        ("global_batch_size", 20, "global_batch_size: expected a multiple of batch_size"),
        ("max_durations", 3, "fastpitch.max_durations: unknown key"),
    ],
)
def test_bad_fastpitch_values_name_the_key(demo: dict, key: str, value, message: str) -> None:
    bad = copy.deepcopy(demo)
    bad["fastpitch"][key] = value
    with pytest.raises(ConfigError) as info:
        parse_config(bad, source="test.yaml")
    text = str(info.value)
    assert message in text and "fastpitch" in text, text
