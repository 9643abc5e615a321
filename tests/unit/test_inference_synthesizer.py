"""The synthesizer on tiny random models: batching never changes an utterance, lengths, pace, timings,
vocoding mels, agreement checks, text encoding as the model was trained, precision on the CPU."""

from __future__ import annotations

import logging

import numpy as np
import pytest
import torch

from tts_pipeline.config import AudioConfig
from tts_pipeline.errors import UserError
from tts_pipeline.inference import InferenceConfig, SynthesisOptions, Synthesizer, TextEncoder, check_audio_agreement
from tts_pipeline.models.fastpitch import PitchTransform
from tts_pipeline.models.fastpitch.data import TextSettings
from tts_pipeline.text import encode, normalize_text

from ..inference_models import AUDIO, text_settings, tiny_models, tiny_synthesizer_of

HOP = AUDIO.hop_length
TEXTS = [
    "Hello there.",
    "The old lighthouse keeper painted the door a bright shade of blue.",
    "Yes!",
    "Would you like tea or coffee with your breakfast?",
    "It costs 25 dollars.",
]


@pytest.fixture(autouse=True)
def one_thread():
    torch.set_num_threads(1)


@pytest.fixture(scope="module")
def models():
    return tiny_models()


def synthesizer(models, **options) -> Synthesizer:
    return tiny_synthesizer_of(models, **options)


def test_each_utterance_is_the_same_alone_and_in_a_batch(models):
    synth = synthesizer(models, batch_size=3, denoising_strength=0.01)
    batched = synth.synthesize(TEXTS)
    assert len({u.batch for u in batched}) == 2
    for text, utterance in zip(TEXTS, batched, strict=True):
        (alone,) = synth.synthesize([text])
        assert alone.n_frames == utterance.n_frames
        np.testing.assert_allclose(utterance.mel, alone.mel, atol=1e-4, rtol=0)
        np.testing.assert_allclose(utterance.audio, alone.audio, atol=1e-4, rtol=0)
        assert np.abs(alone.audio).max() > 0.05  # a real signal, not a constant


def test_results_come_back_in_input_order_with_their_lengths_and_batch_timings(models):
    synth = synthesizer(models, batch_size=2, fade_out_frames=0)
    utterances = synth.synthesize(TEXTS)
    encoded = [synth.encode(text) for text in TEXTS]
    assert [u.index for u in utterances] == list(range(len(TEXTS)))
    assert [u.n_tokens for u in utterances] == [len(ids) for ids in encoded]
    longest = max(range(len(TEXTS)), key=lambda i: len(encoded[i]))
    assert utterances[longest].batch == 0  # the longest utterances go first
    for utterance in utterances:
        assert utterance.audio.dtype == np.float32 and utterance.audio.shape == (utterance.n_frames * HOP,)
        assert utterance.mel.shape == (AUDIO.n_mel_channels, utterance.n_frames)
        assert utterance.fastpitch_ms > 0 and utterance.vocoder_ms > 0
    by_batch: dict[int, set[tuple[float, float, int]]] = {}
    for u in utterances:
        by_batch.setdefault(u.batch, set()).add((u.fastpitch_ms, u.vocoder_ms, u.batch_size))
    assert all(len(times) == 1 for times in by_batch.values())  # one timing per batch
    assert sorted(size for ((_, _, size),) in by_batch.values()) == [1, 2, 2]


def test_padded_vocoding_matches_exact_vocoding_on_equal_lengths(models):
    same = ["The same sentence, twice."] * 2
    exact = synthesizer(models, batch_size=2).synthesize(same)
    padded = synthesizer(models, batch_size=2, vocoder_batching="padded").synthesize(same)
    for a, b in zip(exact, padded, strict=True):
        np.testing.assert_allclose(a.audio, b.audio, atol=1e-5, rtol=0)


def test_half_pace_roughly_doubles_the_length_and_pitch_transforms_change_the_mel(models):
    normal = synthesizer(models).synthesize(TEXTS[1:2])[0]
    slow = synthesizer(models, pace=0.5).synthesize(TEXTS[1:2])[0]
    assert 1.8 < slow.n_frames / normal.n_frames < 2.2
    flat = synthesizer(models, pitch_transform=PitchTransform(flatten=True)).synthesize(TEXTS[1:2])[0]
    assert flat.n_frames == normal.n_frames and not np.allclose(flat.mel, normal.mel)


def test_vocoding_ground_truth_mels_gives_the_same_waveform_as_synthesis(models):
    synth = synthesizer(models, batch_size=2, denoising_strength=0.02)
    utterances = synth.synthesize(TEXTS[:3])
    vocoded = synth.vocode([u.mel for u in utterances])
    for utterance, again in zip(utterances, vocoded, strict=True):
        assert again.n_tokens is None and again.fastpitch_ms is None and again.vocoder_ms > 0
        np.testing.assert_allclose(again.audio, utterance.audio, atol=1e-4, rtol=0)
    with pytest.raises(UserError, match=r"mel 1: expected shape \(80, T\)"):
        synth.vocode([np.zeros((40, 10), dtype=np.float32)])


