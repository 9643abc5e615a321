"""The vocoder and acoustic-model seams: a kind is one module (``load``, ``prepare``) and one row of
``tts_pipeline.config.model_kinds``. Fake kinds, each made of one row and one module, speak through the
real synthesizer; the config takes its vocoder choices from the same table; every real row is whole."""

from __future__ import annotations

import importlib
import inspect
import sys
import types
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest
import torch
import yaml
from torch import nn

from tts_pipeline import stage_table
from tts_pipeline.config import AudioConfig, ConfigError, InferenceConfig, PipelineConfig, model_kinds, parse_config
from tts_pipeline.config.model_kinds import AcousticModelKind, VocoderKind
from tts_pipeline.inference import SynthesisOptions, Synthesizer, TextEncoder
from tts_pipeline.inference.seams import LoadedAcousticModel, LoadedVocoder
from tts_pipeline.workflow import Pipeline

from ..conftest import REPO

AUDIO = AudioConfig(n_mel_channels=4, hop_length=8, win_length=32, filter_length=32)
FRAMES_PER_SYMBOL = 3


class FakeVocoder(nn.Module):
    """``(B, n_mels, T)`` -> ``(B, 1, T * hop)``: each frame's mean level, held for a hop, times ``gain``."""

    def __init__(self, gain: float) -> None:
        super().__init__()
        self.gain = nn.Parameter(torch.tensor(gain))

    def forward(self, mel: torch.Tensor) -> torch.Tensor:
        return self.gain * mel.mean(dim=1, keepdim=True).repeat_interleave(AUDIO.hop_length, dim=-1)


class FakeMels(NamedTuple):
    mel: torch.Tensor
    mel_lengths: torch.Tensor


class FakeAcousticModel(nn.Module):
    """Each symbol -> ``FRAMES_PER_SYMBOL / pace`` frames at the level ``symbol / 100``; 0 on padding."""

    def __init__(self) -> None:
        super().__init__()
        self.unused = nn.Parameter(torch.zeros(1))

    def infer(self, tokens, token_lengths, *, pace, pitch_transform) -> FakeMels:
        frames = round(FRAMES_PER_SYMBOL / pace)
        levels = (tokens.float() / 100.0).repeat_interleave(frames, dim=1)  # (B, N * frames)
        return FakeMels(levels[:, None, :].expand(-1, AUDIO.n_mel_channels, -1), token_lengths * frames)


def vocoder_module(gain: float, calls: list) -> types.ModuleType:
    """A vocoder kind's module: ``load`` reads the gain times ``settings["fake_gain"]``; ``prepare`` keeps it."""
    module = types.ModuleType(f"fake_vocoder_{gain:g}")

    def load(path, *, audio, settings):
        calls.append(("load vocoder", Path(path), dict(settings)))
        return LoadedVocoder(FakeVocoder(gain * settings.get("fake_gain", 1.0)), AUDIO, 7, "Fake vocoder")

    def prepare(model, precision):
        calls.append(("prepare vocoder", precision.amp))
        return model

    module.load, module.prepare = load, prepare
    return module


def acoustic_module(calls: list) -> types.ModuleType:
    module = types.ModuleType("fake_acoustic")

    def load(path, *, audio, text, settings):
        calls.append(("load acoustic model", Path(path), dict(settings)))
        encoder = TextEncoder(cleaners="english_cleaners_v2", symbols="characters", symbol_set="english_basic")
        return LoadedAcousticModel(FakeAcousticModel(), AUDIO, encoder, 3, "Fake acoustic model")

    def prepare(model, precision):
        calls.append(("prepare acoustic model", precision.amp))
        return model  # it runs as it is: its infer is the seam's

    module.load, module.prepare = load, prepare
    return module


def fake_vocoder_row(module: str) -> VocoderKind:
    return VocoderKind(
        "fake", "Fake", module, trained_by="train_fake", folder="fake", section="audio",
        fits_audio=lambda section, audio: None,
    )  # fmt: skip


@pytest.fixture
def calls(monkeypatch) -> list:
    """Registers the fake modules and one row of each kind; returns what the modules were asked."""
    calls: list = []
    monkeypatch.setitem(sys.modules, "fake_vocoder_1", vocoder_module(1.0, calls))
    monkeypatch.setitem(sys.modules, "fake_vocoder_2", vocoder_module(2.0, calls))
    monkeypatch.setitem(sys.modules, "fake_acoustic", acoustic_module(calls))
    monkeypatch.setattr(model_kinds, "VOCODERS", (*model_kinds.VOCODERS, fake_vocoder_row("fake_vocoder_1")))
    fake_acoustic = AcousticModelKind(
        "fake_acoustic", "Fake acoustic model", "fake_acoustic", trained_by="train_fake_acoustic",
        folder="fake_acoustic", pretrained="fake_acoustic.checkpoint", settings=("fake_setting",),
    )  # fmt: skip
    monkeypatch.setattr(model_kinds, "ACOUSTIC_MODELS", (*model_kinds.ACOUSTIC_MODELS, fake_acoustic))
    return calls


