"""Multi-speaker FastPitch, checked against NVIDIA's own code.

``tests/fixtures/nvidia_fastpitch_speakers/`` holds a random 3-speaker FastPitch 1.1 written by NVIDIA's
``train.py`` code (``--n-speakers 3 --speaker-emb-weight 0.5``) and the outputs of their ``infer`` and
teacher-forced ``forward`` for each speaker on one sentence (its README says how they were made). The
file loads through the project's loader as it is and gives their outputs per speaker; a single-speaker
model keeps the state dict it always had; bad speaker ids fail with a message naming them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from tests.inference_models import TINY_FASTPITCH
from tts_pipeline.config import AudioConfig, ConfigError, FastPitchConfig, TextConfig, parse_config
from tts_pipeline.models.fastpitch import FastPitch, FastPitchInputs, convert_state_dict
from tts_pipeline.models.fastpitch.bf16 import bf16_inference_copy, is_held_in_bf16
from tts_pipeline.models.fastpitch.model_file import FastPitchInfo, load_fastpitch, save_fastpitch

FIXTURES = Path(__file__).parents[1] / "fixtures"
CHECKPOINT = FIXTURES / "nvidia_fastpitch_speakers" / "FastPitch_checkpoint_1.pt"
OUTPUTS = FIXTURES / "nvidia_fastpitch_speakers" / "nvidia_outputs.pt"
SINGLE_SPEAKER = FIXTURES / "nvidia_pipeline" / "FastPitch_checkpoint_1.pt"
SPEAKERS = (0, 1, 2)
# Float32 on one thread: the same sums in the same order, apart from fused attention (about 1e-6 here).
TOLERANCE = 1e-4

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def nvidia() -> tuple[FastPitch, FastPitchInfo]:
    """NVIDIA's 3-speaker file, loaded as ``synthesize`` loads it (text and audio from the config)."""
    return load_fastpitch(CHECKPOINT, text=TextConfig(), audio=AudioConfig())


@pytest.fixture(scope="module")
def theirs() -> dict:
    """What NVIDIA's ``infer`` and ``forward`` returned, keyed ``infer.<speaker>.<name>`` and
    ``forward.<speaker>.<name>``, with the inputs they were given."""
    return torch.load(OUTPUTS, weights_only=True)


def _tokens(theirs: dict) -> tuple[torch.Tensor, torch.Tensor]:
    tokens = theirs["tokens"]
    return tokens, torch.tensor([tokens.shape[1]])


def _max_diff(a: torch.Tensor, b: torch.Tensor) -> float:
    assert a.shape == b.shape, (a.shape, b.shape)
    return float((a.float() - b.float()).abs().max())


def tiny(n_speakers: int, seed: int = 0, speaker_emb_weight: float = 1.0) -> FastPitch:
    """The tests' tiny FastPitch with ``n_speakers``, eval mode."""
    torch.manual_seed(seed)
    config = TINY_FASTPITCH.model_copy(update={"n_speakers": n_speakers, "speaker_emb_weight": speaker_emb_weight})
    return FastPitch(config, n_symbols=20, n_mels=8).eval()


# --------------------------------------------------------------------------------------------------
# NVIDIA's multi-speaker checkpoint
# --------------------------------------------------------------------------------------------------


def test_their_multi_speaker_checkpoint_loads_with_its_speaker_table(nvidia) -> None:
    model, info = nvidia
    assert (model.n_speakers, model.speaker_emb_weight, info.n_speakers) == (3, 0.5, 3)
    assert info.model_config["n_speakers"] == 3 and info.model_config["speaker_emb_weight"] == 0.5
    their_state = torch.load(CHECKPOINT, map_location="cpu", weights_only=False)["state_dict"]
    torch.testing.assert_close(model.speaker_emb.weight, their_state["speaker_emb.weight"], rtol=0, atol=0)
    assert set(model.state_dict()) == set(convert_state_dict(their_state))


@pytest.mark.parametrize("speaker", SPEAKERS)
def test_infer_matches_nvidia_per_speaker(nvidia, theirs, speaker: int) -> None:
    model, _ = nvidia
    tokens, lengths = _tokens(theirs)
    for given in (speaker, torch.tensor(speaker), torch.tensor([speaker])):
        ours = model.infer(tokens, lengths, speaker=given)
        # Their durations are the clamped predictions; the frames used are floor(d + 0.5) (pace 1).
        their_frames = torch.floor(theirs[f"infer.{speaker}.durations"] + 0.5).long()
        assert torch.equal(ours.durations, their_frames)
        assert torch.equal(ours.mel_lengths, theirs[f"infer.{speaker}.mel_lengths"])
        assert _max_diff(ours.mel, theirs[f"infer.{speaker}.mel"]) < TOLERANCE
        assert _max_diff(ours.pitch, theirs[f"infer.{speaker}.pitch"][:, 0]) < TOLERANCE
        assert _max_diff(ours.energy, theirs[f"infer.{speaker}.energy"]) < TOLERANCE


