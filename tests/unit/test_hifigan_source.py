"""The harmonic source of the HiFi-GAN generator (``hifigan.source: harmonic``) and the interpolating
upsampling: the excitation's pitch is the F0 it is given, unvoiced frames carry noise only, inference
is deterministic, the pitch head's loss falls when it reads the right pitch, and interpolated features
have no once-per-frame pattern where a transposed conv has one."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from tts_pipeline.audio import MelSpectrogram
from tts_pipeline.benchmark.pitch_fidelity import track_pitch
from tts_pipeline.config import AudioConfig, HiFiGANConfig
from tts_pipeline.models.hifigan import Generator
from tts_pipeline.models.hifigan.generator import InterpolatingUpsample
from tts_pipeline.models.hifigan.source import (
    BIN_CENTS,
    F0_MIN_HZ,
    N_BINS,
    HarmonicSource,
    PitchHead,
    pitch_head_loss,
)

SR, HOP = 22050, 256
SMALL = {
    "resblock": "2",
    "upsample_rates": [8, 8, 4],
    "upsample_kernel_sizes": [16, 16, 8],
    "upsample_initial_channel": 32,
    "resblock_kernel_sizes": [3],
    "resblock_dilation_sizes": [[1, 2]],
}


def summed_source(n_harmonics: int = 8) -> HarmonicSource:
    """A source whose mixing conv adds its harmonics with equal weights (a band-limited pulse train)."""
    source = HarmonicSource(HOP, SR, n_harmonics).eval()
    with torch.no_grad():
        source.merge.weight.fill_(1.0 / n_harmonics)
        source.merge.bias.zero_()
    return source


def test_the_excitation_has_the_pitch_it_is_given_and_noise_only_where_unvoiced():
    frames = 2 * SR // HOP
    f0 = torch.linspace(110.0, 190.0, frames)[None]
    f0[:, frames // 2 : frames // 2 + 20] = 0.0  # a pause in the middle
    with torch.no_grad():
        excitation = summed_source()(f0)[0, 0].numpy()
    assert excitation.shape == (frames * HOP,)

    track = track_pitch(excitation.astype(np.float64), SR)
    expected = np.interp(track.times * SR / HOP, np.arange(frames), f0[0].numpy())
    voiced = (track.f0 > 0) & (expected > 0)
    assert voiced.mean() > 0.7
    cents = 1200 * np.abs(np.log2(track.f0[voiced] / expected[voiced]))
    assert np.median(cents) < 20

    pause = excitation[(frames // 2 + 2) * HOP : (frames // 2 + 18) * HOP]
    speech = excitation[: (frames // 2 - 2) * HOP]
    assert 0 < np.sqrt(np.mean(pause**2)) < 0.5 * np.sqrt(np.mean(speech**2))


def test_inference_is_deterministic_and_training_draws_fresh_noise_and_phase():
    source = summed_source()
    f0 = torch.full((2, 20), 140.0)
    with torch.no_grad():
        first, second = source(f0), source(f0)
        assert torch.equal(first, second) and torch.equal(first[0], first[1])
        source.train()
        assert not torch.equal(source(f0), source(f0))


def test_the_phase_stays_continuous_across_frames():
    """One sine at a steady pitch: no jump at the frame boundaries (the phase accumulates per sample)."""
    source = HarmonicSource(HOP, SR, 1).eval()
    with torch.no_grad():
        source.noise_table.zero_()  # the sine alone
        source.merge.weight.fill_(10.0)
        source.merge.bias.zero_()
        wave = source(torch.full((1, 40), 200.0))[0, 0].numpy()
    # tanh(sin) at 200 Hz moves at most 2 pi 200 / 22050 = 0.057 per sample; a restarted phase jumps by up to 1.5
    assert np.abs(np.diff(wave)).max() < 0.06


def head_output(f0_hz: list[float], sharpness: float = 8.0) -> torch.Tensor:
    """A ``(1, 1 + N_BINS, T)`` head output that is sure of ``f0_hz`` (0 = unvoiced)."""
    centres = math.log2(F0_MIN_HZ) + np.arange(N_BINS) * BIN_CENTS / 1200
    out = torch.full((1, 1 + N_BINS, len(f0_hz)), -sharpness)
    for t, hz in enumerate(f0_hz):
        out[0, 0, t] = sharpness if hz > 0 else -sharpness
        if hz > 0:
            out[0, 1:, t] = torch.from_numpy(sharpness * (2 * np.exp(-0.5 * ((centres - math.log2(hz)) * 60) ** 2) - 1))
    return out


def test_the_pitch_head_reads_f0_between_its_bins_and_its_loss_prefers_the_right_pitch():
    head = PitchHead(80)
    target = [0.0, 120.0, 243.0, 0.0]
    prediction = head_output(target)
    assert head.f0_of(prediction)[0].tolist() == pytest.approx(target, rel=0.005)  # < 9 cents, bins are 20

    f0 = torch.tensor([target])
    assert pitch_head_loss(prediction, f0) < pitch_head_loss(head_output([0.0, 240.0, 486.0, 0.0]), f0)
    assert pitch_head_loss(prediction, f0) < pitch_head_loss(head_output([0.0, 0.0, 0.0, 0.0]), f0)


def test_the_pitch_head_learns_a_pitch_from_the_mel(one_thread):
    """Two tones a fifth apart, as the one mel function sees them: a few hundred steps tell them apart
    within 30 cents (at the generator's learning rate: the head's own parametrisation makes it faster)."""
    mel_fn = MelSpectrogram(AudioConfig())
    t = np.arange(SR // 2) / SR
    mels, f0s = [], []
    for hz in (110.0, 165.0):
        tone = sum(0.3 / k * np.sin(2 * np.pi * k * hz * t) for k in range(1, 12))
        mel = mel_fn(torch.from_numpy(tone.astype(np.float32)))
        mels.append(mel)
        f0s.append(torch.full((mel.shape[-1],), hz))
    mel, f0 = torch.stack(mels), torch.stack(f0s)
    torch.manual_seed(0)
    head = PitchHead(80)
    optimiser = torch.optim.AdamW(head.parameters(), lr=2e-4, betas=(0.8, 0.99))
    for _ in range(300):
        optimiser.zero_grad()
        pitch_head_loss(head(mel), f0).backward()
        optimiser.step()
    with torch.no_grad():
        read = head.f0_of(head(mel))[:, 4:-4]
    assert (1200 * torch.log2(read / f0[:, 4:-4])).abs().max() < 30


def test_interpolated_features_have_no_once_per_frame_pattern():
    """A constant input: the transposed conv's output repeats every ``rate`` samples, the interpolating
    upsampler's is constant away from the edges."""
    torch.manual_seed(0)
    constant = torch.ones(1, 4, 32)
    transposed = torch.nn.ConvTranspose1d(4, 4, 16, stride=8, padding=4)
    interpolating = InterpolatingUpsample(4, 4, 8, 17)
    with torch.no_grad():
        tiled = transposed(constant)[..., 32:-32]
        smooth = interpolating(constant)[..., 32:-32]
    assert tiled.shape == smooth.shape == (1, 4, 32 * 8 - 64)
    assert tiled.std(dim=-1).min() > 1e-3
    assert smooth.std(dim=-1).max() < 1e-5


