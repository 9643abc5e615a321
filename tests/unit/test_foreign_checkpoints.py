"""Foreign checkpoints (NVIDIA DeepLearningExamples / NGC, jik876) read as they are by the model loaders:
each layout is recognised and gives the same outputs as the same weights in this project's format."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import torch

from tests.foreign_layouts import (
    WritesMarker,
    generator_state,
    jik876_discriminators,
    jik876_generator,
    nvidia_discriminators,
    nvidia_fastpitch,
    nvidia_generator,
)
from tests.inference_models import AUDIO, TINY_HIFIGAN, save_fastpitch_file, tiny_fastpitch, tiny_generator
from tts_pipeline.config import AudioConfig, HiFiGANConfig, TextConfig
from tts_pipeline.errors import UserError
from tts_pipeline.models.fastpitch.model_file import load_fastpitch
from tts_pipeline.models.hifigan import Generator
from tts_pipeline.models.hifigan.discriminators import MultiPeriodDiscriminator, MultiScaleDiscriminator
from tts_pipeline.models.hifigan.foreign import foreign_discriminators, reorder_resblocks
from tts_pipeline.models.hifigan.model_file import load_generator
from tts_pipeline.models.model_file import load_model_file

SECTION = TINY_HIFIGAN.model_dump(mode="json")
TEXT = TextConfig()


pytestmark = pytest.mark.usefixtures("one_thread")


def _save(payload: object, path: Path) -> Path:
    torch.save(payload, path)
    return path


def _vocode(generator: Generator, seed: int = 5) -> torch.Tensor:
    mel = torch.randn(1, 80, 6, generator=torch.Generator().manual_seed(seed))
    with torch.no_grad():
        return generator(mel)


# --------------------------------------------------------------------------------------------------
# FastPitch
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("prefix", ["module.", ""])
def test_nvidia_fastpitch_checkpoint_loads_with_text_and_audio_from_the_config(tmp_path, caplog, prefix) -> None:
    ours = tiny_fastpitch(seed=2)
    path = _save(nvidia_fastpitch(ours, prefix=prefix), tmp_path / "FastPitch_checkpoint_100.pt")
    with caplog.at_level(logging.INFO):
        model, info = load_fastpitch(path, text=TEXT, audio=AUDIO)
    assert "NVIDIA DeepLearningExamples / NGC FastPitch checkpoint" in caplog.text
    assert (info.step, info.epoch) == (5000, 100)
    assert info.text.symbol_set == TEXT.symbol_set and info.text.cleaners == TEXT.cleaners
    assert info.pitch.mean == pytest.approx(200.0) and info.pitch.std == pytest.approx(50.0)
    assert info.audio == AUDIO
    tokens = torch.randint(1, 20, (1, 9), generator=torch.Generator().manual_seed(0))
    lengths = torch.tensor([9])
    with torch.no_grad():
        expected, got = ours.infer(tokens, lengths), model.infer(tokens, lengths)
    torch.testing.assert_close(got.mel, expected.mel, rtol=0, atol=0)


def test_nvidia_fastpitch_needs_the_config_sections_and_matching_mels(tmp_path) -> None:
    path = _save(nvidia_fastpitch(tiny_fastpitch()), tmp_path / "fp.pt")
    with pytest.raises(UserError, match="text and audio sections"):
        load_fastpitch(path)
    with pytest.raises(UserError, match="n_mel_channels"):
        load_fastpitch(path, text=TEXT, audio=AudioConfig(n_mel_channels=64))


def test_own_fastpitch_file_still_loads_without_config_sections(tmp_path) -> None:
    _, info = load_fastpitch(save_fastpitch_file(tmp_path / "model.pt"))
    assert info.step == 3


# --------------------------------------------------------------------------------------------------
# HiFi-GAN generator
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("layout", "name"),
    [
        (nvidia_generator, "NVIDIA DeepLearningExamples HiFi-GAN generator"),
        (jik876_generator, "jik876/hifi-gan generator"),
        (lambda g: generator_state(g, flat=True, prefix="module."), "bare HiFi-GAN generator state dict"),
    ],
)
def test_foreign_generator_gives_the_same_audio(tmp_path, caplog, layout, name) -> None:
    ours = tiny_generator(seed=3)
    path = _save(layout(ours), tmp_path / "g_00100000")
    with caplog.at_level(logging.INFO):
        loaded, info = load_generator(path, audio=AUDIO, section=SECTION)
    assert name in caplog.text
    assert info.model_config == ours.model_config()
    torch.testing.assert_close(_vocode(loaded), _vocode(ours), rtol=0, atol=0)


@pytest.mark.parametrize("version", ["v1", "v2", "v3"])
@pytest.mark.parametrize("reverse", [False, True])
def test_jik876_versions_and_both_kernel_orders_are_recognised_without_a_section(tmp_path, version, reverse) -> None:
    from tts_pipeline.models.hifigan.presets import preset

    sizes = preset(version)
    if reverse:  # NVIDIA's order of the parallel blocks
        sizes["resblock_kernel_sizes"].reverse()
        sizes["resblock_dilation_sizes"].reverse()
    sizes["upsample_initial_channel"] = 16  # the shape checks do not need the real widths
    torch.manual_seed(0)
    ours = Generator(HiFiGANConfig(**sizes), 80).eval()
    path = _save(jik876_generator(ours), tmp_path / "g_02500000")
    loaded, _ = load_generator(path, audio=AUDIO)  # no section: sizes from the weights and the presets
    assert loaded.model_config() == ours.model_config()
    torch.testing.assert_close(_vocode(loaded), _vocode(ours), rtol=0, atol=0)


def test_foreign_generator_must_agree_with_the_audio_section(tmp_path) -> None:
    path = _save(jik876_generator(tiny_generator()), tmp_path / "g_1")
    with pytest.raises(UserError, match="hop_length 300"):
        load_generator(path, audio=AudioConfig(hop_length=300, filter_length=1024, win_length=1024), section=SECTION)
    with pytest.raises(UserError, match="audio section"):
        load_generator(path)


def test_reordered_blocks_compute_the_same_function() -> None:
    torch.manual_seed(1)
    cfg = HiFiGANConfig(upsample_initial_channel=16, resblock_kernel_sizes=[3, 7, 11])
    ours = Generator(cfg, 80).eval()
    state, config = reorder_resblocks(ours.state_dict(), ours.model_config(), [11, 3, 7])
    assert config["resblock_kernel_sizes"] == [11, 3, 7]
    moved = Generator.from_config(config).eval()
    moved.load_state_dict(state)
    torch.testing.assert_close(_vocode(moved), _vocode(ours), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="cannot be put"):
        reorder_resblocks(ours.state_dict(), ours.model_config(), [3, 5, 7])


# --------------------------------------------------------------------------------------------------
# discriminators
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("layout", [jik876_discriminators, nvidia_discriminators])
def test_foreign_discriminators_load_into_ours_with_the_same_verdicts(tmp_path, layout) -> None:
    torch.manual_seed(4)
    mpd, msd = MultiPeriodDiscriminator([2, 3], 0.125).eval(), MultiScaleDiscriminator(0.125).eval()
    path = _save(layout(mpd, msd), tmp_path / "do_1")
    mpd_state, msd_state, step = foreign_discriminators(path, torch.load(path, weights_only=True))
    assert step == 2500
    mpd2, msd2 = MultiPeriodDiscriminator([2, 3], 0.125).eval(), MultiScaleDiscriminator(0.125).eval()
    mpd2.load_state_dict(mpd_state)  # strict: every name mapped
    msd2.load_state_dict(msd_state)
    audio = torch.randn(1, 1, 2048, generator=torch.Generator().manual_seed(0)) * 0.1
    with torch.no_grad():
        for before, after in ((mpd, mpd2), (msd, msd2)):
            for a, b in zip(before(audio).logits, after(audio).logits, strict=True):
                torch.testing.assert_close(b, a, rtol=0, atol=0)


def test_discriminator_file_passed_as_generator_is_named(tmp_path) -> None:
    mpd, msd = MultiPeriodDiscriminator([2], 0.125), MultiScaleDiscriminator(0.125)
    path = _save(jik876_discriminators(mpd, msd), tmp_path / "do_2")
    with pytest.raises(UserError, match="holds discriminators"):
        load_generator(path, audio=AUDIO)


# --------------------------------------------------------------------------------------------------
# unknown and malicious files
# --------------------------------------------------------------------------------------------------


def test_unknown_format_names_the_file_and_the_accepted_formats(tmp_path) -> None:
    path = _save({"weights": {"a": torch.zeros(1)}}, tmp_path / "mystery.pt")
    with pytest.raises(UserError, match=r"mystery\.pt.*accepted:.*jik876/hifi-gan generator"):
        load_generator(path, audio=AUDIO)
    with pytest.raises(UserError, match=r"mystery\.pt.*accepted:.*NVIDIA DeepLearningExamples / NGC FastPitch"):
        load_fastpitch(path, text=TEXT, audio=AUDIO)
    with pytest.raises(UserError, match=r"mystery\.pt.*accepted:.*jik876/hifi-gan discriminator"):
        foreign_discriminators(path, torch.load(path, weights_only=True))


@pytest.mark.parametrize(
    "load",
    [
        lambda p: load_generator(p, audio=AUDIO, section=SECTION),
        lambda p: load_fastpitch(p, text=TEXT, audio=AUDIO),
        load_model_file,
    ],
)
def test_a_pickle_that_runs_code_is_refused_and_never_run(tmp_path, load) -> None:
    marker = tmp_path / "ran"
    path = _save({"generator": WritesMarker(marker)}, tmp_path / "g_evil")
    with pytest.raises(UserError, match="g_evil"):
        load(path)
    assert not marker.exists()
    # the crafted file does run code when fully unpickled: the test would notice a loader that did
    torch.load(path, weights_only=False)
    assert marker.exists()


# --------------------------------------------------------------------------------------------------
# fine-tuning init
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("generator_layout", "discriminator_layout", "kernels"),
    [(jik876_generator, jik876_discriminators, [3, 7, 11]), (nvidia_generator, nvidia_discriminators, [11, 7, 3])],
)
def test_fine_tuning_starts_from_a_published_generator_and_its_discriminators(
    tmp_path, generator_layout, discriminator_layout, kernels
) -> None:
    from tts_pipeline.precision import Precision
    from tts_pipeline.training.hifigan import apply_init, build_state, load_init

    # The section asks for NVIDIA's block order; jik876's file has the other one (reordered on load).
    cfg = HiFiGANConfig(
        upsample_initial_channel=16,
        resblock_kernel_sizes=[11, 7, 3],
        mpd_periods=[2, 3],
        discriminator_channels_scale=0.125,
    )
    torch.manual_seed(6)
    source = build_state(
        cfg.model_copy(update={"resblock_kernel_sizes": kernels}), 80, Precision("off", torch.device("cpu"))
    )
    gen_path = _save(generator_layout(source.generator), tmp_path / "g_00005000")
    mpd, msd = source.discriminators.mpd, source.discriminators.msd
    disc_path = _save(discriminator_layout(mpd, msd), tmp_path / "do_00005000")

    init = load_init(gen_path, disc_path, audio=AUDIO, section=cfg.model_dump(mode="json"))
    state = build_state(cfg, 80, Precision("off", torch.device("cpu")))
    apply_init(state, init, default_lr=cfg.learning_rate, lr_factor=0.5, lr_decay=cfg.lr_decay)

    state.generator.eval(), source.generator.eval()
    torch.testing.assert_close(_vocode(state.generator), _vocode(source.generator), rtol=1e-5, atol=1e-6)
    for ours, theirs in ((state.discriminators.mpd, mpd), (state.discriminators.msd, msd)):
        for name, tensor in theirs.state_dict().items():
            torch.testing.assert_close(ours.state_dict()[name], tensor, rtol=0, atol=0)
    assert state.optim_g.param_groups[0]["lr"] == pytest.approx(cfg.learning_rate * 0.5)


def test_fine_tuning_rejects_a_generator_file_as_discriminators(tmp_path) -> None:
    from tts_pipeline.training.hifigan import load_init

    path = _save(nvidia_generator(tiny_generator()), tmp_path / "hifigan_gen_checkpoint_1.pt")
    with pytest.raises(UserError, match="not a HiFi-GAN discriminator checkpoint"):
        load_init(path, path, audio=AUDIO, section=SECTION)
