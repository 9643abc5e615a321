"""The features stage as a command: arrays and index, statistics, restarts, settings changes, bad input."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import torch

from tts_pipeline.audio import MelSpectrogram, load_wav
from tts_pipeline.commands import bench_features
from tts_pipeline.commands.bench_features import speechlike_clip
from tts_pipeline.config import AudioConfig, PitchConfig
from tts_pipeline.errors import UserError
from tts_pipeline.features.extract import FeatureLengthError, check_lengths
from tts_pipeline.stages import features

RATE = 22050
SPLITS = {"train": ["u1", "u2", "u3", "u4"], "val": ["v1"], "test": ["t1"]}


def section(**pitch: object) -> str:
    payload = {"audio": AudioConfig().model_dump(mode="json"), "pitch": PitchConfig(**pitch).model_dump(mode="json")}
    return json.dumps(payload)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """Speech-like wavs and the three manifests, as the manifest stage leaves them."""
    rng = np.random.default_rng(5)
    (tmp_path / "wavs").mkdir()
    (tmp_path / "data").mkdir()
    for split, ids in SPLITS.items():
        lines = []
        for utterance_id in ids:
            clip = speechlike_clip(rng.uniform(1.0, 2.5), RATE, rng)
            wav = tmp_path / "wavs" / f"{utterance_id}.wav"
            sf.write(wav, clip, RATE, subtype="PCM_16")
            record = {"id": utterance_id, "wav": str(wav), "text": "a b", "n_samples": clip.size,
                      "sample_rate": RATE, "duration_s": clip.size / RATE}  # fmt: skip
            lines.append(json.dumps(record))
        (tmp_path / "data" / f"manifest.{split}.jsonl").write_text("\n".join(lines) + "\n")
    return tmp_path


def run_features(root: Path, *, workers: int = 1, **pitch: object) -> None:
    parser = argparse.ArgumentParser()
    features.add_arguments(parser)
    out = root / "features"
    args = parser.parse_args([
        "--section", section(**pitch), "--manifest-dir", str(root / "data"), "--out-dir", str(out),
        "--pitch-stats", str(out / "pitch_stats.json"), "--index", str(out / "features.jsonl"),
        "--workers", str(workers), "--no-progress",
    ])  # fmt: skip
    features.run(args)


def mtimes(root: Path) -> dict[str, int]:
    return {
        f"{path.parent.name}/{path.name}": path.stat().st_mtime_ns
        for path in sorted((root / "features").glob("*/*.npy"))
    }


def records(root: Path, split: str) -> list[dict]:
    return [json.loads(line) for line in (root / "data" / f"manifest.{split}.jsonl").read_text().splitlines()]


def test_every_utterance_gets_its_mel_and_pitch_and_the_index_lists_them(project: Path) -> None:
    run_features(project, workers=2)
    out = project / "features"
    index = [json.loads(line) for line in (out / "features.jsonl").read_text().splitlines()]
    assert [(r["id"], r["split"]) for r in index] == [(i, s) for s, ids in SPLITS.items() for i in ids]
    mel_fn = MelSpectrogram(AudioConfig())
    for split in SPLITS:
        for record, entry in zip(records(project, split), [r for r in index if r["split"] == split], strict=True):
            mel = np.load(out / "mels" / f"{record['id']}.npy")
            pitch = np.load(out / "pitch" / f"{record['id']}.npy")
            frames = record["n_samples"] // 256
            assert mel.dtype == pitch.dtype == np.float32
            assert mel.shape == (80, frames) and pitch.shape == (frames,)
            assert entry["n_frames"] == frames and entry["n_voiced"] == int((pitch > 0).sum()) > 0
            # the very function every other stage calls
            expected = mel_fn(torch.from_numpy(load_wav(record["wav"], RATE))).numpy()
            np.testing.assert_allclose(mel, expected, rtol=0, atol=1e-5)


def test_pitch_stats_cover_voiced_training_frames_only(project: Path) -> None:
    run_features(project)
    out = project / "features"
    stats = json.loads((out / "pitch_stats.json").read_text())
    train = np.concatenate([np.load(out / "pitch" / f"{i}.npy") for i in SPLITS["train"]])
    voiced = train[train > 0].astype(np.float64)
    assert stats["n_voiced_frames"] == voiced.size
    assert stats["mean"] == pytest.approx(voiced.mean(), rel=1e-9)
    assert stats["std"] == pytest.approx(voiced.std(), rel=1e-6)
    assert stats["n_frames"] == train.size and stats["n_utterances"] == 4
    assert stats["method"] == "praat" and stats["split"] == "train"
    assert 90 < stats["mean"] < 250  # the synthetic clips glide between 90 and 250 Hz


def test_a_rerun_after_a_kill_redoes_only_what_is_missing(project: Path) -> None:
    run_features(project, workers=2)
    out = project / "features"
    before = mtimes(project)
    index_before = (out / "features.jsonl").read_text()
    # what a kill leaves: one pair missing, one half-written temporary file, no index
    (out / "mels" / "u2.npy").unlink()
    (out / "pitch" / "u2.npy").unlink()
    (out / "pitch" / ".u3.npy.abc123.tmp").write_bytes(b"\x93NUMPY partial")
    (out / "features.jsonl").unlink()
    run_features(project, workers=2)
    after = mtimes(project)
    changed = {name for name in after if after[name] != before.get(name)}
    assert changed == {"mels/u2.npy", "pitch/u2.npy"}
    assert not list(out.glob("*/.*.tmp"))
    assert (out / "features.jsonl").read_text() == index_before


def test_changed_settings_or_newer_audio_recompute(project: Path) -> None:
    run_features(project)
    first = mtimes(project)
    run_features(project, voicing_threshold=0.5)  # a pitch setting: everything again
    second = mtimes(project)
    assert all(second[name] != first[name] for name in first)
    state = json.loads((project / "features" / ".state.json").read_text())
    assert state["pitch"]["voicing_threshold"] == 0.5
    wav = project / "wavs" / "v1.wav"
    os.utime(wav, ns=(second["mels/v1.npy"] + 10**9, second["mels/v1.npy"] + 10**9))  # a re-made corpus file
    run_features(project, voicing_threshold=0.5)
    third = mtimes(project)
    assert {name for name in third if third[name] != second[name]} == {"mels/v1.npy", "pitch/v1.npy"}


def test_arrays_of_utterances_no_longer_listed_are_removed(project: Path) -> None:
    run_features(project)
    lines = (project / "data" / "manifest.test.jsonl").read_text()
    (project / "data" / "manifest.test.jsonl").write_text("")
    run_features(project)
    assert not (project / "features" / "mels" / "t1.npy").exists()
    (project / "data" / "manifest.test.jsonl").write_text(lines)


def test_a_manifest_that_disagrees_with_the_audio_is_a_user_error(project: Path) -> None:
    rows = records(project, "val")
    rows[0]["n_samples"] += 300
    (project / "data" / "manifest.val.jsonl").write_text(json.dumps(rows[0]) + "\n")
    with pytest.raises(UserError, match=r"utterance v1: .*v1\.wav has \d+ samples but the manifest says"):
        run_features(project)
    assert not (project / "features" / "features.jsonl").exists()


def test_audio_at_another_rate_is_a_user_error(project: Path) -> None:
    rows = records(project, "test")
    sf.write(rows[0]["wav"], np.zeros(rows[0]["n_samples"], np.int16), 16000, subtype="PCM_16")
    with pytest.raises(UserError, match=r"t1\.wav: expected a sampling rate of 22050 Hz, got 16000"):
        run_features(project, workers=2)


def test_missing_manifest_is_a_user_error(project: Path) -> None:
    (project / "data" / "manifest.val.jsonl").unlink()
    with pytest.raises(UserError, match=r"manifest\.val\.jsonl not found"):
        run_features(project)


def test_length_check_names_the_utterance() -> None:
    cfg = AudioConfig()
    check_lengths("ok", 1000, np.zeros((80, 3)), np.zeros(3), cfg)
    with pytest.raises(FeatureLengthError, match="utterance bad: expected mel \\(80, 3\\) and pitch \\(3,\\)"):
        check_lengths("bad", 1000, np.zeros((80, 3)), np.zeros(4), cfg)


def test_benchmark_runs_on_synthetic_clips(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    parser = argparse.ArgumentParser()
    bench_features.add_arguments(parser)
    bench_features.run(parser.parse_args(["--n", "2", "--repeats", "2", "--json", str(tmp_path / "bench.json")]))
    report = capsys.readouterr().out
    assert "mel+pitch (praat)+io" in report and "projected LJSpeech" in report
    headline = json.loads((tmp_path / "bench.json").read_text())["results"][-1]["median"]
    assert f"mel+pitch (praat)+io: {headline:.1f}x real time per core (median of 2)" in report
    results = json.loads((tmp_path / "bench.json").read_text())["results"]
    assert [r["name"] for r in results] == ["mel", "pitch (praat)", "mel+pitch (praat)+io"]
    assert all(len(r["repeats"]) == 2 and r["min"] > 0 for r in results)


def test_a_non_finite_mel_is_refused_naming_the_utterance(tmp_path):
    """Behind the manifest's check: a float WAV with NaN samples never becomes a NaN mel on disk."""
    from tts_pipeline.features.extract import ArrayWriter, FeatureExtractor, Utterance, compute_utterance

    samples = (0.3 * np.sin(2 * np.pi * 220 * np.arange(RATE // 2) / RATE)).astype(np.float32)
    samples[1000:1010] = np.nan
    wav = tmp_path / "poisoned.wav"
    sf.write(wav, samples, RATE, subtype="FLOAT")
    utterance = Utterance(id="poisoned", split="train", wav=str(wav), n_samples=samples.size)
    extractor = FeatureExtractor(AudioConfig(), PitchConfig())
    with pytest.raises(UserError, match="utterance poisoned: its mel holds NaN"), ArrayWriter() as writer:
        compute_utterance(extractor, utterance, tmp_path / "features", writer)
    assert not list((tmp_path / "features").rglob("*.npy"))
