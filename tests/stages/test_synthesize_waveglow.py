"""Synthesis with WaveGlow as the vocoder: the synthesize stage with a tiny WaveGlow, and NVIDIA's
WaveGlow checkpoint (tests/fixtures/nvidia_waveglow) through the same path, against NVIDIA's figures."""

from __future__ import annotations

import argparse
import json
from functools import partial
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import torch

from tts_pipeline.benchmark.other_vocoders import parse_vocoder_argument
from tts_pipeline.config import AudioConfig, TextConfig
from tts_pipeline.errors import UserError
from tts_pipeline.files import read_jsonl
from tts_pipeline.inference import InferenceConfig, SynthesisOptions, Synthesizer
from tts_pipeline.inference.waveglow_vocoder import WaveGlowVocoder
from tts_pipeline.models.waveglow import WaveGlow, WaveGlowConfig
from tts_pipeline.models.waveglow.model_file import save_waveglow
from tts_pipeline.stages import synthesize as stage

from ..inference_models import AUDIO, save_fastpitch_file

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "nvidia_waveglow"
HOP, SR = AUDIO.hop_length, AUDIO.sampling_rate
PHRASES = "hello|Hello there.\nlonger|The old lighthouse keeper painted the door blue.\n"
TINY = WaveGlowConfig(n_flows=4, n_group=4, n_early_every=2, n_early_size=2, wn_layers=2, wn_channels=8)


@pytest.fixture(autouse=True)
def one_thread():
    torch.set_num_threads(1)


def tiny_waveglow(seed: int = 0) -> WaveGlow:
    """A tiny WaveGlow whose couplings are not the identity (NVIDIA zero-initialises their last conv)."""
    torch.manual_seed(seed)
    model = WaveGlow(TINY)
    with torch.no_grad():
        for wn in model.WN:
            wn.end.weight.normal_(0.0, 0.05)
            wn.end.bias.normal_(0.0, 0.05)
    return model.eval()


@pytest.fixture
def files(tmp_path) -> Path:
    save_fastpitch_file(tmp_path / "fastpitch" / "model.pt")
    save_waveglow(tmp_path / "waveglow" / "model.pt", tiny_waveglow(), step=3, audio=AUDIO)
    (tmp_path / "phrases.txt").write_text(PHRASES, encoding="utf-8")
    return tmp_path


def section(**inference: object) -> str:
    cfg = InferenceConfig(**{"gpus": 0, "batch_size": 2, "amp": "off", **inference})
    return json.dumps({
        "inference": cfg.model_dump(mode="json"),
        "audio": AUDIO.model_dump(mode="json"),
        "text": TextConfig().model_dump(mode="json"),
    })


def run_stage(root: Path, payload: str, out: str) -> list[dict]:
    argv = [
        "--section", payload, "--vocoder", str(root / "waveglow" / "model.pt"),
        "--fastpitch", str(root / "fastpitch" / "model.pt"), "--phrases", str(root / "phrases.txt"),
        "--out-dir", str(root / out),
    ]  # fmt: skip
    parser = argparse.ArgumentParser()
    stage.add_arguments(parser)
    stage.run(parser.parse_args(argv))
    return read_jsonl(root / out / "manifest.jsonl")


def test_the_stage_synthesises_with_waveglow_frames_times_hop_finite_and_reproducible(files):
    records = run_stage(files, section(vocoder="waveglow", waveglow_sigma=0.9), "first")
    assert [r["name"] for r in records] == ["hello", "longer"]
    waves = []
    for record in records:
        audio, rate = sf.read(files / "first" / record["wav"], dtype="float32")
        assert rate == SR and len(audio) == record["n_frames"] * HOP > 0 and np.isfinite(audio).all()
        assert np.abs(audio).max() > 0 and record["vocoder_ms"] > 0 and record["vocoder"] == "waveglow"
        waves.append(audio)
    # the noise is seeded per call: a rerun writes the same audio; another sigma other audio
    again = run_stage(files, section(vocoder="waveglow", waveglow_sigma=0.9), "again")
    for record, wave in zip(again, waves, strict=True):
        np.testing.assert_array_equal(sf.read(files / "again" / record["wav"], dtype="float32")[0], wave)
    quieter = run_stage(files, section(vocoder="waveglow", waveglow_sigma=0.3), "quieter")
    assert not np.array_equal(sf.read(files / "quieter" / quieter[0]["wav"], dtype="float32")[0], waves[0])


