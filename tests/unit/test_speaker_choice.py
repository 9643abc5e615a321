"""Choosing the voice of a multi-speaker FastPitch at synthesis (``inference.speaker``): the single-speaker
copy that speaks as one speaker, by name (a file trained on named speakers) or by id (NVIDIA's file),
with that speaker's pitch statistics, and the errors that name the setting and the file's speakers."""

from __future__ import annotations

from pathlib import Path

import pydantic
import pytest
import torch

from tests.inference_models import AUDIO, PITCH, TINY_FASTPITCH, save_hifigan_file, text_settings
from tts_pipeline.config import TextConfig
from tts_pipeline.errors import UserError
from tts_pipeline.inference import InferenceConfig, SynthesisOptions, Synthesizer
from tts_pipeline.models.fastpitch import FastPitch
from tts_pipeline.models.fastpitch.data import PitchStats, Speaker, Speakers
from tts_pipeline.models.fastpitch.model_file import load_fastpitch, save_fastpitch
from tts_pipeline.text import get_symbols

NVIDIA_SPEAKERS = Path(__file__).parents[1] / "fixtures" / "nvidia_fastpitch_speakers" / "FastPitch_checkpoint_1.pt"
NAMED = Speakers((Speaker("high", PitchStats(230.0, 27.0)), Speaker("low", PitchStats(80.0, 8.0))))


@pytest.fixture(autouse=True)
def one_thread():
    torch.set_num_threads(1)


def tokens(n: int = 15, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    ids = torch.randint(1, len(get_symbols("english_basic")), (2, n), generator=generator)
    return ids, torch.tensor([n, n - 4])


def named_speakers_file(path: Path) -> Path:
    """A tiny two-speaker FastPitch file with named speakers, as train_fastpitch writes it."""
    torch.manual_seed(0)
    config = TINY_FASTPITCH.model_copy(update={"n_speakers": 2})
    model = FastPitch(config, len(get_symbols("english_basic")), AUDIO.n_mel_channels, PITCH.mean, PITCH.std).eval()
    with torch.no_grad():
        model.duration_predictor.fc.bias.fill_(1.5)
    save_fastpitch(path, model, step=1, epoch=1, learning_rate=1e-3, text=text_settings(), pitch=PITCH, audio=AUDIO,
                   speakers=NAMED)  # fmt: skip
    return path


@pytest.mark.parametrize("speaker", [0, 1, 2])
def test_the_copy_as_one_speaker_speaks_as_that_speaker(speaker):
    model, _ = load_fastpitch(NVIDIA_SPEAKERS, text=TextConfig(), audio=AUDIO)
    voice = model.as_speaker(speaker)
    assert voice.n_speakers == 1 and voice.speaker_emb is None
    assert not any(name.startswith("speaker_emb") for name in voice.state_dict())
    ids, lengths = tokens()
    with torch.no_grad():
        expected, got = model.infer(ids, lengths, speaker=speaker), voice.infer(ids, lengths)
    assert torch.equal(expected.mel_lengths, got.mel_lengths)
    assert float((expected.mel - got.mel).abs().max()) < 1e-5
    with pytest.raises(ValueError, match="out of range for a model with n_speakers 3"):
        model.as_speaker(3)


def test_inference_speaker_picks_a_named_speaker_and_its_pitch(tmp_path):
    path = named_speakers_file(tmp_path / "fastpitch.pt")
    model, info = load_fastpitch(path)
    vocoder = save_hifigan_file(tmp_path / "hifigan.pt")
    synth = Synthesizer.load(path, vocoder, SynthesisOptions(acoustic_settings={"speaker": "low"}), audio=AUDIO)
    assert float(synth.acoustic_model.pitch_mean) == 80.0 and float(synth.acoustic_model.pitch_std) == 8.0
    ids, lengths = tokens()
    with torch.no_grad():
        expected = model.infer(ids, lengths, speaker=info.speaker_id("low"))
        got = synth.infer_mels(ids, lengths)
    assert float((expected.mel - got.mel).abs().max()) < 1e-5
    # no speaker: speaker 0, the first name
    default = Synthesizer.load(path, vocoder, SynthesisOptions(), audio=AUDIO)
    assert float(default.acoustic_model.pitch_mean) == 230.0
    with pytest.raises(UserError, match=r"inference.speaker: speaker 'middle': .* its speakers: high, low"):
        Synthesizer.load(path, vocoder, SynthesisOptions(acoustic_settings={"speaker": "middle"}), audio=AUDIO)


def test_a_file_without_names_takes_an_id_and_a_single_speaker_file_none(tmp_path):
    vocoder = save_hifigan_file(tmp_path / "hifigan.pt")

    def load(path: Path, speaker: str) -> Synthesizer:
        options = SynthesisOptions(acoustic_settings={"speaker": speaker})
        return Synthesizer.load(path, vocoder, options, audio=AUDIO, text=TextConfig())

    assert load(NVIDIA_SPEAKERS, "2").acoustic_model.n_speakers == 1
    with pytest.raises(UserError, match=r"inference.speaker 'high': .* names no speakers: give an id 0 .. 2"):
        load(NVIDIA_SPEAKERS, "high")
    with pytest.raises(UserError, match="inference.speaker '3'"):
        load(NVIDIA_SPEAKERS, "3")
    from tests.inference_models import save_fastpitch_file

    single = save_fastpitch_file(tmp_path / "single.pt")
    assert load(single, "0").acoustic_model.n_speakers == 1  # its only speaker
    for other in ("1", "high"):
        with pytest.raises(UserError, match="is a single-speaker model: leave inference.speaker null"):
            load(single, other)


def test_the_config_refuses_a_speaker_for_tacotron2():
    assert InferenceConfig(speaker="low").speaker == "low"
    with pytest.raises(pydantic.ValidationError, match="speaker: Tacotron 2 speaks with one voice"):
        InferenceConfig(acoustic_model="tacotron2", speaker="low")
