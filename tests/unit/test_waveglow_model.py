"""WaveGlow: config, shapes, invertibility, the loss, the inverse-weight cache, weight-norm folding, the
denoiser, NVIDIA's checkpoints and the model file, and parity with NVIDIA's own code on the fixture of
``tests/fixtures/nvidia_waveglow`` (its README says how it was made)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from tts_pipeline.config import AudioConfig
from tts_pipeline.errors import UserError
from tts_pipeline.models.denoiser import Denoiser
from tts_pipeline.models.waveglow import HOP_LENGTH, WaveGlow, WaveGlowConfig, WaveGlowDenoiser, waveglow_loss
from tts_pipeline.models.waveglow.foreign import config_from_weights, convert_state_dict
from tts_pipeline.models.waveglow.model_file import load_waveglow, read_waveglow_file, save_waveglow

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "nvidia_waveglow"
CHECKPOINT = FIXTURE / "checkpoint_WaveGlow_1.pt"

SMALL = WaveGlowConfig(
    n_mel_channels=8, n_flows=4, n_group=8, n_early_every=2, n_early_size=2, wn_layers=2, wn_channels=16
)

pytestmark = pytest.mark.usefixtures("one_thread")


def small_model(config: WaveGlowConfig = SMALL, seed: int = 0) -> WaveGlow:
    """A random WaveGlow whose couplings do something (``end`` is zero-initialised, i.e. the identity)."""
    torch.manual_seed(seed)
    model = WaveGlow(config)
    with torch.no_grad():
        for wn in model.WN:
            wn.end.weight.normal_(0.0, 0.05)
            wn.end.bias.normal_(0.0, 0.05)
        for conv in model.convinv:
            conv.conv.weight.add_(0.1 * torch.randn_like(conv.conv.weight))
    return model.eval()


def nvidia_layout(model: WaveGlow, *, prefix: str = "") -> dict[str, torch.Tensor]:
    """The model's weights under NVIDIA's names (old weight norm), as their ``state_dict()`` has them."""
    renames = {".parametrizations.weight.original0": ".weight_g", ".parametrizations.weight.original1": ".weight_v"}
    state = {}
    for name, tensor in model.state_dict().items():
        for ours, theirs in renames.items():
            if name.endswith(ours):
                name = name.removesuffix(ours) + theirs
        state[prefix + name] = tensor.clone()
    return state


@pytest.fixture(scope="module")
def reference() -> dict[str, torch.Tensor]:
    return torch.load(FIXTURE / "reference.pt", weights_only=True)


# --------------------------------------------------------------------------------------------------
# config and shapes
# --------------------------------------------------------------------------------------------------


def test_the_defaults_are_nvidia_s_published_model():
    config = WaveGlowConfig()
    assert config.to_nvidia() == {
        "n_mel_channels": 80,
        "n_flows": 12,
        "n_group": 8,
        "n_early_every": 4,
        "n_early_size": 2,
        "WN_config": {"n_layers": 8, "kernel_size": 3, "n_channels": 512},
    }
    assert WaveGlowConfig.from_nvidia(config.to_nvidia()) == config
    assert WaveGlowConfig.from_dict(config.to_dict()) == config
    # 12 flows, 2 channels out at flows 4 and 8: 8, 8, 8, 8, 6, 6, 6, 6, 4, 4, 4, 4.
    assert [config.channels_at(k) for k in range(12)] == [8] * 4 + [6] * 4 + [4] * 4
    assert config.remaining_channels == 4


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"n_group": 7}, "even"),
        ({"n_early_size": 3}, "even"),
        ({"n_flows": 20}, "at least 2 must remain"),
        ({"wn_kernel_size": 4}, "odd"),
        ({"wn_channels": 0}, "positive"),
    ],
)
def test_bad_sizes_are_refused(changes, message):
    with pytest.raises(ValueError, match=message):
        WaveGlowConfig(**{**WaveGlowConfig().to_dict(), **changes})


def test_unknown_config_keys_are_refused():
    with pytest.raises(ValueError, match="unknown keys"):
        WaveGlowConfig.from_dict({"n_flows": 4, "sigma": 1.0})
    with pytest.raises(ValueError, match="lacks"):
        WaveGlowConfig.from_nvidia({"n_flows": 4})


def test_forward_and_infer_shapes():
    model = small_model()
    mel, audio = torch.randn(3, 8, 5), torch.randn(3, 1024)
    output = model(mel, audio)
    assert output.z.shape == (3, 8, 128)
    assert [tuple(t.shape) for t in output.log_s] == [(3, 4, 128), (3, 4, 128), (3, 3, 128), (3, 3, 128)]
    assert all(t.dim() == 0 and t.dtype == torch.float32 for t in output.log_det_w)
    z, log_s, log_det_w = output  # NVIDIA's unpacking still works
    assert len(log_s) == len(log_det_w) == 4
    assert model.infer(mel, generator=torch.Generator().manual_seed(0)).shape == (3, 5 * HOP_LENGTH)


def test_forward_refuses_audio_the_mel_does_not_cover():
    model = small_model()
    with pytest.raises(ValueError, match="fewer than the audio"):
        model(torch.randn(1, 8, 2), torch.randn(1, 2048))
    with pytest.raises(ValueError, match="multiple of n_group"):
        model(torch.randn(1, 8, 4), torch.randn(1, 1001))


def test_state_dict_names_are_nvidia_s():
    """Module names are NVIDIA's; only weight norm's leaves differ, and the conversion maps them back."""
    model = small_model()
    names = set(nvidia_layout(model))
    assert {"upsample.weight", "convinv.3.conv.weight", "WN.0.start.weight_g", "WN.0.end.weight"} <= names
    assert {"WN.3.in_layers.1.weight_v", "WN.3.cond_layers.1.bias", "WN.3.res_skip_layers.1.weight_g"} <= names
    converted = convert_state_dict(nvidia_layout(model, prefix="module."))
    assert converted.keys() == model.state_dict().keys()
    assert all(torch.equal(converted[name], tensor) for name, tensor in model.state_dict().items())


# --------------------------------------------------------------------------------------------------
# flow: invertibility, sampling, loss
# --------------------------------------------------------------------------------------------------


# NVIDIA's flow structure (12 flows, 2 channels out at flows 4 and 8) on a narrow coupling network.
NARROW_FULL_FLOW = WaveGlowConfig(n_mel_channels=8, wn_layers=2, wn_channels=8)


@pytest.mark.parametrize(("config", "folded"), [(SMALL, False), (SMALL, True), (NARROW_FULL_FLOW, False)])
def test_infer_inverts_forward(config, folded):
    """Two early outputs in the 12-flow case: ``z``'s layout must be read back in the same order."""
    model = small_model(config)
    assert config.n_early_outputs == (1 if config is SMALL else 2)
    if folded:
        model.remove_weight_norm()
    generator = torch.Generator().manual_seed(1)
    mel = torch.randn(2, 8, 6, generator=generator)
    audio = 0.5 * torch.randn(2, 6 * HOP_LENGTH, generator=generator)
    with torch.no_grad():
        z = model(mel, audio).z
    rebuilt = model.infer(mel, sigma=1.0, z=z)
    assert (rebuilt - audio).abs().max() < 1e-4
    assert (z - audio.reshape(2, -1, 8).transpose(1, 2)).abs().max() > 0.1  # the flow did transform it


