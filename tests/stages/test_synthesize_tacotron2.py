"""Tacotron 2 as the acoustic model of synthesis: NVIDIA's checkpoint (tests/fixtures/nvidia_tacotron2, written
by their code) through the synthesizer against their ``infer``, its stopping rule and reproducible dropout,
the synthesize stage naming a phrase its gate never ended, and the config refusing what Tacotron 2 cannot do."""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

import pydantic
import pytest
import torch

from tts_pipeline.config import TextConfig
from tts_pipeline.errors import UserError
from tts_pipeline.files import read_jsonl
from tts_pipeline.inference import InferenceConfig, SynthesisOptions, Synthesizer, tacotron2_acoustic
from tts_pipeline.models.tacotron2 import Tacotron2, Tacotron2Config, save_tacotron2
from tts_pipeline.stages import synthesize as stage
from tts_pipeline.text import get_symbols

from ..inference_models import AUDIO, SYMBOL_SET, save_hifigan_file

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
NVIDIA_TACOTRON2 = FIXTURES / "nvidia_tacotron2" / "checkpoint_Tacotron2_0.pt"
NVIDIA_HIFIGAN = FIXTURES / "nvidia_pipeline" / "hifigan_gen_checkpoint_1.pt"
PHRASES = "hello|Hello there.\nlonger|The old lighthouse keeper painted the door blue.\n"


@pytest.fixture(autouse=True)
def one_thread():
    torch.set_num_threads(1)


def nvidia_synthesizer(**settings: object) -> Synthesizer:
    return Synthesizer.load(
        NVIDIA_TACOTRON2, NVIDIA_HIFIGAN, SynthesisOptions(fade_out_frames=0, acoustic_settings=settings),
        acoustic_model_kind="tacotron2", audio=AUDIO, text=TextConfig(),
    )  # fmt: skip


def test_nvidias_checkpoint_through_the_synthesizer_gives_nvidias_inference():
    """Their ``infer`` (dropout-free prenet, 40 steps) on their batch: the longest item, which reads no
    padding, gets their mel to 1e-4 and stops on the frame their gate fired on."""
    reference = torch.load(FIXTURES / "nvidia_tacotron2" / "reference_outputs.pt", weights_only=True)
    synth = nvidia_synthesizer(tacotron2_max_decoder_steps=40)
    synth.acoustic_model.tacotron2.decoder.prenet.p_dropout = 0.0  # their reference replaced the prenet likewise
    text, lengths = reference["text"], reference["text_lengths"]
    with torch.inference_mode():
        alone = synth.infer_mels(text[:1, : lengths[0]], lengths[:1])
    n = int(alone.mel_lengths[0])
    assert n == int(reference["infer_lengths"][0]) + 1  # NVIDIA's count leaves out the frame the gate fired on
    assert bool(alone.stopped[0])
    theirs = reference["infer_mel_postnet"][0, :, :n]
    assert float((alone.mel[0, :, :n] - theirs).abs().max()) < 1e-4


def test_text_becomes_speech_with_each_utterance_cut_at_its_stop_frame():
    synth = nvidia_synthesizer()
    texts = ["Hello there.", "The old lighthouse keeper painted the door blue."]
    for text, utterance in zip(texts, synth.synthesize(texts), strict=True):
        # the untrained fixture's gate fires on the third step (NVIDIA's reference says so)
        assert utterance.complete and utterance.n_frames == 3
        assert utterance.audio.shape == (3 * AUDIO.hop_length,) and utterance.mel.shape == (80, 3)
        assert utterance.n_tokens == len(synth.encode(text))
    assert synth.text_encoder is not None and synth.text_encoder.symbols == "characters"


def test_the_prenets_dropout_is_seeded_per_batch_and_leaves_the_callers_random_state_alone():
    synth = nvidia_synthesizer(tacotron2_gate_threshold=0.999, tacotron2_max_decoder_steps=12)
    tokens = torch.tensor([synth.encode("Printing, in the only sense.")])
    lengths = torch.tensor([tokens.shape[1]])
    torch.manual_seed(5)
    expected_next = torch.rand(3)
    torch.manual_seed(5)
    with torch.inference_mode():
        first = synth.infer_mels(tokens, lengths)
        second = synth.infer_mels(tokens, lengths)
    assert torch.equal(torch.rand(3), expected_next)
    assert torch.equal(first.mel, second.mel)
    # the dropout is really on: without it the frames differ
    synth.acoustic_model.tacotron2.decoder.prenet.p_dropout = 0.0
    with torch.inference_mode():
        plain = synth.infer_mels(tokens, lengths)
    assert not torch.allclose(plain.mel, first.mel)