def load(tmp_path: Path, **options: object) -> Synthesizer:
    return Synthesizer.load(
        tmp_path / "acoustic.pt", tmp_path / "vocoder.pt", SynthesisOptions(fade_out_frames=0, **options),
        acoustic_model_kind="fake_acoustic", vocoder_kind="fake", audio=AUDIO, amp="off",
    )  # fmt: skip


def test_fake_kinds_of_one_row_and_one_module_each_speak_through_the_synthesizer(calls, tmp_path):
    synth = load(tmp_path, vocoder_settings={"fake_gain": 0.5}, acoustic_settings={"fake_setting": 3}, batch_size=2)
    assert calls == [
        ("load vocoder", tmp_path / "vocoder.pt", {"fake_gain": 0.5}),
        ("load acoustic model", tmp_path / "acoustic.pt", {"fake_setting": 3}),
        ("prepare vocoder", "off"),
        ("prepare acoustic model", "off"),
    ]
    assert isinstance(synth.vocoder, FakeVocoder) and isinstance(synth.acoustic_model, FakeAcousticModel)
    texts = ["Hello there.", "Hi.", "A somewhat longer sentence."]
    utterances = synth.synthesize(texts)
    for text, utterance in zip(texts, utterances, strict=True):
        tokens = synth.encode(text)
        assert utterance.n_tokens == len(tokens) and utterance.n_frames == FRAMES_PER_SYMBOL * len(tokens)
        assert utterance.mel.shape == (AUDIO.n_mel_channels, utterance.n_frames)
        assert utterance.audio.shape == (utterance.n_frames * AUDIO.hop_length,)
        # the fake vocoder's audio: each symbol's level, held for its frames' samples, times the gain 0.5
        held = np.repeat(np.asarray(tokens, dtype=np.float32) / 100.0, FRAMES_PER_SYMBOL * AUDIO.hop_length)
        np.testing.assert_allclose(utterance.audio, 0.5 * held, rtol=1e-6)
        assert utterance.fastpitch_ms is not None and utterance.vocoder_ms > 0
    # a ground-truth mel goes through the same vocoder
    (vocoded,) = synth.vocode([np.ones((AUDIO.n_mel_channels, 5), dtype=np.float32)])
    np.testing.assert_allclose(vocoded.audio, np.full(5 * AUDIO.hop_length, 0.5, dtype=np.float32))


def test_the_table_not_the_code_chooses_the_module(calls, tmp_path, monkeypatch):
    before = load(tmp_path).synthesize(["Hello."])[0].audio
    monkeypatch.setattr(model_kinds, "VOCODERS", (*model_kinds.VOCODERS[:-1], fake_vocoder_row("fake_vocoder_2")))
    after = load(tmp_path).synthesize(["Hello."])[0].audio
    np.testing.assert_allclose(after, 2.0 * before)
    with pytest.raises(KeyError, match="unknown vocoder 'melgan'; expected one of hifigan, waveglow, fake"):
        Synthesizer.load(None, tmp_path / "vocoder.pt", SynthesisOptions(), vocoder_kind="melgan")


def test_a_new_row_is_a_choice_of_the_config(calls):
    assert InferenceConfig(vocoder="fake").vocoder == "fake"


def test_the_config_refuses_an_unknown_vocoder_naming_the_key_and_the_table_s_names():
    demo = yaml.safe_load((REPO / "config/demo.yaml").read_text())
    demo["inference"]["vocoder"] = "melgan"
    with pytest.raises(ConfigError) as error:
        parse_config(demo)
    message = str(error.value)
    assert "inference.vocoder: unknown vocoder; expected one of hifigan, waveglow (got 'melgan')" in message
    schema = PipelineConfig.model_json_schema()["$defs"]["InferenceConfig"]["properties"]["vocoder"]
    assert schema["enum"] == list(model_kinds.vocoder_names())


@pytest.mark.parametrize("kind", model_kinds.VOCODERS, ids=lambda kind: kind.name)
def test_every_vocoder_row_names_what_exists(kind):
    module = importlib.import_module(kind.module)
    assert list(inspect.signature(module.load).parameters) == ["path", "audio", "settings"]
    assert list(inspect.signature(module.prepare).parameters) == ["model", "precision"]
    assert stage_table.stage(kind.trained_by)
    assert set(kind.settings) <= set(InferenceConfig.model_fields)
    config = PipelineConfig(experiment="x")
    kind.fits_audio(getattr(config, kind.section), config.audio)
    pipeline = Pipeline(yaml.safe_load((REPO / "config/demo.yaml").read_text()))
    assert pipeline.vocoder_model(kind).endswith(f"/{kind.folder}/model.pt")


@pytest.mark.parametrize("kind", model_kinds.ACOUSTIC_MODELS, ids=lambda kind: kind.name)
def test_every_acoustic_model_row_names_a_module_with_load_and_prepare(kind):
    module = importlib.import_module(kind.module)
    assert list(inspect.signature(module.load).parameters) == ["path", "audio", "text", "settings"]
    assert list(inspect.signature(module.prepare).parameters) == ["model", "precision"]