def test_sampling_follows_the_generator_and_sigma():
    model = small_model()
    mel = torch.randn(1, 8, 4)
    first = model.infer(mel, sigma=0.6, generator=torch.Generator().manual_seed(5))
    again = model.infer(mel, sigma=0.6, generator=torch.Generator().manual_seed(5))
    other = model.infer(mel, sigma=0.6, generator=torch.Generator().manual_seed(6))
    assert torch.equal(first, again)
    assert not torch.allclose(first, other)
    z = torch.randn(1, 8, 4 * HOP_LENGTH // 8, generator=torch.Generator().manual_seed(5))
    assert torch.equal(model.infer(mel, sigma=0.6, z=z), first)
    silent = model.infer(mel, sigma=0.0, z=z)
    assert torch.equal(silent, model.infer(mel, sigma=0.0, z=torch.zeros_like(z)))
    with pytest.raises(ValueError, match="z must have shape"):
        model.infer(mel, z=z[:, :, :-1])


def test_loss_of_an_identity_coupling_flow_is_the_gaussian_energy_of_the_audio():
    """With zero ``end`` convs (NVIDIA's initialisation) and rotations as 1x1 convs, log s = 0,
    log|det W| = 0 and the flow preserves the norm: the loss is |x|^2 / (2 sigma^2 N)."""
    torch.manual_seed(3)
    model = WaveGlow(SMALL)
    mel, audio = torch.randn(2, 8, 5), torch.randn(2, 1024)
    output = model(mel, audio)
    for sigma in (1.0, 0.5):
        expected = (audio**2).sum() / (2 * sigma**2 * audio.numel())
        torch.testing.assert_close(waveglow_loss(output, sigma), expected, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="sigma"):
        waveglow_loss(output, 0.0)


def test_loss_trains():
    model = small_model().train()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    generator = torch.Generator().manual_seed(0)
    mel, audio = torch.randn(2, 8, 5, generator=generator), 0.1 * torch.randn(2, 1024, generator=generator)
    losses = []
    for _ in range(5):
        loss = waveglow_loss(model(mel, audio))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]
    # The inverse tracks the trained 1x1 weights: sampling still inverts the flow.
    model.eval()
    mel, audio = torch.randn(1, 8, 3), 0.1 * torch.randn(1, 3 * HOP_LENGTH)
    with torch.no_grad():
        z = model(mel, audio).z
    assert (model.infer(mel, sigma=1.0, z=z) - audio).abs().max() < 1e-4