def test_the_vocoder_folds_weight_norm_and_keeps_the_model_s_output():
    model = tiny_waveglow()
    mel = torch.randn(2, 80, 7)
    z = torch.randn(2, TINY.n_group, 7 * HOP // TINY.n_group)
    expected = model.infer(mel, sigma=0.7, z=z)
    vocoder = WaveGlowVocoder(tiny_waveglow(), sigma=0.7)
    assert not vocoder.model.has_weight_norm
    torch.testing.assert_close(vocoder.model.infer(mel, sigma=0.7, z=z), expected, atol=1e-5, rtol=1e-4)
    audio = vocoder(mel)
    assert audio.shape == (2, 1, 7 * HOP)
    # one utterance alone or in a batch gets the same audio (noise drawn per call from one seed)
    torch.testing.assert_close(vocoder(mel[:1]), audio[:1])
    with pytest.raises(ValueError, match="sigma"):
        WaveGlowVocoder(tiny_waveglow(), sigma=-1.0)


def test_a_hifigan_file_given_as_waveglow_is_named(files):
    from ..inference_models import save_hifigan_file

    save_hifigan_file(files / "waveglow" / "model.pt")
    with pytest.raises(UserError, match="model.pt"):
        run_stage(files, section(vocoder="waveglow"), "wrong")


def test_nvidia_s_checkpoint_through_the_synthesis_path_matches_nvidia_s_denoiser():
    """NVIDIA's train.py checkpoint (8 mel channels) loads as it is; the synthesizer folds its weight
    norm, measures the denoiser's bias at sigma 0 as NVIDIA's Denoiser does, and denoises as theirs does."""
    reference = torch.load(FIXTURES / "reference.pt", weights_only=True)
    audio = AudioConfig(n_mel_channels=8)
    options = SynthesisOptions(denoising_strength=0.01, fade_out_frames=0, vocoder_settings={"waveglow_sigma": 0.6})
    synth = Synthesizer.load(
        None, FIXTURES / "checkpoint_WaveGlow_1.pt", options, audio=audio, vocoder_kind="waveglow", amp="off"
    )
    assert isinstance(synth.vocoder, WaveGlowVocoder) and not synth.vocoder.model.has_weight_norm
    assert synth.denoiser is not None
    torch.testing.assert_close(synth.denoiser.bias, reference["denoiser_bias"], atol=1e-4, rtol=1e-5)
    for strength in ("0.01", "1.0"):
        denoised = synth.denoiser(reference["infer_audio"], float(strength))
        torch.testing.assert_close(denoised, reference[f"denoised_{strength}"], atol=1e-4, rtol=1e-4)
    # NVIDIA's infer with their noise, through the folded model the synthesizer holds
    model = synth.vocoder.model
    ours = model.infer(reference["infer_mel"], sigma=0.6, z=reference["infer_z"])
    torch.testing.assert_close(ours, reference["infer_audio"], atol=1e-4, rtol=1e-4)
    (utterance,) = synth.vocode([reference["infer_mel"][0].numpy()])
    assert utterance.audio.shape == (12 * HOP,) and np.isfinite(utterance.audio).all()


def test_the_report_labels_phrases_by_the_vocoder_their_manifest_names(tmp_path):
    from tts_pipeline.files import write_jsonl
    from tts_pipeline.inference import write_wav
    from tts_pipeline.report.audio_pages import from_text_clips

    write_wav(tmp_path / "a.wav", np.zeros(HOP * 4, dtype=np.float32), SR)
    records = [{"name": "a", "wav": "a.wav", "text": "A.", "vocoder": "waveglow"}, {"name": "b", "wav": "a.wav"}]
    write_jsonl(tmp_path / "manifest.jsonl", records)
    pages = from_text_clips(tmp_path / "manifest.jsonl", AUDIO)
    assert [page.versions[0].label for page in pages] == ["FastPitch + WaveGlow", "FastPitch + fine-tuned HiFi-GAN"]
    assert pages[0].note.startswith("FastPitch + WaveGlow from free text")


def test_the_report_s_vocoder_pages_add_waveglow_when_given(tmp_path):
    """The vocoder comparison pages: recording, both HiFi-GANs and WaveGlow on the same FastPitch mel."""
    from tts_pipeline.files import save_npy, write_jsonl
    from tts_pipeline.inference import write_wav
    from tts_pipeline.report.audio_pages import GROUND_TRUTH, load_vocoders, vocoder_clips

    from ..inference_models import save_hifigan_file

    save_hifigan_file(tmp_path / "hifigan.pt")
    save_waveglow(tmp_path / "waveglow.pt", tiny_waveglow(), step=3, audio=AUDIO)
    frames = 12
    write_wav(tmp_path / "u1.wav", np.zeros(HOP * frames, dtype=np.float32), SR)
    record = {"id": "u1", "wav": str(tmp_path / "u1.wav"), "text": "Hi.", "n_samples": HOP * frames}
    write_jsonl(tmp_path / "manifest.val.jsonl", [record])
    mel = np.random.default_rng(0).normal(-5, 1, (AUDIO.n_mel_channels, frames)).astype(np.float32)
    save_npy(tmp_path / "mels" / "u1.npy", mel)
    hifigan = tmp_path / "hifigan.pt"
    clips = partial(vocoder_clips, tmp_path / "manifest.val.jsonl", tmp_path / "mels", 2)
    (page,) = clips(load_vocoders(hifigan, hifigan))
    assert [v.label for v in page.versions] == [
        GROUND_TRUTH, "base HiFi-GAN on the FastPitch mel", "fine-tuned HiFi-GAN on the FastPitch mel"
    ]
    (page,) = clips(load_vocoders(hifigan, hifigan, [parse_vocoder_argument(f"waveglow={tmp_path / 'waveglow.pt'}")]))
    assert page.versions[-1].label == "WaveGlow (sigma 0.9) on the FastPitch mel"
    assert page.versions[-1].audio.shape == (HOP * frames,) and np.isfinite(page.versions[-1].audio).all()
    assert "WaveGlow" in page.note
