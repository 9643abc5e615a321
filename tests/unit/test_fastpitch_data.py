"""FastPitch's data: per-token energy and pitch targets, normalisation, padding, and the errors that name
the utterance and the file."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from tts_pipeline.alignment import symbol_mean
from tts_pipeline.data.manifest_record import ManifestRecord
from tts_pipeline.errors import UserError
from tts_pipeline.files import save_npy, write_json
from tts_pipeline.models.fastpitch import FastPitchInputs
from tts_pipeline.models.fastpitch.data import (
    FastPitchDataset,
    PitchStats,
    TextSettings,
    collate,
    token_energy,
)

N_MELS = 4
STATS = PitchStats(mean=200.0, std=50.0)


def loop_energy(mel: np.ndarray, durations: np.ndarray) -> np.ndarray:
    """The definition, one token at a time: log(1 + mean over its frames of the frame's L2 norm)."""
    out, start = [], 0
    for duration in durations:
        frames = mel[:, start : start + duration]
        norms = np.sqrt((frames.astype(np.float64) ** 2).sum(axis=0))
        norms = norms[norms != 0]
        out.append(np.log1p(norms.mean()) if norms.size else 0.0)
        start += duration
    return np.array(out)


def test_token_energy_matches_the_definition():
    rng = np.random.default_rng(0)
    durations = np.array([3, 0, 1, 5, 2])
    mel = rng.normal(-4, 2, (N_MELS, durations.sum())).astype(np.float32)
    np.testing.assert_allclose(token_energy(mel, durations), loop_energy(mel, durations), rtol=1e-5)
    assert token_energy(mel, durations)[1] == 0.0  # a zero-length token: log(1 + 0)


def test_token_energy_known_values():
    mel = np.array([[3.0, 0.0, 1.0], [4.0, 2.0, 0.0]])  # frame norms 5, 2, 1
    np.testing.assert_allclose(token_energy(mel, np.array([2, 1])), np.log1p([3.5, 1.0]), rtol=1e-6)


def test_symbol_mean_ignores_zero_frames():
    values = np.array([0.0, 2.0, 4.0, 0.0, 0.0, 7.0])
    np.testing.assert_allclose(symbol_mean(values, np.array([3, 2, 1, 0])), [3.0, 0.0, 7.0, 0.0])
    with pytest.raises(ValueError, match="sum to the 6 frames"):
        symbol_mean(values, np.array([2, 2]))


def test_pitch_normalisation_keeps_unvoiced_at_zero_and_inverts():
    hz = np.array([0.0, 200.0, 250.0, 100.0], dtype=np.float32)
    normalised = STATS.normalise(hz)
    np.testing.assert_allclose(normalised, [0.0, 0.0, 1.0, -2.0])
    np.testing.assert_allclose(STATS.to_hz(normalised[1:]), hz[1:])
    with pytest.raises(UserError, match="positive mean and std"):
        PitchStats(mean=200.0, std=0.0)


def test_pitch_stats_and_text_settings_are_read_from_the_stage_files(tmp_path):
    write_json(tmp_path / "pitch_stats.json", {"mean": 210.5, "std": 30.0, "n_voiced_frames": 9})
    assert PitchStats.read(tmp_path / "pitch_stats.json") == PitchStats(210.5, 30.0)
    with pytest.raises(UserError, match="run the features stage"):
        PitchStats.read(tmp_path / "missing.json")
    index = {
        "source": "textgrid",
        "symbols_kind": "textgrid",
        "symbol_set": None,
        "symbols": ["_", "sil", "<unk>", "AH0"],
        "pad_id": 0,
        "pause_symbol": "sil",
        "unknown_symbol": "<unk>",
    }
    write_json(tmp_path / "durations.json", index)
    text = TextSettings.from_durations_index(tmp_path / "durations.json", "english_cleaners_v2")
    assert text.symbols == ("_", "sil", "<unk>", "AH0") and text.pause_symbol == "sil"
    assert text.cleaners == "english_cleaners_v2" and text.symbols_kind == "textgrid"
    assert TextSettings.from_dict(json.loads(json.dumps(text.as_dict()))) == text
    write_json(tmp_path / "bad.json", {"symbols": ["_", "a"]})
    with pytest.raises(UserError, match="bad.json: not a durations index"):
        TextSettings.from_durations_index(tmp_path / "bad.json", None)


# --------------------------------------------------------------------------------------------------
# the dataset
# --------------------------------------------------------------------------------------------------


def write_utterance(root: Path, utterance_id: str, tokens, durations, pitch_hz, seed: int = 0) -> np.ndarray:
    durations = np.asarray(durations, dtype=np.int32)
    mel = np.random.default_rng(seed).normal(-4, 1, (N_MELS, int(durations.sum()))).astype(np.float32)
    save_npy(root / "mels" / f"{utterance_id}.npy", mel)
    save_npy(root / "symbols" / f"{utterance_id}.npy", np.asarray(tokens, dtype=np.int32))
    save_npy(root / "durations" / f"{utterance_id}.npy", durations)
    save_npy(root / "symbol_pitch" / f"{utterance_id}.npy", np.asarray(pitch_hz, dtype=np.float32))
    return mel


def records(*ids: str) -> list[ManifestRecord]:
    """Manifest records of ``ids`` (the dataset reads only the id; the rest is a placeholder)."""
    return [ManifestRecord(id=i, wav=f"{i}.wav", text="", n_samples=0) for i in ids]


@pytest.fixture
def features(tmp_path) -> Path:
    write_utterance(tmp_path, "a", [1, 2, 3], [2, 0, 3], [250.0, 0.0, 150.0], seed=1)
    write_utterance(tmp_path, "b", [4, 5], [1, 6], [200.0, 300.0], seed=2)
    return tmp_path


def test_items_carry_normalised_pitch_energy_and_the_target_mel(features):
    dataset = FastPitchDataset(records("a", "b"), features, STATS, N_MELS, n_symbols=6)
    assert len(dataset) == 2 and dataset.mel_lengths == [5, 7] and dataset.ids == ["a", "b"]
    item = dataset[0]
    assert item.id == "a" and item.tokens.dtype == torch.int64 and item.tokens.tolist() == [1, 2, 3]
    assert item.durations.tolist() == [2, 0, 3]
    torch.testing.assert_close(item.pitch, torch.tensor([1.0, 0.0, -1.0]))
    mel = np.load(features / "mels" / "a.npy")
    torch.testing.assert_close(item.mel, torch.from_numpy(mel))
    np.testing.assert_allclose(item.energy.numpy(), loop_energy(mel, np.array([2, 0, 3])), rtol=1e-5)
    assert FastPitchDataset(records("a"), features, STATS, N_MELS, with_energy=False)[0].energy is None


def test_collate_pads_with_zeros_and_keeps_lengths(features):
    dataset = FastPitchDataset(records("a", "b"), features, STATS, N_MELS)
    batch = collate([dataset[1], dataset[0]])
    assert batch.ids == ["b", "a"] and batch.size == 2 and batch.frames == 12
    assert batch.tokens.tolist() == [[4, 5, 0], [1, 2, 3]]
    assert batch.token_lengths.tolist() == [2, 3]
    assert batch.durations.tolist() == [[1, 6, 0], [2, 0, 3]]
    assert batch.mel_lengths.tolist() == [7, 5] == batch.durations.sum(1).tolist()
    assert batch.mels.shape == (2, N_MELS, 7) and batch.mels.dtype == torch.float32
    assert torch.all(batch.mels[1, :, 5:] == 0) and batch.pitch[0, 2] == 0 and batch.energy[0, 2] == 0
    torch.testing.assert_close(batch.mels[1, :, :5], dataset[0].mel)
    inputs = batch.inputs()
    assert isinstance(inputs, FastPitchInputs) and inputs.tokens is batch.tokens and inputs.energy is batch.energy
    moved = batch.to("cpu")
    assert moved.ids == batch.ids and torch.equal(moved.mels, batch.mels)
    assert collate([dataset[0]]).energy is not None
    no_energy = FastPitchDataset(records("a"), features, STATS, N_MELS, with_energy=False)
    assert collate([no_energy[0]]).energy is None


def test_every_problem_is_reported_with_the_utterance_and_file(features):
    write_utterance(features, "short", [1, 2], [2, 2], [0.0, 0.0])
    save_npy(features / "durations" / "short.npy", np.array([2, 1], dtype=np.int32))  # sums to 3, mel has 4
    write_utterance(features, "uneven", [1, 2, 3], [1, 1], [0.0, 0.0])  # 3 symbols, 2 durations
    write_utterance(features, "padded", [0, 2], [1, 1], [0.0, 0.0])  # the pad id as a symbol
    write_utterance(features, "pitchless", [1, 2], [1, 1], [0.0])  # one pitch value for two symbols
    write_utterance(features, "gone", [1], [3], [0.0])
    (features / "mels" / "gone.npy").unlink()
    listed = records("a", "short", "uneven", "padded", "pitchless", "gone", "b")
    with pytest.raises(UserError) as caught:
        FastPitchDataset(listed, features, STATS, N_MELS, n_symbols=6)
    message = str(caught.value)
    assert "5 problem(s)" in message
    assert "utterance short: durations in " in message and "short.npy sum to 3 but its mel has T = 4" in message
    assert "utterance uneven: 3 symbols in " in message and "uneven.npy but (2,) durations" in message
    assert "utterance padded: symbol ids in " in message and "expected [1, 5] (0 is the pad)" in message
    assert "utterance pitchless: " in message and "symbol_pitch/pitchless.npy has shape (1,)" in message
    assert f"utterance gone: {features / 'mels' / 'gone.npy'} is missing" in message


def test_a_mel_with_other_channels_is_refused(features):
    with pytest.raises(UserError, match=r"utterance a: .*a\.npy has shape \(4, 5\), expected \(80, T\)"):
        FastPitchDataset(records("a"), features, STATS, 80)
