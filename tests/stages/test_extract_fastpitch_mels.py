"""The extract_fastpitch_mels stage: every mel has its ground truth's frame count and equals the model's
teacher-forced output for the utterance alone; reruns keep finished files; another model redoes them;
bad lengths and a foreign symbol table are refused."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pytest
import torch

from tts_pipeline.config import FastPitchConfig, TextConfig
from tts_pipeline.data.manifest import manifest_path, read_manifest
from tts_pipeline.errors import UserError
from tts_pipeline.files import save_npy, write_json
from tts_pipeline.models.fastpitch.data import FastPitchDataset, collate
from tts_pipeline.models.fastpitch.model_file import load_fastpitch, save_fastpitch
from tts_pipeline.precision import Precision
from tts_pipeline.stages import extract_fastpitch_mels as stage
from tts_pipeline.training import fastpitch as trainer

from .test_train_fastpitch import AUDIO, PITCH, SYMBOLS, TEXT, TINY, make_features

SPLIT_COUNTS = {"train": 5, "val": 3, "test": 2}


@pytest.fixture(autouse=True)
def one_thread():
    torch.set_num_threads(1)


def write_model(path: Path, seed: int = 0, **changes) -> None:
    """A freshly initialised tiny FastPitch written as a model file (training is not needed here)."""
    cfg = FastPitchConfig(**{**TINY, "seed": seed, **changes})
    state = trainer.build_state(cfg, len(SYMBOLS), AUDIO.n_mel_channels, PITCH, Precision("off", torch.device("cpu")))
    save_fastpitch(
        path, state.model.eval(), step=0, epoch=0, learning_rate=0.0, text=TEXT, pitch=PITCH, audio=AUDIO
    )


@pytest.fixture
def corpus(tmp_path) -> Path:
    make_features(tmp_path, SPLIT_COUNTS)
    write_model(tmp_path / "fastpitch" / "model.pt")
    return tmp_path


def run_stage(root: Path, batch_size: int = 4, model: str = "model.pt") -> dict:
    parser = argparse.ArgumentParser()
    stage.add_arguments(parser)
    payload = json.dumps({
        "fastpitch.extract_batch_size": batch_size, "fastpitch.gpus": 0,
        "audio": AUDIO.model_dump(mode="json"), "text": TextConfig().model_dump(mode="json"),
    })  # fmt: skip
    args = parser.parse_args([
        "--section", payload,
        "--model", str(root / "fastpitch" / model),
        "--features-dir", str(root / "features"),
        "--manifest-dir", str(root / "data"),
        "--out-dir", str(root / "fastpitch_mels"),
        "--index", str(root / "fastpitch_mels" / "index.json"),
        "--threads", "1",
    ])  # fmt: skip
    stage.run(args)
    return json.loads(args.index.read_text())


def all_ids() -> list[str]:
    return [f"{split}-{index}" for split, count in SPLIT_COUNTS.items() for index in range(count)]


def test_every_mel_has_the_ground_truth_length_and_the_teacher_forced_values(corpus):
    index = run_stage(corpus, batch_size=4)
    assert index["count"] == 10 and index["n_computed"] == 10 and index["n_reused"] == 0
    assert index["splits"] == SPLIT_COUNTS and index["n_val"] == 3
    lengths = []
    for utterance_id in all_ids():
        truth = np.load(corpus / "features" / "mels" / f"{utterance_id}.npy")
        mel = np.load(corpus / "fastpitch_mels" / f"{utterance_id}.npy")
        assert mel.dtype == np.float32 and mel.shape == truth.shape, utterance_id
        lengths.append(truth.shape[1])
    assert any(length % 2 for length in lengths) and len(set(lengths)) > 3  # odd and varied lengths
    assert index["frames"] == sum(lengths)
    assert index["audio_seconds"] == pytest.approx(sum(lengths) * 256 / 22050)
    assert index["seconds_per_hour_of_audio"] > 0

    # Batched and padded output equals the model run on each utterance alone (eval mode, no dropout).
    model, info = load_fastpitch(corpus / "fastpitch" / "model.pt")
    records = read_manifest(manifest_path(corpus / "data", "val"))
    dataset = FastPitchDataset(records, corpus / "features", info.pitch, AUDIO.n_mel_channels)
    squared, count = 0.0, 0
    for position, utterance_id in enumerate(dataset.ids):
        batch = collate([dataset[position]])
        with torch.no_grad():
            alone = model(batch.inputs()).mel[0].numpy()
        written = np.load(corpus / "fastpitch_mels" / f"{utterance_id}.npy")
        np.testing.assert_allclose(written, alone, atol=1e-4)
        truth = np.load(corpus / "features" / "mels" / f"{utterance_id}.npy")
        squared += float(np.square(written.astype(np.float64) - truth).sum())
        count += truth.size
    assert index["val_mel_mse"] == pytest.approx(squared / count, rel=1e-6)


def test_a_rerun_keeps_finished_files_and_redoes_missing_or_wrong_ones(corpus):
    run_stage(corpus)
    out = corpus / "fastpitch_mels"
    (out / "train-0.npy").unlink()
    save_npy(out / "val-1.npy", np.zeros((AUDIO.n_mel_channels, 1), dtype=np.float32))  # wrong shape
    kept = np.load(out / "test-1.npy")
    index = run_stage(corpus, batch_size=3)
    assert index["n_computed"] == 2 and index["n_reused"] == 8
    assert np.load(out / "val-1.npy").shape == np.load(corpus / "features" / "mels" / "val-1.npy").shape
    np.testing.assert_array_equal(np.load(out / "test-1.npy"), kept)


def test_another_model_redoes_every_file(corpus):
    first = run_stage(corpus)
    before = np.load(corpus / "fastpitch_mels" / "train-1.npy")
    write_model(corpus / "fastpitch" / "model.pt", seed=7)
    index = run_stage(corpus)
    assert index["n_computed"] == 10 and index["model_sha256"] != first["model_sha256"]
    assert not np.allclose(np.load(corpus / "fastpitch_mels" / "train-1.npy"), before)
    marker = json.loads((corpus / "fastpitch_mels" / "model.json").read_text())
    assert marker["model_sha256"] == index["model_sha256"]


def test_durations_that_disagree_with_the_mel_name_the_utterance_and_file(corpus):
    path = corpus / "features" / "durations" / "test-0.npy"
    durations = np.load(path)
    durations[-1] += 1
    save_npy(path, durations)
    with pytest.raises(UserError, match=r"test-0: durations in .*test-0\.npy sum to \d+ but its mel has T = \d+"):
        run_stage(corpus)
    assert not (corpus / "fastpitch_mels" / "index.json").exists()


def test_a_model_trained_on_another_symbol_table_is_refused(corpus):
    index = json.loads((corpus / "features" / "durations.json").read_text())
    write_json(corpus / "features" / "durations.json", {**index, "symbols": [*SYMBOLS, "k"]})
    with pytest.raises(UserError, match="symbol table"):
        run_stage(corpus)