def test_a_gate_that_never_fires_cuts_the_utterance_and_says_so():
    synth = nvidia_synthesizer(tacotron2_gate_threshold=0.999, tacotron2_max_decoder_steps=7)
    (utterance,) = synth.synthesize(["Hello there."])
    assert not utterance.complete and utterance.n_frames == 7


def test_pace_and_pitch_transforms_are_refused_for_tacotron2():
    with pytest.raises(pydantic.ValidationError, match="pace, pitch_shift_hz: Tacotron 2 has no durations"):
        InferenceConfig(acoustic_model="tacotron2", pace=1.2, pitch_shift_hz=20.0)
    synth = nvidia_synthesizer()
    tokens = torch.tensor([synth.encode("Hello.")])
    with pytest.raises(UserError, match="no durations or pitch"):
        synth.acoustic_runner.infer(tokens, torch.tensor([tokens.shape[1]]), pace=2.0, pitch_transform=None)


def test_a_tacotron2_file_needs_the_configs_audio_and_matching_mel_channels(tmp_path):
    with pytest.raises(UserError, match="records no audio settings"):
        tacotron2_acoustic.load(NVIDIA_TACOTRON2, audio=None, text=TextConfig(), settings={})
    with pytest.raises(UserError, match="predicts 80 mel channels, but audio.n_mel_channels is 40"):
        tacotron2_acoustic.load(
            NVIDIA_TACOTRON2, audio=AUDIO.model_copy(update={"n_mel_channels": 40}), text=TextConfig(), settings={}
        )


# --------------------------------------------------------------------------------------------------
# the synthesize stage
# --------------------------------------------------------------------------------------------------


def tiny_tacotron2_file(path: Path) -> Path:
    """A tiny random Tacotron 2 over english_basic characters, saved as train_tacotron2 saves it."""
    table = get_symbols(SYMBOL_SET)
    torch.manual_seed(0)
    config = Tacotron2Config(
        n_symbols=len(table), n_mel_channels=AUDIO.n_mel_channels, symbols_embedding_dim=16,
        encoder_embedding_dim=16, attention_rnn_dim=24, decoder_rnn_dim=20, prenet_dim=8,
        postnet_embedding_dim=10, attention_dim=6, attention_location_n_filters=4,
        attention_location_kernel_size=7,
    )  # fmt: skip
    model = Tacotron2(config).eval()
    with torch.no_grad():  # a gate that never passes 0.5: every phrase runs to the step limit
        model.decoder.gate_layer.linear_layer.weight.zero_()
        model.decoder.gate_layer.linear_layer.bias.fill_(-10.0)
    text = {"symbols": "characters", "symbol_set": SYMBOL_SET, "symbol_table": table}
    save_tacotron2(path, model, step=5, epoch=1, extra=text)
    return path


def test_the_stage_speaks_with_tacotron2_and_names_the_phrases_it_cut(tmp_path, caplog):
    acoustic = tiny_tacotron2_file(tmp_path / "tacotron2" / "model.pt")
    vocoder = save_hifigan_file(tmp_path / "hifigan" / "model.pt")
    (tmp_path / "phrases.txt").write_text(PHRASES, encoding="utf-8")
    cfg = InferenceConfig(gpus=0, batch_size=2, amp="off", acoustic_model="tacotron2", tacotron2_max_decoder_steps=9)
    payload = {"inference": cfg.model_dump(mode="json"), "audio": AUDIO.model_dump(mode="json"),
               "text": TextConfig().model_dump(mode="json")}  # fmt: skip
    argv = ["--section", json.dumps(payload), "--acoustic-model", str(acoustic), "--vocoder", str(vocoder),
            "--phrases", str(tmp_path / "phrases.txt"), "--out-dir", str(tmp_path / "out")]  # fmt: skip
    parser = argparse.ArgumentParser()
    stage.add_arguments(parser)
    with caplog.at_level(logging.WARNING):
        stage.run(parser.parse_args(argv))
    records = read_jsonl(tmp_path / "out" / "manifest.jsonl")
    assert [record["name"] for record in records] == ["hello", "longer"]
    for line, record in enumerate(records, start=1):
        assert record["n_frames"] == 9 and record["complete"] is False
        assert (tmp_path / "out" / record["wav"]).is_file()
        assert f"phrases.txt:{line}: phrase {record['name']!r} was cut at 9 frames" in caplog.text
