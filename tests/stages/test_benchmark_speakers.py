"""The benchmark with a multi-speaker FastPitch (tiny models): one full-TTS intelligibility row per speaker,
each FastPitch as that speaker with the ``tts`` row's options, in report.json, report.md and the HTML
pages; a single-speaker model gets no such rows."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from tts_pipeline.benchmark import listening
from tts_pipeline.benchmark.document import headline_metrics
from tts_pipeline.config import TextConfig
from tts_pipeline.inference import fastpitch_acoustic
from tts_pipeline.models.fastpitch import FastPitch
from tts_pipeline.models.fastpitch.data import PitchStats, Speaker, Speakers
from tts_pipeline.models.fastpitch.model_file import save_fastpitch
from tts_pipeline.report.audio_pages import held_out_clips
from tts_pipeline.report.pages import markdown_page
from tts_pipeline.text import get_symbols

from ..inference_models import AUDIO, LOG_DURATION_BIAS, PITCH, TINY_FASTPITCH, save_fastpitch_file, text_settings
from .test_benchmark import VAL_IDS, root, run_stage, section  # noqa: F401 (root is a fixture)

NVIDIA_SPEAKERS = Path(__file__).parents[1] / "fixtures" / "nvidia_fastpitch_speakers" / "FastPitch_checkpoint_1.pt"
STATS = {"high": PitchStats(230.0, 27.0), "low": PitchStats(80.0, 8.0), "mid": PitchStats(150.0, 15.0)}
ROWS = [listening.speaker_row(name) for name in STATS]
GROUND_TRUTH_ROWS = ["recordings", "griffin_lim_ground_truth", "hifigan_base_ground_truth",
                     "hifigan_fine_tuned_ground_truth", "griffin_lim_fastpitch"]  # fmt: skip


@pytest.fixture(autouse=True)
def one_thread():
    torch.set_num_threads(1)


def save_speakers_file(path: Path) -> Path:
    """A tiny three-speaker FastPitch file with named speakers, as train_fastpitch writes it."""
    torch.manual_seed(0)
    config = TINY_FASTPITCH.model_copy(update={"n_speakers": len(STATS)})
    model = FastPitch(config, len(get_symbols("english_basic")), AUDIO.n_mel_channels, PITCH.mean, PITCH.std).eval()
    with torch.no_grad():
        model.duration_predictor.fc.bias.fill_(LOG_DURATION_BIAS)
    speakers = Speakers(tuple(Speaker(name, stats) for name, stats in STATS.items()))
    save_fastpitch(path, model, step=1, epoch=1, learning_rate=1e-3, text=text_settings(), pitch=PITCH, audio=AUDIO,
                   speakers=speakers)  # fmt: skip
    return path


def payload(speaker: str | None = None, **benchmark: object) -> str:
    """A quick benchmark (fp32, batch 1, one call) at ``inference.amp: off`` (every row's FastPitch at
    the same precision, so that two rows of the same voice give the same mels), ``inference.speaker``."""
    values = json.loads(section(precisions=["fp32"], batch_sizes=[1], repeats=1, warmup=0, **benchmark))
    values["inference"] |= {"amp": "off", "speaker": speaker}
    return json.dumps(values)


@pytest.fixture
def spoken(monkeypatch) -> dict:
    """What the listening test is given and makes: ``tts`` (its full-TTS synthesizers by row) and
    ``mels`` (each row's mels per utterance)."""
    seen: dict = {}
    real = listening.row_audio

    def spy(utterances, audio_cfg, tts, vocoders, workers=1):
        made = real(utterances, audio_cfg, tts, vocoders, workers)
        seen.update(tts=dict(tts), mels=made.mels)
        return made

    monkeypatch.setattr(listening, "row_audio", spy)
    return seen


def test_a_row_per_speaker_each_in_its_own_voice(root, spoken):  # noqa: F811
    save_speakers_file(root / "fastpitch" / "model.pt")
    report = run_stage(root, payload=payload("low", intelligibility_clips=2, n_figures=1))

    section_ = report["quality"]["intelligibility"]
    rows = {row["name"]: row for row in section_["rows"]}
    assert list(rows) == [*GROUND_TRUTH_ROWS, "tts", *ROWS]
    for name in STATS:
        row = rows[listening.speaker_row(name)]
        assert row["description"] == f"FastPitch + fine-tuned HiFi-GAN (full TTS, speaker {name})"
        assert row["closed"]["clips"] == 2 and set(row["hypotheses"]["closed"]) == set(VAL_IDS[:2])
        assert 0 <= row["closed"]["sentence_accuracy"] <= 1 and row["closed"]["sentence_accuracy_se"] >= 0
    assert rows["tts"]["description"] == "FastPitch + fine-tuned HiFi-GAN (full TTS)"

    # Each row's FastPitch speaks as its speaker, with that speaker's pitch, at the tts row's options.
    tts = spoken["tts"]
    for name, stats in STATS.items():
        synth = tts[listening.speaker_row(name)]
        assert synth.acoustic_model.n_speakers == 1
        assert float(synth.acoustic_model.pitch_mean) == stats.mean
        assert float(synth.acoustic_model.pitch_std) == stats.std
        assert synth.options == tts["tts"].options.speaking_as(name)
        assert synth.precision.amp == tts["tts"].precision.amp and synth.vocoder is tts["tts"].vocoder
    # The tts row is inference.speaker's voice: the same mels as that speaker's row; the others differ.
    mels = spoken["mels"]
    for index in range(2):
        assert np.array_equal(mels["tts_speaker_low"][index], mels["tts"][index])
        for other in ("tts_speaker_high", "tts_speaker_mid"):
            ours, theirs = mels["tts_speaker_low"][index], mels[other][index]
            assert ours.shape != theirs.shape or not np.allclose(ours, theirs, atol=1e-3), other

    # The figures, WAVs, pause table and tracker's figures have every speaker too.
    (example,) = section_["examples"]
    assert set(ROWS) <= set(example["wavs"]) and all(Path(example["wavs"][row]).is_file() for row in ROWS)
    assert [row["name"] for row in report["quality"]["pauses"]["rows"]] == list(rows)
    metrics = headline_metrics(report)
    mid = rows["tts_speaker_mid"]["closed"]
    assert metrics["asr_closed_sentence_accuracy_se_tts_speaker_mid"] == mid["sentence_accuracy_se"]

    # Markdown, its HTML page and the held-out audio pages label each speaker's row.
    markdown = (root / "benchmark" / "report.md").read_text(encoding="utf-8")
    html = markdown_page("Benchmark", markdown)
    labels = {version.label for clip in held_out_clips(section_, AUDIO) for version in clip.versions}
    for name in STATS:
        label = f"FastPitch + fine-tuned HiFi-GAN (full TTS, speaker {name})"
        assert f"| {label} " in markdown and f"<td>{label}</td>" in html and label in labels


def test_a_single_speaker_model_gets_no_speaker_rows(root, spoken):  # noqa: F811
    report = run_stage(root, payload=payload(intelligibility_clips=1, n_figures=0, recognise=False))
    assert list(spoken["tts"]) == ["tts"]
    assert [row["name"] for row in report["quality"]["pauses"]["rows"]] == [*GROUND_TRUTH_ROWS, "tts"]


def test_the_voices_of_a_fastpitch_file(tmp_path):
    assert fastpitch_acoustic.voices(save_speakers_file(tmp_path / "m.pt"), audio=None, text=None) == tuple(STATS)
    # NVIDIA's multi-speaker file names no speaker: its voices are its ids, as inference.speaker takes them
    assert fastpitch_acoustic.voices(NVIDIA_SPEAKERS, audio=AUDIO, text=TextConfig()) == ("0", "1", "2")
    assert fastpitch_acoustic.voices(save_fastpitch_file(tmp_path / "single.pt"), audio=None, text=None) == ()
