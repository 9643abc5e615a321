"""HiFi-GAN networks and losses: shapes, parameter counts, weight norm, config round trip, losses,
and a few real training steps of the demo-size networks."""

from __future__ import annotations

import json

import pytest
import torch

from tts_pipeline.config import AudioConfig, HiFiGANConfig
from tts_pipeline.models.hifigan import (
    DiscriminatorOutput,
    Generator,
    MultiPeriodDiscriminator,
    MultiScaleDiscriminator,
    discriminator_loss,
    feature_matching_loss,
    generator_adversarial_loss,
    generator_losses,
    mel_loss,
    multi_resolution_stft_loss,
)
from tts_pipeline.models.hifigan.generator import convert_state_dict
from tts_pipeline.models.hifigan.presets import PRESETS, V1, preset

DEMO = {"upsample_initial_channel": 64, "resblock_kernel_sizes": [3, 7, 11]}
DEMO_SCALE = 0.125


def count(module: torch.nn.Module, *, without_g: bool = False) -> int:
    """Parameters; ``without_g`` leaves out weight norm's g (``original0``), i.e. the plain count."""
    return sum(p.numel() for name, p in module.named_parameters() if not (without_g and name.endswith("original0")))


def make_generator(overrides: dict, n_mels: int = 80, seed: int = 0) -> Generator:
    torch.manual_seed(seed)
    return Generator(HiFiGANConfig(**overrides), n_mels)


# --------------------------------------------------------------------------------------------------
# generator
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["v1", "v2", "v3", "demo", "nvidia"])
def test_generator_turns_t_frames_into_256_t_samples(name: str) -> None:
    overrides = {**PRESETS, "demo": DEMO, "nvidia": {}}[name]
    generator = make_generator(overrides).eval()
    for frames in (1, 7, 32):
        with torch.no_grad():
            audio = generator(torch.randn(2, 80, frames))
        assert audio.shape == (2, 1, 256 * frames)
        assert audio.abs().max() < 1.0  # tanh


@pytest.mark.parametrize(
    ("name", "plain", "with_g"),
    [("v1", 13_926_017, 13_936_130), ("v2", 925_985, 928_514), ("v3", 1_462_273, 1_464_322)],
)
def test_generator_parameter_counts_match_the_reference(name: str, plain: int, with_g: int) -> None:
    generator = make_generator(PRESETS[name])
    assert count(generator) == with_g
    assert count(generator, without_g=True) == plain
    generator.remove_weight_norm()
    assert count(generator) == plain


def test_nvidia_kernel_order_has_the_v1_count_and_state_dict_shapes() -> None:
    generator = make_generator({})  # the config default: v1 with resblock kernels [11, 7, 3]
    state = generator.state_dict()
    assert count(generator) == 13_936_130
    assert state["conv_pre.parametrizations.weight.original1"].shape == (512, 80, 7)
    assert state["ups.0.parametrizations.weight.original0"].shape == (512, 1, 1)  # g of a transposed conv: (in, 1, 1)
    assert state["ups.3.parametrizations.weight.original1"].shape == (64, 32, 4)
    assert state["resblocks.0.0.convs1.2.parametrizations.weight.original1"].shape == (256, 256, 11)
    assert state["resblocks.3.2.convs2.0.parametrizations.weight.original1"].shape == (32, 32, 3)
    assert state["conv_post.parametrizations.weight.original1"].shape == (1, 32, 7)


def test_remove_weight_norm_keeps_the_output_and_leaves_plain_weights() -> None:
    generator = make_generator(DEMO).eval()
    mel = torch.randn(2, 80, 12)
    with torch.no_grad():
        before = generator(mel)
    assert generator.has_weight_norm
    generator.remove_weight_norm()
    assert not generator.has_weight_norm
    names = set(generator.state_dict())
    assert not any("parametrizations" in name for name in names)
    assert {"conv_pre.weight", "ups.0.weight", "resblocks.1.2.convs1.0.weight", "conv_post.weight"} <= names
    with torch.no_grad():
        after = generator(mel)
    torch.testing.assert_close(after, before, atol=1e-5, rtol=0)