def test_infer_without_a_speaker_is_speaker_0_as_in_nvidia(nvidia, theirs) -> None:
    model, _ = nvidia
    ours = model.infer(*_tokens(theirs))
    assert _max_diff(ours.mel, theirs["infer.0.mel"]) < TOLERANCE


@pytest.mark.parametrize("speaker", SPEAKERS)
def test_teacher_forced_forward_matches_nvidia_per_speaker(nvidia, theirs, speaker: int) -> None:
    """Their forward aligns a random mel with their aligner; ours takes the durations and the per-token
    pitch and energy targets it found, and must give their mel and predictions."""
    model, _ = nvidia
    tokens, lengths = _tokens(theirs)
    inputs = FastPitchInputs(
        tokens,
        lengths,
        durations=theirs[f"forward.{speaker}.durations"].long(),
        pitch=theirs[f"forward.{speaker}.pitch_target"][:, 0],
        energy=theirs[f"forward.{speaker}.energy_target"],
        speaker=torch.tensor([speaker]),
    )
    with torch.no_grad():
        ours = model(inputs, mel_max_len=theirs["mel_tgt"].shape[2])
    assert _max_diff(ours.mel, theirs[f"forward.{speaker}.mel"].transpose(1, 2)) < TOLERANCE
    assert _max_diff(ours.log_duration, theirs[f"forward.{speaker}.log_duration"]) < TOLERANCE
    assert _max_diff(ours.pitch, theirs[f"forward.{speaker}.pitch"][:, 0]) < TOLERANCE
    assert _max_diff(ours.energy, theirs[f"forward.{speaker}.energy"]) < TOLERANCE


def test_a_batch_of_speakers_gives_each_items_nvidia_output(nvidia, theirs) -> None:
    """(B,) speaker ids: each item as NVIDIA gives it alone (the padded frames of the shorter items
    are zero and change nothing of theirs)."""
    model, _ = nvidia
    tokens, lengths = _tokens(theirs)
    order = [2, 0, 1]
    ours = model.infer(tokens.repeat(3, 1), lengths.repeat(3), speaker=torch.tensor(order))
    for row, speaker in enumerate(order):
        frames = int(theirs[f"infer.{speaker}.mel_lengths"])
        assert int(ours.mel_lengths[row]) == frames
        assert _max_diff(ours.mel[row : row + 1, :, :frames], theirs[f"infer.{speaker}.mel"]) < TOLERANCE
        assert not ours.mel[row, :, frames:].any()


def test_different_speakers_give_different_mels(nvidia, theirs) -> None:
    model, _ = nvidia
    tokens, lengths = _tokens(theirs)
    frames = {speaker: int(model.infer(tokens, lengths, speaker=speaker).mel_lengths) for speaker in SPEAKERS}
    assert len(set(frames.values())) == 3, frames  # the durations depend on the speaker
    # Same durations, pitch and energy, so only the speaker differs: the mels still do.
    inputs = FastPitchInputs(
        tokens,
        lengths,
        durations=theirs["forward.0.durations"].long(),
        pitch=theirs["forward.0.pitch_target"][:, 0],
        energy=theirs["forward.0.energy_target"],
    )
    with torch.no_grad():
        mels = [model(inputs._replace(speaker=torch.tensor([speaker]))).mel for speaker in SPEAKERS]
    for a in range(3):
        for b in range(a + 1, 3):
            assert _max_diff(mels[a], mels[b]) > 0.1, (a, b)


def test_the_speaker_embedding_is_scaled_by_speaker_emb_weight() -> None:
    model = tiny(3, speaker_emb_weight=0.25)
    conditioning = model.speaker_embedding(torch.tensor([2, 0]), 2)
    assert conditioning.shape == (2, 1, 16)
    torch.testing.assert_close(conditioning[:, 0], model.speaker_emb.weight[[2, 0]] * 0.25, rtol=0, atol=0)
    assert tiny(1).speaker_embedding(None, 2) is None and tiny(1).speaker_embedding(0, 2) is None


# --------------------------------------------------------------------------------------------------
# single speaker unchanged
# --------------------------------------------------------------------------------------------------


def test_a_single_speaker_model_has_no_speaker_weights() -> None:
    single, multi = tiny(1), tiny(3)
    assert single.speaker_emb is None
    assert set(multi.state_dict()) == set(single.state_dict()) | {"speaker_emb.weight"}
    assert multi.speaker_emb.weight.shape == (3, 16)
    config = single.model_config()
    assert (config["n_speakers"], config["speaker_emb_weight"]) == (1, 1.0)


def test_nvidias_single_speaker_file_loads_with_the_same_keys(theirs) -> None:
    model, info = load_fastpitch(SINGLE_SPEAKER, text=TextConfig(), audio=AudioConfig())
    their_state = torch.load(SINGLE_SPEAKER, map_location="cpu", weights_only=False)["state_dict"]
    assert set(model.state_dict()) == set(convert_state_dict(their_state))
    assert model.speaker_emb is None and info.n_speakers == 1
    tokens, lengths = _tokens(theirs)
    torch.testing.assert_close(model.infer(tokens, lengths, speaker=0).mel, model.infer(tokens, lengths).mel)