def test_a_source_generator_takes_f0_in_training_and_reads_it_from_the_mel_at_inference():
    cfg = HiFiGANConfig(**SMALL, upsampling="interpolate", source="harmonic", source_harmonics=4)
    torch.manual_seed(0)
    generator = Generator(cfg, 80, SR)
    mel = torch.randn(2, 80, 6)
    audio, prediction = generator(mel, torch.full((2, 6), 150.0), with_pitch=True)
    assert audio.shape == (2, 1, 6 * HOP) and prediction.shape == (2, 1 + N_BINS, 6)
    generator.eval()
    with torch.no_grad():
        assert torch.equal(generator(mel), generator(mel))

    config = generator.model_config()
    assert config["sampling_rate"] == SR and config["source"] == "harmonic"
    rebuilt = Generator.from_config(config)
    rebuilt.load_state_dict(generator.state_dict())
    with torch.no_grad():
        assert torch.equal(rebuilt.eval()(mel), generator(mel))

    with pytest.raises(ValueError, match="sampling_rate"):
        Generator(cfg, 80)
    plain = Generator(HiFiGANConfig(**SMALL), 80)
    assert "sampling_rate" not in plain.model_config() and not plain.has_source
    with pytest.raises(ValueError, match="source: harmonic"):
        plain(mel, torch.full((2, 6), 150.0))