def _interior_spread(generator: Generator, mel: torch.Tensor) -> float:
    """The standard deviation of the output for ``mel``, away from the borders' zero padding."""
    with torch.no_grad():
        audio = generator(mel)[0, 0]
    return audio[audio.numel() // 4 : -audio.numel() // 4].std().item()


def test_balanced_upsampling_turns_a_still_mel_into_a_still_waveform() -> None:
    # A silent mel is the same in every frame; a free transposed-conv kernel turns it into a pattern that
    # repeats every `rate` samples (a tone at the output rate / rate), a balanced one into a constant.
    demo3 = {**PRESETS["v3"], "upsample_initial_channel": 64}
    silent = torch.full((1, 80, 40), -11.5)
    transposed = make_generator(demo3).eval()
    balanced = make_generator({**demo3, "upsampling": "balanced"}).eval()
    assert _interior_spread(transposed, silent) > 1e-4
    assert _interior_spread(balanced, silent) < 1e-6
    # Every phase of every kernel sums to the same; the file layout is the transposed one's.
    for up, rate in zip(balanced.ups, demo3["upsample_rates"], strict=True):
        kernel = up.weight.detach()
        sums = torch.stack([kernel[..., phase::rate].sum(dim=-1) for phase in range(rate)], dim=-1)
        torch.testing.assert_close(sums, sums[..., :1].expand_as(sums), atol=1e-6, rtol=0)
    assert {k: v.shape for k, v in balanced.state_dict().items()} == {
        k: v.shape for k, v in transposed.state_dict().items()
    }
    mel = torch.randn(1, 80, 9)
    with torch.no_grad():
        before = balanced(mel)
        balanced.remove_weight_norm()
        torch.testing.assert_close(balanced(mel), before, atol=1e-5, rtol=0)
    assert not any("parametrizations" in name for name in balanced.state_dict())
    assert _interior_spread(balanced, silent) < 1e-6
    rebuilt = Generator.from_config(make_generator({**demo3, "upsampling": "balanced"}).model_config())
    assert rebuilt.model_config()["upsampling"] == "balanced"


def test_hidden_weights_start_normal_with_std_001_and_conv_pre_keeps_the_default() -> None:
    generator = make_generator(V1)
    generator.remove_weight_norm()
    for name in ("ups.0", "resblocks.0.0.convs1.0", "resblocks.0.1.convs2.2"):
        weight = generator.get_submodule(name).weight
        assert weight.std().item() == pytest.approx(0.01, rel=0.05), name
    # torch's default (kaiming-uniform, a = sqrt(5)): std = 1 / sqrt(3 * fan_in) = 1 / sqrt(3 * 80 * 7)
    assert generator.conv_pre.weight.std().item() == pytest.approx((3 * 80 * 7) ** -0.5, rel=0.05)


def test_model_config_round_trips_through_json() -> None:
    generator = make_generator(PRESETS["v3"], n_mels=64, seed=3)
    config = json.loads(json.dumps(generator.model_config()))
    assert config["n_mels"] == 64
    assert config["resblock_dilation_sizes"] == [[1, 2], [2, 6], [3, 12]]
    rebuilt = Generator.from_config(config)
    rebuilt.load_state_dict(generator.state_dict())
    mel = torch.randn(1, 64, 5)
    with torch.no_grad():
        torch.testing.assert_close(rebuilt.eval()(mel), generator.eval()(mel))
    with pytest.raises(ValueError, match="unknown keys"):
        Generator.from_config({**config, "mpd_periods": [2]})
    with pytest.raises(ValueError, match="n_mels"):
        Generator.from_config({key: value for key, value in config.items() if key != "n_mels"})


def test_presets_are_fresh_copies() -> None:
    copy = preset("v1")
    copy["resblock_dilation_sizes"][0][0] = 99
    assert V1["resblock_dilation_sizes"][0][0] == 1
    with pytest.raises(ValueError, match="v4"):
        preset("v4")


def test_invalid_generator_shapes_are_rejected() -> None:
    with pytest.raises(ValueError, match="upsample_kernel_sizes"):
        Generator(HiFiGANConfig(upsample_kernel_sizes=[16, 15, 4, 4]), 80)
    with pytest.raises(ValueError, match="odd"):
        Generator(HiFiGANConfig(resblock_kernel_sizes=[3, 4, 11]), 80)


def test_convert_state_dict_maps_old_weight_norm_names_and_the_flat_layout() -> None:
    generator = make_generator(DEMO)
    ours = generator.state_dict()
    old = {}
    for name, tensor in ours.items():
        name = name.replace(".parametrizations.weight.original0", ".weight_g")
        name = name.replace(".parametrizations.weight.original1", ".weight_v")
        if name.startswith("resblocks."):  # resblocks.<stage>.<block>. -> resblocks.<3 * stage + block>.
            _, stage, block, rest = name.split(".", 3)
            name = f"resblocks.{3 * int(stage) + int(block)}.{rest}"
        old[f"module.{name}"] = tensor
    assert "module.resblocks.11.convs2.2.weight_v" in old
    converted = convert_state_dict(old, n_blocks=3)
    assert set(converted) == set(ours)
    rebuilt = Generator.from_config(generator.model_config())
    rebuilt.load_state_dict(converted)
    assert convert_state_dict(ours, n_blocks=3).keys() == ours.keys()  # already ours: unchanged


# --------------------------------------------------------------------------------------------------
# discriminators
# --------------------------------------------------------------------------------------------------


def test_discriminator_parameter_counts_match_the_reference() -> None:
    mpd = MultiPeriodDiscriminator([2, 3, 5, 7, 11])
    msd = MultiScaleDiscriminator()
    assert count(mpd) == 41_105_770
    assert count(mpd, without_g=True) == 41_092_165
    assert count(msd) == 29_618_821  # spectral norm's u and v are buffers
    assert count(msd, without_g=True) == 29_610_627


@pytest.mark.parametrize("length", [8192, 8191, 4000])
def test_discriminator_outputs_and_feature_counts(length: int) -> None:
    torch.manual_seed(0)
    mpd = MultiPeriodDiscriminator([2, 3, 5, 7, 11], channels_scale=DEMO_SCALE)
    msd = MultiScaleDiscriminator(channels_scale=DEMO_SCALE)
    audio = torch.randn(2, 1, length) * 0.1
    out_p, out_s = mpd(audio), msd(audio)
    assert isinstance(out_p, DiscriminatorOutput)
    assert len(out_p.logits) == 5 and [len(maps) for maps in out_p.features] == [6] * 5
    assert len(out_s.logits) == 3 and [len(maps) for maps in out_s.features] == [8] * 3
    for period, maps, logits in zip([2, 3, 5, 7, 11], out_p.features, out_p.logits, strict=True):
        assert maps[0].shape[:2] == (2, 4)  # 32 * 0.125 channels
        assert all(m.shape[0] == 2 and m.shape[-1] == period for m in maps)
        assert maps[-1].shape[1] == 1
        assert logits.shape == (2, maps[-1][0].numel())
    rows = -(-length // 2)  # period 2 after right padding
    assert out_p.features[0][0].shape[2] == -(-rows // 3)
    # each pooled scale roughly halves the length: AvgPool1d(4, 2, padding=1) gives floor(N / 2)
    assert out_s.features[0][0].shape == (2, 16, length)
    assert out_s.features[1][0].shape == (2, 16, length // 2)
    assert out_s.features[2][0].shape == (2, 16, length // 2 // 2)
    for logits, maps in zip(out_s.logits, out_s.features, strict=True):
        assert logits.shape == (2, maps[-1].shape[-1])


def test_discriminator_widths_follow_the_scale() -> None:
    msd = MultiScaleDiscriminator(channels_scale=DEMO_SCALE)
    widths = [conv.out_channels for conv in msd.discriminators[1].convs]
    assert widths == [16, 16, 32, 64, 128, 128, 128]
    # an awkward scale still gives valid grouped convs (widths rounded to multiples of 16)
    odd = MultiScaleDiscriminator(channels_scale=0.3)
    assert all(conv.out_channels % 16 == 0 for conv in odd.discriminators[0].convs)
    odd(torch.randn(1, 1, 1024))
    mpd = MultiPeriodDiscriminator([3], channels_scale=0.25)
    assert [conv.out_channels for conv in mpd.discriminators[0].convs] == [8, 32, 128, 256, 256]


def test_msd_first_scale_is_spectrally_normalised_and_the_others_weight_normalised() -> None:
    msd = MultiScaleDiscriminator(channels_scale=DEMO_SCALE)
    names = dict(msd.named_parameters())
    assert "discriminators.0.convs.0.parametrizations.weight.original" in names
    assert "discriminators.1.convs.0.parametrizations.weight.original0" in names
    assert "discriminators.2.conv_post.parametrizations.weight.original1" in names
    assert [(pool.kernel_size, pool.stride, pool.padding) for pool in msd.meanpools] == [((4,), (2,), (1,))] * 2


def test_discriminators_reject_audio_without_a_channel_axis() -> None:
    with pytest.raises(ValueError, match=r"\(B, 1, N\)"):
        MultiScaleDiscriminator(channels_scale=DEMO_SCALE)(torch.randn(2, 8192))


# --------------------------------------------------------------------------------------------------
# losses
# --------------------------------------------------------------------------------------------------


def constant_output(values: list[float], batch: int = 2, n_maps: int = 3) -> DiscriminatorOutput:
    logits = [torch.full((batch, 10), value) for value in values]
    features = [[torch.full((batch, 4, 5), value * (k + 1)) for k in range(n_maps)] for value in values]
    return DiscriminatorOutput(logits=logits, features=features)


def test_lsgan_values_on_constant_logits() -> None:
    real = constant_output([1.0, 0.5])  # (1 - 1)^2 + (1 - 0.5)^2 = 0.25
    fake = constant_output([0.0, 0.25])  # 0^2 + 0.25^2 = 0.0625
    assert discriminator_loss(real, fake).item() == pytest.approx(0.25 + 0.0625)
    assert generator_adversarial_loss(fake).item() == pytest.approx(1.0 + 0.5625)
    assert generator_adversarial_loss(constant_output([1.0, 1.0])).item() == 0.0


def test_feature_matching_is_zero_for_identical_features_and_includes_the_factor_2() -> None:
    real = constant_output([1.0, 0.5])
    assert feature_matching_loss(real, real).item() == 0.0
    shifted = DiscriminatorOutput(
        logits=real.logits, features=[[m + 0.1 for m in maps] for maps in real.features]
    )  # 2 subs x 3 maps, each mean |diff| = 0.1
    assert feature_matching_loss(real, shifted).item() == pytest.approx(2 * 6 * 0.1)
    assert feature_matching_loss(real, shifted, scale=1.0).item() == pytest.approx(6 * 0.1)


def test_feature_matching_sends_no_gradient_through_the_real_features() -> None:
    real_map = torch.ones(1, 2, 3, requires_grad=True)
    fake_map = torch.zeros(1, 2, 3, requires_grad=True)
    real = DiscriminatorOutput([torch.ones(1, 1)], [[real_map]])
    fake = DiscriminatorOutput([torch.ones(1, 1)], [[fake_map]])
    feature_matching_loss(real, fake).backward()
    assert real_map.grad is None
    assert fake_map.grad is not None


def test_mel_loss_is_45_times_l1_and_checks_shapes() -> None:
    a = torch.zeros(2, 80, 32)
    assert mel_loss(a, a + 0.5).item() == pytest.approx(22.5)
    assert mel_loss(a, a - 0.5, scale=1.0).item() == pytest.approx(0.5)
    with pytest.raises(ValueError, match="shapes"):
        mel_loss(a, torch.zeros(2, 80, 31))


def test_generator_losses_add_up() -> None:
    real = [constant_output([1.0, 0.5]), constant_output([1.0])]
    fake = [constant_output([0.0, 0.25]), constant_output([0.5])]
    mel_real, mel_fake = torch.zeros(1, 4, 3), torch.full((1, 4, 3), 0.1)
    losses = generator_losses(real, fake, mel_real, mel_fake)
    assert losses.adversarial.item() == pytest.approx(1.0 + 0.5625 + 0.25)
    expected_fm = sum(feature_matching_loss(r, f).item() for r, f in zip(real, fake, strict=True))
    assert losses.feature_matching.item() == pytest.approx(expected_fm)
    assert losses.mel.item() == pytest.approx(4.5)
    assert losses.total.item() == pytest.approx(losses.adversarial.item() + expected_fm + 4.5)
    with pytest.raises(ValueError, match="sub-discriminators"):
        discriminator_loss(real[0], real[1])


# --------------------------------------------------------------------------------------------------
# training
# --------------------------------------------------------------------------------------------------


def test_demo_networks_lower_the_mel_loss_on_a_fixed_batch() -> None:
    from tts_pipeline.commands.hifigan_training_sides import OurTraining
    from tts_pipeline.precision import resolve_precision

    cfg = HiFiGANConfig(**DEMO, discriminator_channels_scale=DEMO_SCALE, learning_rate=1e-3, seed=0)
    training = OurTraining.build(cfg, AudioConfig(), resolve_precision("off", torch.device("cpu")))
    t = torch.arange(2048) / 22050
    audio = torch.stack([0.3 * torch.sin(2 * torch.pi * 220 * t), 0.2 * torch.sin(2 * torch.pi * 330 * t)])
    mpd = training.state.discriminators.mpd
    weights_before = mpd.discriminators[0].convs[0].parametrizations.weight.original1.clone()
    losses = [training.step(audio) for _ in range(10)]
    assert all(torch.isfinite(torch.tensor(list(step.values()))).all() for step in losses)
    assert losses[-1]["loss_mel"] < 0.9 * losses[0]["loss_mel"]
    assert losses[-1]["loss_discrim"] < losses[0]["loss_discrim"]
    # the discriminators learn (and are unfrozen again after the generator's update)
    assert not torch.equal(weights_before, mpd.discriminators[0].convs[0].parametrizations.weight.original1)
    assert all(p.requires_grad for p in training.state.discriminators.parameters())


def test_multi_resolution_stft_loss_is_zero_for_equal_audio_and_grows_with_the_difference() -> None:
    torch.manual_seed(0)
    real = torch.randn(2, 8192) * 0.1
    assert multi_resolution_stft_loss(real, real.clone()).item() == pytest.approx(0.0, abs=1e-6)
    slightly, very = real + 0.01 * torch.randn_like(real), real + 0.2 * torch.randn_like(real)
    assert 0 < multi_resolution_stft_loss(real, slightly) < multi_resolution_stft_loss(real, very)
    fake = very.clone().requires_grad_(True)
    multi_resolution_stft_loss(real, fake).backward()
    assert fake.grad is not None and torch.isfinite(fake.grad).all()
    with pytest.raises(ValueError, match="one shape"):
        multi_resolution_stft_loss(real, real[:, :4096])