def test_a_config_without_the_speaker_keys_is_one_speaker() -> None:
    """Model files written before the keys existed rebuild as the single-speaker model they were."""
    config = {k: v for k, v in tiny(1).model_config().items() if k not in ("n_speakers", "speaker_emb_weight")}
    model = FastPitch.from_config(config)
    assert (model.n_speakers, model.speaker_emb_weight, model.speaker_emb) == (1, 1.0, None)


# --------------------------------------------------------------------------------------------------
# speaker ids
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n_speakers", "speaker", "message"),
    [
        (3, 3, r"speaker 3: out of range for a model with n_speakers 3 \(ids 0 \.\. 2\)"),
        (3, -1, r"speaker -1: out of range for a model with n_speakers 3"),
        (3, torch.tensor([0, 5]), r"speaker 5: out of range for a model with n_speakers 3"),
        (3, torch.tensor([4, 7]), r"speaker \[4, 7\]: out of range for a model with n_speakers 3"),
        (1, 1, r"speaker 1: out of range for a model with n_speakers 1 \(only speaker 0"),
        (3, torch.tensor([0, 1, 2]), r"speaker: expected an id or \(2,\) ids"),
        (3, torch.tensor([0.0, 1.0]), r"speaker: expected integer speaker ids"),
        (3, 1.0, r"speaker: expected an int or a tensor"),
    ],
    ids=["too-high", "negative", "one-of-a-batch", "two-of-a-batch", "single-speaker", "shape", "float", "not-an-id"],
)
def test_a_bad_speaker_fails_clearly(n_speakers: int, speaker, message: str) -> None:
    model = tiny(n_speakers)
    tokens, lengths = torch.randint(1, 20, (2, 5)), torch.tensor([5, 3])
    with pytest.raises(ValueError, match=message):
        model.infer(tokens, lengths, speaker=speaker)
    if isinstance(speaker, torch.Tensor) and speaker.dim() == 1:
        inputs = FastPitchInputs(tokens, lengths, torch.full((2, 5), 2), torch.zeros(2, 5), torch.zeros(2, 5), speaker)
        with pytest.raises(ValueError, match=message):
            model(inputs)


# --------------------------------------------------------------------------------------------------
# the project's model file, config, bf16 copy
# --------------------------------------------------------------------------------------------------


def test_the_model_file_keeps_the_speakers(nvidia, theirs, tmp_path) -> None:
    model, info = nvidia
    path = tmp_path / "model.pt"
    save_fastpitch(path, model, step=7, epoch=1, learning_rate=1e-3, text=info.text, pitch=info.pitch, audio=info.audio)
    rebuilt, rebuilt_info = load_fastpitch(path)
    assert rebuilt_info.n_speakers == 3 and rebuilt_info.model_config["speaker_emb_weight"] == 0.5
    assert (rebuilt.n_speakers, rebuilt.speaker_emb_weight) == (3, 0.5)
    tokens, lengths = _tokens(theirs)
    for speaker in SPEAKERS:
        torch.testing.assert_close(
            rebuilt.infer(tokens, lengths, speaker=speaker).mel,
            model.infer(tokens, lengths, speaker=speaker).mel,
            rtol=0,
            atol=0,
        )


def test_the_config_section_takes_the_speaker_keys() -> None:
    section = FastPitchConfig()
    assert (section.n_speakers, section.speaker_emb_weight) == (1, 1.0)  # NVIDIA's defaults
    with pytest.raises(ConfigError, match="n_speakers"):
        parse_config({"fastpitch": {"n_speakers": 0}})


def test_the_bf16_copy_keeps_the_speaker_embedding_in_float32(nvidia, theirs) -> None:
    model, _ = nvidia
    held = bf16_inference_copy(model)
    assert is_held_in_bf16(held) and held.speaker_emb.weight.dtype == torch.float32
    tokens, lengths = _tokens(theirs)
    mels = []
    for speaker in SPEAKERS:
        full, half = model.infer(tokens, lengths, speaker=speaker), held.infer(tokens, lengths, speaker=speaker)
        assert half.mel.dtype == torch.float32
        frames = min(int(full.mel_lengths), int(half.mel_lengths))
        # bfloat16 products: close to float32 (a moved frame boundary would shift the rest, hence the cut
        # at the first differing duration)
        same = int((full.durations == half.durations).long().cumprod(1).sum())
        frames = min(frames, int(full.durations[0, :same].sum()))
        error = (half.mel[..., :frames] - full.mel[..., :frames]).pow(2).mean()
        assert float(error) < 0.01 * float(full.mel[..., :frames].pow(2).mean())
        mels.append(half.mel[..., :frames])
    frames = min(mel.shape[-1] for mel in mels)
    assert _max_diff(mels[0][..., :frames], mels[1][..., :frames]) > 0.1
