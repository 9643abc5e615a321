"""Long text: split into pieces the model handles, joined with pauses into one utterance; over-long
phrases refused before any model runs, naming the phrase and the limit."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tts_pipeline.errors import UserError
from tts_pipeline.inference import Synthesizer
from tts_pipeline.inference.chunking import MAX_PHRASE_SYMBOLS, MAX_PIECE_SYMBOLS, split_text
from tts_pipeline.inference.utterance import LOG_FLOOR_VALUE

from ..inference_models import AUDIO, tiny_models, tiny_synthesizer_of

HOP = AUDIO.hop_length
PARAGRAPH = (
    "The old lighthouse keeper painted the door a bright shade of blue. "
    "Would you like tea or coffee with your breakfast? "
    "Yes! The storm rolled in from the west; the boats came home early, one after another, "
    "and the harbour filled with tired voices: fishermen, children and dogs."
)


def words(text: str) -> list[str]:
    return text.split()


def test_a_long_paragraph_is_split_at_sentence_ends_in_order_under_the_limit():
    pieces = split_text(PARAGRAPH, limit=70)
    assert len(pieces) > 2
    assert all(len(piece) <= 70 for piece in pieces)
    assert words(" ".join(pieces)) == words(PARAGRAPH)
    assert pieces[0] == "The old lighthouse keeper painted the door a bright shade of blue."
    assert pieces[1] == "Would you like tea or coffee with your breakfast? Yes!"
    # Too long for one piece, the storm sentence is split at its commas.
    assert "the boats came home early, one after another," in pieces


def test_short_text_stays_whole_and_the_default_limit_fits_ljspeech_sentences():
    assert split_text("  Hello there.  ") == ["Hello there."]
    first, second = split_text(PARAGRAPH)  # 260 characters: two pieces, packed up to a sentence end
    assert first.endswith("from the west;") and len(first) <= MAX_PIECE_SYMBOLS
    assert f"{first} {second}" == PARAGRAPH
    assert 190 <= MAX_PIECE_SYMBOLS < MAX_PHRASE_SYMBOLS


def test_a_run_without_punctuation_splits_at_spaces_never_inside_a_word():
    text = " ".join(["lighthouse", "keeper", "blue", "door"] * 30)
    pieces = split_text(text, limit=50)
    assert all(len(piece) <= 50 for piece in pieces)
    assert words(" ".join(pieces)) == words(text)
    assert all(set(words(piece)) <= {"lighthouse", "keeper", "blue", "door"} for piece in pieces)


def test_only_a_word_longer_than_the_limit_is_cut():
    assert split_text("a " + "x" * 25 + " b", limit=10) == ["a", "x" * 10, "x" * 10, "x" * 5 + " b"]


def test_pieces_are_measured_in_symbols():
    # One symbol per word: five words fit in a piece of five.
    pieces = split_text("one two three four five six seven", limit=5, measure=lambda piece: len(piece.split()))
    assert pieces == ["one two three four five", "six seven"]


@pytest.fixture(scope="module")
def models():
    torch.set_num_threads(1)
    return tiny_models()


def synthesizer(models, **options) -> Synthesizer:
    return tiny_synthesizer_of(models, **options)


def test_an_over_long_phrase_is_refused_naming_it_and_the_limit_before_any_model_runs(models):
    synth = synthesizer(models)
    synth.acoustic_runner = None  # any model call would fail with a raw error
    long_text = "The keeper painted the door blue. " * 600  # 20,400 characters
    with pytest.raises(UserError, match=rf"text 2: text 'The keeper painted.*limit of {MAX_PHRASE_SYMBOLS} symbols"):
        synth.synthesize(["Hello.", long_text])


def test_the_stage_names_the_file_line_and_phrase_of_an_over_long_text(models, tmp_path):
    from tts_pipeline.stages.synthesize import _synthesize_phrases

    phrases = tmp_path / "phrases.txt"
    phrases.write_text("short|Hello there.\nessay|" + "One more sentence. " * 400 + "\n", encoding="utf-8")
    synth = synthesizer(models, max_phrase_symbols=1000)
    with pytest.raises(UserError, match=r"phrases\.txt:2: phrase 'essay': .*limit of 1000 symbols"):
        _synthesize_phrases(synth, phrases, tmp_path / "out", 10)
    assert not (tmp_path / "out").exists()


def test_a_long_text_becomes_one_utterance_of_its_pieces_joined_with_pauses(models):
    synth = synthesizer(models, batch_size=3, max_piece_symbols=70, pause_seconds=0.2)
    texts = ["Hello there.", PARAGRAPH, "Yes!"]
    pieces = split_text(synth.text_encoder.clean(PARAGRAPH), limit=70)
    utterances = synth.synthesize(texts)
    assert [u.index for u in utterances] == [0, 1, 2]
    assert [u.n_pieces for u in utterances] == [1, len(pieces), 1]
    long = utterances[1]
    assert long.audio.shape == (long.n_frames * HOP,)
    assert long.mel.shape == (AUDIO.n_mel_channels, long.n_frames)
    # Each piece spoken alone, in order, with 0.2 s of silence (log-floor mel, zero audio) between.
    alone = synth.synthesize_tokens([synth.text_encoder.encode_cleaned(piece) for piece in pieces])
    pause = round(0.2 * AUDIO.sampling_rate / HOP)
    assert long.n_frames == sum(u.n_frames for u in alone) + pause * (len(pieces) - 1)
    assert long.n_tokens == sum(u.n_tokens for u in alone)
    start = 0
    for number, piece in enumerate(alone):
        np.testing.assert_allclose(long.mel[:, start : start + piece.n_frames], piece.mel, atol=1e-4, rtol=0)
        np.testing.assert_allclose(
            long.audio[start * HOP : (start + piece.n_frames) * HOP], piece.audio, atol=1e-4, rtol=0
        )
        start += piece.n_frames
        if number < len(alone) - 1:
            assert np.all(long.mel[:, start : start + pause] == np.float32(LOG_FLOOR_VALUE))
            assert not long.audio[start * HOP : (start + pause) * HOP].any()
            start += pause
    assert start == long.n_frames
    # Short texts are spoken whole, as before.
    (hello,) = synth.synthesize_tokens([synth.encode("Hello there.")])
    np.testing.assert_allclose(utterances[0].audio, hello.audio, atol=1e-4, rtol=0)


def test_peak_normalisation_applies_to_the_joined_utterance(models):
    synth = synthesizer(models, max_piece_symbols=70, normalize_peak=True)
    (long,) = synth.synthesize([PARAGRAPH])
    assert long.n_pieces > 1
    assert np.max(np.abs(long.audio)) == pytest.approx(1.0, abs=1e-6)