def test_the_inverse_weight_is_cached_until_the_weight_changes():
    conv = small_model().convinv[0]
    first = conv.inverse_weight()
    assert conv.inverse_weight() is first
    eye = torch.eye(8)
    torch.testing.assert_close(first.squeeze(-1) @ conv.conv.weight.detach().squeeze(-1), eye, atol=1e-5, rtol=0)
    with torch.no_grad():
        conv.conv.weight.mul_(2.0)
    second = conv.inverse_weight()
    assert second is not first
    torch.testing.assert_close(second, first / 2.0)
    conv.load_state_dict({"conv.weight": torch.linalg.qr(torch.randn(8, 8))[0].unsqueeze(-1)})
    assert conv.inverse_weight() is not second
    conv.double()
    assert conv.inverse_weight().dtype == torch.float64


@pytest.mark.parametrize(("dtype", "tolerance"), [(torch.float16, 1e-2), (torch.bfloat16, 5e-2)])
def test_half_precision_inference(dtype, tolerance):
    """As NVIDIA's ``--amp`` inference (``model.half()``): the inverses in the weights' dtype, the
    log-determinants in float32, the audio close to float32's."""
    mel, z = torch.randn(1, 8, 4), torch.randn(1, 8, 128)
    expected = small_model().infer(mel, z=z)
    model = small_model().to(dtype)
    audio = model.infer(mel.to(dtype), z=z.to(dtype))
    assert audio.dtype == dtype and model.convinv[0].inverse_weight().dtype == dtype
    assert (audio.float() - expected).abs().max() < tolerance * expected.abs().max()
    output = model(mel.to(dtype), torch.randn(1, 1024, dtype=dtype))
    assert all(t.dtype == torch.float32 for t in output.log_det_w)
    assert WaveGlowDenoiser.from_model(model)(audio).dtype == torch.float32


def test_folding_weight_norm_keeps_the_output_and_gives_nvidia_s_folded_names():
    model = small_model()
    mel, z = torch.randn(1, 8, 3), torch.randn(1, 8, 96)
    before = model.infer(mel, z=z)
    assert model.has_weight_norm
    model.remove_weight_norm()
    assert not model.has_weight_norm
    assert "WN.0.start.weight" in model.state_dict()
    assert not any("parametrizations" in name for name in model.state_dict())
    torch.testing.assert_close(model.infer(mel, z=z), before, atol=1e-6, rtol=1e-5)


# --------------------------------------------------------------------------------------------------
# denoiser
# --------------------------------------------------------------------------------------------------