def test_under_bf16_autocast_the_pitch_and_the_excitation_stay_float32():
    cfg = HiFiGANConfig(**SMALL, upsampling="interpolate", source="harmonic", source_harmonics=4)
    torch.manual_seed(0)
    generator = Generator(cfg, 80, SR).eval()
    seen = []
    real_forward = generator.source.forward
    generator.source.forward = lambda f0: seen.append(f0) or real_forward(f0)  # type: ignore[method-assign]
    mel = torch.randn(1, 80, 12) - 4
    with torch.no_grad():
        generator(mel)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            generator(mel)
    assert seen[1].dtype == torch.float32 and torch.equal(seen[0], seen[1])


def test_each_stage_can_have_its_own_upsampling():
    cfg = HiFiGANConfig(**SMALL, upsampling=["interpolate", "transposed", "balanced"])
    generator = Generator(cfg, 80)
    assert isinstance(generator.ups[0], InterpolatingUpsample)
    assert all(isinstance(up, torch.nn.ConvTranspose1d) for up in generator.ups[1:])
    assert generator.model_config()["upsampling"] == ["interpolate", "transposed", "balanced"]
    assert Generator.from_config(generator.model_config()).upsampling == generator.upsampling
    with pytest.raises(ValueError, match="upsampling: a list needs one mode per upsample rate"):
        HiFiGANConfig(**SMALL, upsampling=["interpolate", "transposed"])


def test_the_excitation_can_start_at_a_later_stage_and_its_weights_keep_their_keys():
    torch.manual_seed(0)
    every = Generator(HiFiGANConfig(**SMALL, upsampling="interpolate", source="harmonic", source_harmonics=4), 80, SR)
    cfg = HiFiGANConfig(**SMALL, upsampling="interpolate", source="harmonic", source_harmonics=4, source_first_stage=1)
    later = Generator(cfg, 80, SR)
    keys = {key for key in later.state_dict() if key.startswith("source_injection.")}
    assert keys == {key for key in every.state_dict() if key.startswith("source_injection.convs.")} - {
        "source_injection.convs.0.weight",
        "source_injection.convs.0.bias",
    }

    # the first stage's activations do not depend on the F0; the audio does
    seen = []
    later.ups[0].register_forward_hook(lambda module, args, output: seen.append(output))
    # (on a CPU the blocks take channels-last rows (B, C, 1, L): compared as (B, C, L))
    later.resblocks[0][0].register_forward_pre_hook(lambda module, args: seen.append(args[0].reshape(seen[-1].shape)))
    mel = torch.randn(1, 80, 6)
    with torch.no_grad():
        low = later(mel, torch.full((1, 6), 110.0))
        high = later(mel, torch.full((1, 6), 220.0))
    # the first stage's blocks see its upsampled features alone (no excitation added), at either pitch
    assert torch.equal(seen[0], seen[1]) and torch.equal(seen[2], seen[3]) and torch.equal(seen[1], seen[3])
    assert not torch.allclose(low, high)

    config = later.model_config()
    assert config["source_first_stage"] == 1
    rebuilt = Generator.from_config(config)
    rebuilt.load_state_dict(later.state_dict())
    # a file written before the setting existed fed every stage
    older = {key: value for key, value in every.model_config().items() if key != "source_first_stage"}
    assert Generator.from_config(older).source_injection.feeds(0)
    assert "source_first_stage" not in Generator(HiFiGANConfig(**SMALL), 80).model_config()
    with pytest.raises(ValueError, match="source_first_stage: 3 is past the last of the 3 upsampling stages"):
        HiFiGANConfig(**SMALL, source="harmonic", source_first_stage=3)