def test_peak_normalisation_is_optional(models):
    plain = synthesizer(models).synthesize(TEXTS[:1])[0]
    normalised = synthesizer(models, normalize_peak=True).synthesize(TEXTS[:1])[0]
    assert np.abs(normalised.audio).max() == pytest.approx(1.0)
    assert np.abs(plain.audio).max() < 1.0


def test_options_from_the_inference_section():
    options = SynthesisOptions.from_config(InferenceConfig())
    assert options.pitch_transform is None and options.denoising_strength == 0.01 and options.fade_out_frames == 10
    assert options.vocoder_settings == {"waveglow_sigma": 0.9}  # every vocoder row's settings
    shifted = SynthesisOptions.from_config(InferenceConfig(pitch_shift_hz=20.0, pitch_invert=True, batch_size=2))
    assert shifted.pitch_transform == PitchTransform(invert=True, shift_hz=20.0) and shifted.batch_size == 2


def test_fp16_on_the_cpu_runs_fp32_and_says_so(models, caplog):
    with caplog.at_level(logging.INFO, logger="tts_pipeline.precision"):
        synth = Synthesizer(models[1], AUDIO, SynthesisOptions(), device="cpu", amp="fp16")
    assert synth.precision.amp == "off"
    assert "inference.amp: fp32 on cpu (inference.amp fp16 is a CUDA mode" in caplog.text
    with pytest.raises(UserError, match="no acoustic model"):
        synth.synthesize(["Hello."])


def test_audio_settings_must_agree_and_errors_name_both_models(caplog):
    check_audio_agreement(AUDIO, AudioConfig(), "fastpitch.pt", "hifigan.pt")
    with pytest.raises(UserError, match=r"fastpitch\.pt and hifigan\.pt disagree .*sampling_rate 22050 vs 16000"):
        check_audio_agreement(AUDIO, AudioConfig(sampling_rate=16000), "fastpitch.pt", "hifigan.pt")
    with pytest.raises(UserError, match="n_mel_channels 80 vs 64"):
        check_audio_agreement(AUDIO, AudioConfig(n_mel_channels=64), "a", "b")
    with caplog.at_level(logging.WARNING):
        check_audio_agreement(AUDIO, AudioConfig(mel_fmax=7600.0), "a", "b")
    assert "mel_fmax" in caplog.text


def test_text_is_encoded_as_the_model_was_trained():
    characters = TextEncoder.from_settings(text_settings("characters"), "fp.pt")
    arpabet = TextEncoder.from_settings(text_settings("arpabet"), "fp.pt")
    text = "Dr. Smith paid 5 dollars."
    cleaned = normalize_text(text, "english_cleaners_v2")
    assert characters.encode(text) == encode(cleaned, "characters", "english_basic")
    assert arpabet.encode(text) == encode(cleaned, "arpabet", "english_basic")
    assert len(arpabet.encode(text)) < len(characters.encode(text))
    with pytest.raises(UserError, match="empty after"):
        characters.encode("   ")


def test_models_that_cannot_read_text_are_refused_clearly():
    textgrid = TextSettings(symbols=("_", "sil", "AH0"), source="textgrid", symbols_kind="textgrid")
    with pytest.raises(UserError, match=r"fp\.pt: this FastPitch model was trained on TextGrid phone labels"):
        TextEncoder.from_settings(textgrid, "fp.pt")
    shorter = TextSettings.from_dict({**text_settings().as_dict(), "symbols": ["_", "a", "b"]})
    with pytest.raises(UserError, match=r"fp\.pt: its symbol table \(3 symbols\) differs"):
        TextEncoder.from_settings(shorter, "fp.pt")
    no_cleaners = TextSettings.from_dict({**text_settings().as_dict(), "cleaners": None})
    with pytest.raises(UserError, match="does not record its text cleaners"):
        TextEncoder.from_settings(no_cleaners, "fp.pt")


def test_streaming_yields_each_text_as_its_batch_is_done_and_equals_synthesis_of_the_whole(models):
    synth = synthesizer(models, batch_size=2, max_piece_symbols=40)
    pieces = [synth.encode_pieces(text) for text in TEXTS]
    assert max(len(p) for p in pieces) > 1  # a text in pieces, joined when its last piece is done
    whole = synth.synthesize_pieces(pieces)
    calls = []
    run_batch = synth.run_batch
    synth.run_batch = lambda *args: calls.append(1) or run_batch(*args)
    stream = synth.stream_pieces(pieces, window=2)  # two texts a window: three windows
    first = next(stream)
    assert len(calls) <= 2, "the first text came before the rest was synthesised"
    streamed = sorted([first, *stream], key=lambda utterance: utterance.index)
    assert [u.index for u in streamed] == list(range(len(TEXTS)))
    windows = [[u.batch for u in streamed[start : start + 2]] for start in (0, 2, 4)]
    assert max(windows[0]) < min(windows[1]) <= max(windows[1]) < min(windows[2])  # numbered on across windows
    for alone, windowed in zip(whole, streamed, strict=True):
        assert windowed.n_pieces == alone.n_pieces and windowed.n_frames == alone.n_frames
        np.testing.assert_allclose(windowed.audio, alone.audio, atol=1e-4, rtol=0)