def test_the_denoiser_is_the_project_s_bias_denoiser_with_waveglow_s_bias():
    model = small_model(WaveGlowConfig(n_mel_channels=80, n_flows=2, n_early_every=4, wn_layers=1, wn_channels=8))
    denoiser = WaveGlowDenoiser.from_model(model)
    assert denoiser.bias.shape == (513,) and denoiser.bias.max() > 0
    audio = model.infer(torch.randn(2, 80, 10), generator=torch.Generator().manual_seed(0))
    general = Denoiser(denoiser.bias, AudioConfig())
    for strength in (0.01, 1.0):
        torch.testing.assert_close(denoiser(audio, strength), general(audio, strength), atol=1e-6, rtol=0)
    assert torch.equal(denoiser(audio, 0.0), audio)
    assert denoiser(audio[0]).shape == audio[0].shape
    with pytest.raises(ValueError, match=">= 0"):
        denoiser(audio, -0.1)


# --------------------------------------------------------------------------------------------------
# NVIDIA checkpoints and the model file
# --------------------------------------------------------------------------------------------------


def test_nvidia_s_train_checkpoint_loads_with_its_config():
    model, model_file = load_waveglow(CHECKPOINT)
    assert model.config == WaveGlowConfig(
        n_mel_channels=8, n_flows=4, n_group=8, n_early_every=2, n_early_size=2, wn_layers=2, wn_channels=32
    )
    assert model_file.extra["epoch"] == 1 and model_file.extra["kind"] == "waveglow"
    assert model.has_weight_norm and not model.training
    assert config_from_weights(model_file.state_dict) == model.config
    folded, _ = load_waveglow(CHECKPOINT, remove_weight_norm=True)
    assert not folded.has_weight_norm


@pytest.mark.parametrize("variant", ["ngc", "folded", "no_config", "fp16"])
def test_ngc_style_files_load(tmp_path, variant):
    """NGC's files: ``state_dict`` with ``module.``, config recorded or not, fp16, or folded weight norm."""
    model = small_model()
    mel, z = torch.randn(1, 8, 3), torch.randn(1, 8, 96)
    if variant == "folded":
        model.remove_weight_norm()
    payload = {"state_dict": nvidia_layout(model, prefix="module."), "config": model.config.to_nvidia()}
    if variant == "no_config":
        del payload["config"]
    if variant == "fp16":
        payload["state_dict"] = {name: t.half() for name, t in payload["state_dict"].items()}
    torch.save(payload, tmp_path / "nvidia_waveglow256pyt_fp16.pt")
    loaded, model_file = load_waveglow(tmp_path / "nvidia_waveglow256pyt_fp16.pt")
    assert loaded.config == model.config
    assert loaded.has_weight_norm is (variant != "folded")
    expected = model.half().float().infer(mel, z=z) if variant == "fp16" else model.infer(mel, z=z)
    torch.testing.assert_close(loaded.infer(mel, z=z), expected, atol=1e-6, rtol=1e-5)


def test_a_model_without_early_outputs_is_read_from_its_weights(tmp_path):
    model = small_model(WaveGlowConfig(n_mel_channels=8, n_flows=2, n_early_every=4, wn_layers=1, wn_channels=8))
    torch.save({"state_dict": nvidia_layout(model)}, tmp_path / "w.pt")
    loaded, _ = load_waveglow(tmp_path / "w.pt")
    assert loaded.config.n_flows == 2 and loaded.config.remaining_channels == 8


def test_bad_nvidia_files_are_named(tmp_path):
    state = nvidia_layout(small_model())
    config = SMALL.to_nvidia()
    cases = {
        "missing.pt": {"state_dict": {k: v for k, v in state.items() if "WN.1.end" not in k}, "config": config},
        "disagrees.pt": {"state_dict": state, "config": {**config, "n_flows": 5}},
        "hifigan.pt": {"generator": {"conv_pre.weight_g": torch.ones(1)}},
    }
    for name, payload in cases.items():
        torch.save(payload, tmp_path / name)
        with pytest.raises(UserError, match=name):
            load_waveglow(tmp_path / name)
    with pytest.raises(UserError, match="WN.1.end"):
        load_waveglow(tmp_path / "missing.pt")
    with pytest.raises(UserError, match="n_flows"):
        load_waveglow(tmp_path / "disagrees.pt")
    with pytest.raises(UserError, match="not found"):
        load_waveglow(tmp_path / "absent.pt")