def spectrum_peaks(signal: np.ndarray, rate: float, floor_db: float = -30.0) -> list[float]:
    """The frequencies (Hz) of the spectral peaks of ``signal`` within ``floor_db`` of the strongest."""
    window = np.hanning(len(signal))
    level = 20 * np.log10(np.abs(np.fft.rfft(signal * window)) + 1e-12)
    freqs = np.fft.rfftfreq(len(signal), 1 / rate)
    local = (level[1:-1] > level[:-2]) & (level[1:-1] >= level[2:]) & (level[1:-1] > level.max() + floor_db)
    return list(freqs[1:-1][local])


def test_band_limited_stages_get_the_true_pitch_and_no_harmonic_folded_below_it():
    """At the demo's first stage (22.05 kHz / 32 = 689 Hz) a 200 Hz voice's harmonics at 400, 600, 800 Hz
    fold onto 289, 89 and 111 Hz when the full-rate sines are sampled there; band-limited, the stage sees
    200 Hz alone, and the full-rate stage sees all eight harmonics."""
    source = HarmonicSource(HOP, SR, 8, merged=False).eval()
    with torch.no_grad():
        source.noise_table.zero_()
        phase = source.phase(torch.full((1, 400), 200.0))
        first_stage = source.harmonics_at(phase, 32)[0].sum(dim=0).numpy()
        full_rate = source.harmonics_at(phase, 1)[0].sum(dim=0).numpy()
    assert first_stage.shape == (400 * HOP // 32,) and full_rate.shape == (400 * HOP,)
    assert spectrum_peaks(first_stage, SR / 32) == pytest.approx([200.0], abs=2.0)
    assert spectrum_peaks(full_rate, SR) == pytest.approx([200.0 * k for k in range(1, 9)], abs=2.0)

    # what a strided injection samples at that rate: the same sines taken every 32 samples alias
    cycles, _, _ = phase
    aliased = torch.sin(2 * math.pi * cycles[0, 0, 16::32, None] * torch.arange(1, 9)).sum(dim=1).numpy()
    assert min(abs(peak - 89.0) for peak in spectrum_peaks(aliased, SR / 32)) < 3.0


def test_a_band_limited_generator_records_its_injection_and_older_files_load_as_strided():
    cfg = HiFiGANConfig(
        **SMALL, upsampling="interpolate", source="harmonic", source_harmonics=4, source_injection="band_limited"
    )
    torch.manual_seed(0)
    generator = Generator(cfg, 80, SR)
    assert generator.source.merge is None
    # each stage's injection reads the four harmonics through 3 taps, at no stride
    assert generator.source_injection.convs[0].weight.shape == (16, 4, 3)
    assert generator.source_injection.strides == [32, 4, 1]
    mel = torch.randn(1, 80, 6)
    audio, prediction = generator(mel, torch.full((1, 6), 120.0), with_pitch=True)
    assert audio.shape == (1, 1, 6 * HOP) and prediction.shape == (1, 1 + N_BINS, 6)
    audio.mean().backward()
    assert all(conv.weight.grad is not None for conv in generator.source_injection.convs)

    config = generator.model_config()
    assert config["source_injection"] == "band_limited"
    rebuilt = Generator.from_config(config)
    rebuilt.load_state_dict(generator.state_dict())
    older = {key: value for key, value in config.items() if key != "source_injection"}
    assert Generator.from_config(older).source_injection.mode == "strided"
    assert "source_injection" not in Generator(HiFiGANConfig(**SMALL), 80).model_config()
    with pytest.raises(ValueError, match="source_injection"):
        HiFiGANConfig(**SMALL, source="harmonic", source_injection="folded")