def test_model_file_round_trip(tmp_path):
    model = small_model()
    save_waveglow(tmp_path / "model.pt", model, step=12, epoch=3, audio=AudioConfig(n_mel_channels=8))
    loaded, model_file = load_waveglow(tmp_path / "model.pt", audio=AudioConfig(n_mel_channels=8))
    assert model_file.step == 12 and model_file.extra["epoch"] == 3
    mel, z = torch.randn(1, 8, 3), torch.randn(1, 8, 96)
    assert torch.equal(loaded.infer(mel, z=z), model.infer(mel, z=z))
    with pytest.raises(UserError, match="n_mel_channels 80"):
        load_waveglow(tmp_path / "model.pt", audio=AudioConfig())
    model.remove_weight_norm()
    with pytest.raises(ValueError, match="folded"):
        save_waveglow(tmp_path / "folded.pt", model, step=0)


def test_another_model_s_file_is_refused(tmp_path):
    from tts_pipeline.models.model_file import save_model_file

    save_model_file(tmp_path / "fp.pt", torch.nn.Linear(2, 2), {}, 0, {"kind": "fastpitch"})
    with pytest.raises(UserError, match="fastpitch"):
        read_waveglow_file(tmp_path / "fp.pt")


# --------------------------------------------------------------------------------------------------
# parity with NVIDIA's code
# --------------------------------------------------------------------------------------------------


def test_forward_and_loss_match_nvidia(reference):
    model, _ = load_waveglow(CHECKPOINT)
    with torch.no_grad():
        output = model(reference["forward_mel"], reference["forward_audio"])
    torch.testing.assert_close(output.z, reference["forward_z"], atol=1e-6, rtol=0)
    for k, log_s in enumerate(output.log_s):
        torch.testing.assert_close(log_s, reference[f"forward_log_s_{k}"], atol=1e-6, rtol=0)
    torch.testing.assert_close(torch.stack(output.log_det_w), reference["forward_log_det_W"], atol=1e-4, rtol=1e-6)
    torch.testing.assert_close(waveglow_loss(output).reshape(1), reference["forward_loss"], atol=1e-6, rtol=1e-6)


@pytest.mark.parametrize("folded", [False, True])
def test_infer_matches_nvidia(reference, folded):
    model, _ = load_waveglow(CHECKPOINT, remove_weight_norm=folded)
    sigma = float(reference["infer_sigma"])
    audio = model.infer(reference["infer_mel"], sigma=sigma, z=reference["infer_z"])
    # NVIDIA inverts the 1x1 convs in float32, this model in float64: ~1e-6 apart.
    torch.testing.assert_close(audio, reference["infer_audio"], atol=1e-5, rtol=0)


def test_denoiser_matches_nvidia(reference):
    model, _ = load_waveglow(CHECKPOINT, remove_weight_norm=True)
    denoiser = WaveGlowDenoiser.from_model(model)
    torch.testing.assert_close(denoiser.bias, reference["denoiser_bias"], atol=1e-4, rtol=1e-5)
    for strength in ("0.01", "1.0"):
        denoised = denoiser(reference["infer_audio"], float(strength))
        expected = reference[f"denoised_{strength}"]
        assert (expected - reference["infer_audio"]).abs().max() > 1e-3  # the subtraction shows
        torch.testing.assert_close(denoised, expected, atol=1e-5, rtol=0)


@pytest.mark.slow
def test_the_full_size_model_has_nvidia_s_parameters():
    """NVIDIA's default WaveGlow (their constructor, counted once): 268,294,760 parameters in 938
    state-dict entries, ``weight_g`` / ``weight_v`` counted apart."""
    model = WaveGlow()
    assert sum(p.numel() for p in model.parameters()) == 268_294_760
    assert len(model.state_dict()) == 938
    assert config_from_weights(model.state_dict()) == WaveGlowConfig()
