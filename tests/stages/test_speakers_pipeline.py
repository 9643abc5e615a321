"""Multi-speaker FastPitch through the stages on tiny synthetic corpora: the features stage writes each
speaker's pitch statistics, train_fastpitch normalises each utterance with its own speaker's, feeds the
speaker ids, checks ``fastpitch.n_speakers`` and records the speakers in the model file; the teacher-forced
mels use each utterance's speaker; warm starts check the speakers."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import torch

from tts_pipeline.config import FastPitchConfig, TextConfig
from tts_pipeline.data.manifest import manifest_path, read_manifest
from tts_pipeline.errors import UserError
from tts_pipeline.files import write_json, write_jsonl
from tts_pipeline.models.fastpitch import FastPitch
from tts_pipeline.models.fastpitch.data import FastPitchDataset, PitchStats, Speaker, Speakers, collate
from tts_pipeline.models.fastpitch.model_file import load_fastpitch, save_fastpitch
from tts_pipeline.stages import features as features_stage
from tts_pipeline.training.fastpitch import warm_start

from . import test_extract_fastpitch_mels as extract
from . import test_train_fastpitch as fp

# Speakers an octave apart: one corpus-wide mean would put every "hi" token far above 0.
NAMES = ("hi", "lo", "mid")
STATS = {"hi": PitchStats(240.0, 30.0), "lo": PitchStats(100.0, 10.0), "mid": PitchStats(160.0, 20.0)}
SPEAKERS = Speakers(tuple(Speaker(name, STATS[name]) for name in NAMES))


@pytest.fixture(autouse=True)
def one_thread():
    torch.set_num_threads(1)


def add_speakers(root: Path, names: tuple[str, ...] = NAMES, stats: dict[str, PitchStats] = STATS) -> None:
    """Give the records of ``root/data``'s manifests speakers in turn, and ``pitch_stats.json`` a speakers
    section with ``stats``."""
    for split in ("train", "val", "test"):
        path = manifest_path(root / "data", split)
        records = [
            {**record.to_json(), "speaker": names[index % len(names)]}
            for index, record in enumerate(read_manifest(path))
        ]
        write_jsonl(path, records)
    section = {name: {"mean": s.mean, "std": s.std, "n_voiced_frames": 10} for name, s in stats.items()}
    payload = {"mean": fp.PITCH.mean, "std": fp.PITCH.std, "speakers": section}
    write_json(root / "features" / "pitch_stats.json", payload)


@pytest.fixture
def corpus(tmp_path) -> Path:
    fp.make_features(tmp_path)
    add_speakers(tmp_path)
    return tmp_path


# --------------------------------------------------------------------------------------------------
# features
# --------------------------------------------------------------------------------------------------


def voice(f0: float, seconds: float, rng: np.random.Generator) -> np.ndarray:
    """A voiced clip at ``f0`` Hz (a few harmonics, a slow vibrato, a little noise), float32 at 22050 Hz."""
    t = np.arange(int(seconds * 22050)) / 22050
    phase = 2 * np.pi * np.cumsum(f0 * (1 + 0.02 * np.sin(2 * np.pi * 3 * t))) / 22050
    clip = sum(np.sin(k * phase) / k for k in range(1, 6)) * 0.2 + rng.normal(0, 0.002, t.size)
    return clip.astype(np.float32)


def test_the_features_stage_writes_each_speakers_pitch_statistics(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    splits = {"train": ["a1", "a2", "b1", "b2"], "val": ["a3", "b3"], "test": []}
    (tmp_path / "data").mkdir()
    for split, ids in splits.items():
        lines = []
        for utterance_id in ids:
            clip = voice(110.0 if utterance_id.startswith("a") else 220.0, 1.0, rng)  # an octave apart
            sf.write(tmp_path / f"{utterance_id}.wav", clip, 22050, subtype="PCM_16")
            speaker = {"a": "alice", "b": "bob"}[utterance_id[0]]
            wav = str(tmp_path / f"{utterance_id}.wav")
            record = {"id": utterance_id, "wav": wav, "text": "a", "n_samples": clip.size, "speaker": speaker}
            lines.append(json.dumps(record))
        (tmp_path / "data" / f"manifest.{split}.jsonl").write_text("".join(line + "\n" for line in lines))
    parser = argparse.ArgumentParser()
    features_stage.add_arguments(parser)
    out = tmp_path / "features"
    features_stage.run(parser.parse_args([
        "--section", json.dumps({"audio": fp.AUDIO.model_dump(mode="json"), "pitch": {}}),
        "--manifest-dir", str(tmp_path / "data"), "--out-dir", str(out),
        "--pitch-stats", str(out / "pitch_stats.json"), "--index", str(out / "features.jsonl"), "--no-progress",
    ]))  # fmt: skip
    stats = json.loads((out / "pitch_stats.json").read_text())
    assert list(stats["speakers"]) == ["alice", "bob"]
    alice, bob = stats["speakers"]["alice"], stats["speakers"]["bob"]
    assert alice["n_utterances"] == bob["n_utterances"] == 2
    assert alice["mean"] == pytest.approx(110, rel=0.03) and bob["mean"] == pytest.approx(220, rel=0.03)
    # The corpus's pitch is their mixture: its spread is far wider than either speaker's.
    total = alice["n_voiced_frames"] + bob["n_voiced_frames"]
    assert stats["n_voiced_frames"] == total and stats["std"] > 2 * max(alice["std"], bob["std"])
    assert Speakers.read(out / "pitch_stats.json").names == ("alice", "bob")


# --------------------------------------------------------------------------------------------------
# the dataset and the batch
# --------------------------------------------------------------------------------------------------


def test_items_carry_their_speaker_and_are_normalised_with_its_statistics(corpus: Path) -> None:
    records = read_manifest(manifest_path(corpus / "data", "train"))
    dataset = FastPitchDataset(records, corpus / "features", fp.PITCH, fp.AUDIO.n_mel_channels, speakers=SPEAKERS)
    for index, record in enumerate(records):
        item = dataset[index]
        assert item.speaker == NAMES.index(record.speaker)
        hz = np.load(corpus / "features" / "symbol_pitch" / f"{record.id}.npy")
        np.testing.assert_allclose(item.pitch.numpy(), STATS[record.speaker].normalise(hz))
    batch = collate([dataset[0], dataset[1], dataset[2]])
    assert batch.speaker is not None and batch.speaker.dtype == torch.int64
    assert batch.speaker.tolist() == [0, 1, 2] and batch.inputs().speaker is batch.speaker
    assert batch.to("cpu").speaker.tolist() == [0, 1, 2]
    # Without speakers: no ids, the corpus's statistics (a single-speaker model's batches, as before).
    plain = FastPitchDataset(records, corpus / "features", fp.PITCH, fp.AUDIO.n_mel_channels)
    assert plain[0].speaker is None and collate([plain[0]]).speaker is None
    with pytest.raises(ValueError, match="mix speaker ids and none"):
        collate([plain[0], dataset[1]])


def test_an_unknown_or_missing_speaker_is_named_with_its_utterance(corpus: Path) -> None:
    records = read_manifest(manifest_path(corpus / "data", "train"))
    two = Speakers(tuple(Speaker(name, STATS[name]) for name in ("hi", "lo")))
    with pytest.raises(UserError, match=r"utterance train-2: speaker 'mid' is not one of the speakers \(hi, lo\)"):
        FastPitchDataset(records, corpus / "features", fp.PITCH, fp.AUDIO.n_mel_channels, speakers=two)
    unnamed = [type(r)(**{**r.__dict__, "speaker": None}) for r in records[:1]]
    with pytest.raises(UserError, match="utterance train-0: its manifest record names no speaker; expected one of hi"):
        FastPitchDataset(unnamed, corpus / "features", fp.PITCH, fp.AUDIO.n_mel_channels, speakers=two)


# --------------------------------------------------------------------------------------------------
# train_fastpitch
# --------------------------------------------------------------------------------------------------


def test_a_three_speaker_fastpitch_trains_on_speaker_batches_and_records_its_speakers(corpus, monkeypatch) -> None:
    seen: list[list[int]] = []
    real_step = fp.fastpitch_loop.train_step

    def spy(state, runtime, micro_batches, **kwargs):
        seen.extend(batch.speaker.tolist() for batch in micro_batches)
        return real_step(state, runtime, micro_batches, **kwargs)

    monkeypatch.setattr(fp.fastpitch_loop, "train_step", spy)
    metrics = fp.run_stage(fp.stage_argv(corpus, fp.section(max_steps=2, n_speakers=3)))
    assert metrics["step"] == 2 and metrics["n_speakers"] == 3 and np.isfinite(metrics["val_loss"])
    assert {speaker for batch in seen for speaker in batch} == {0, 1, 2}

    model, info = load_fastpitch(corpus / "fastpitch" / "model.pt")
    assert info.n_speakers == 3 and info.speakers == NAMES
    assert info.speaker_pitch == STATS and info.pitch == fp.PITCH  # the buffers keep the corpus's pair
    assert info.speaker_id("lo") == 1 and info.pitch_of(2) == STATS["mid"] and info.pitch_of(None) == STATS["hi"]
    with pytest.raises(ValueError, match="speaker 'zed': not a speaker of this FastPitch; its speakers: hi, lo, mid"):
        info.speaker_id("zed")
    extra = torch.load(corpus / "fastpitch" / "model.pt", weights_only=True)["extra"]
    assert extra["speakers"] == [{"name": n, "pitch_mean": STATS[n].mean, "pitch_std": STATS[n].std} for n in NAMES]
    # The speakers are part of the resume hash: other statistics restart the training.
    add_speakers(corpus, stats={**STATS, "lo": PitchStats(90.0, 9.0)})
    restarted = fp.run_stage(fp.stage_argv(corpus, fp.section(max_steps=2, n_speakers=3)))
    assert restarted["resumed_from_step"] == 0


def test_n_speakers_must_fit_the_corpus(corpus: Path) -> None:
    with pytest.raises(UserError, match=r"fastpitch.n_speakers is 2, but the corpus has 3 speakers \(hi, lo, mid;"):
        fp.run_stage(fp.stage_argv(corpus, fp.section(max_steps=1, n_speakers=2)))
    with pytest.raises(UserError, match="fastpitch.n_speakers is 1, but the corpus has 3 speakers"):
        fp.run_stage(fp.stage_argv(corpus, fp.section(max_steps=1)))
    single = corpus.parent / "single"
    fp.make_features(single)
    with pytest.raises(UserError, match=r"n_speakers is 3, but the corpus has a single speaker \(its manifests name"):
        fp.run_stage(fp.stage_argv(single, fp.section(max_steps=1, n_speakers=3)))


def test_a_single_speaker_file_warm_starts_a_speaker_model_with_a_fresh_embedding(corpus: Path) -> None:
    torch.manual_seed(1)
    base = FastPitch(FastPitchConfig(**fp.TINY), len(fp.SYMBOLS), fp.AUDIO.n_mel_channels, 200.0, 30.0)
    path = corpus / "base.pt"
    save_fastpitch(
        path, base, step=100, epoch=3, learning_rate=1e-3, text=fp.TEXT, pitch=PitchStats(200.0, 30.0), audio=fp.AUDIO
    )
    init = warm_start.read_init(path, text=TextConfig(), audio=fp.AUDIO)
    cfg = FastPitchConfig(**fp.TINY, n_speakers=3)
    assert warm_start.mismatches(
        init, section=cfg, audio=fp.AUDIO, cleaners=None, symbols=fp.SYMBOLS, symbol_set=None, symbols_origin="t",
        speakers=NAMES,
    ) == []  # fmt: skip
    torch.manual_seed(9)
    model = FastPitch(cfg, len(fp.SYMBOLS), fp.AUDIO.n_mel_channels, fp.PITCH.mean, fp.PITCH.std)
    fresh = model.speaker_emb.weight.detach().clone()
    warm_start.apply_warm_start(model, init)
    torch.testing.assert_close(model.speaker_emb.weight, fresh)
    torch.testing.assert_close(model.encoder.word_emb.weight, base.encoder.word_emb.weight)


def test_a_file_of_other_speakers_is_refused_naming_them(corpus: Path) -> None:
    cfg = FastPitchConfig(**fp.TINY, n_speakers=3)
    torch.manual_seed(2)
    other = Speakers(tuple(Speaker(name, STATS.get(name, PitchStats(150.0, 15.0))) for name in ("hi", "lo", "zed")))
    model = FastPitch(cfg, len(fp.SYMBOLS), fp.AUDIO.n_mel_channels, fp.PITCH.mean, fp.PITCH.std)
    path = corpus / "others.pt"
    save_fastpitch(
        path, model, step=1, epoch=1, learning_rate=1e-3, text=fp.TEXT, pitch=fp.PITCH, audio=fp.AUDIO, speakers=other
    )
    init = warm_start.read_init(path, text=TextConfig(), audio=fp.AUDIO)
    check = {"audio": fp.AUDIO, "cleaners": None, "symbols": fp.SYMBOLS, "symbol_set": None, "symbols_origin": "t"}
    [line] = warm_start.mismatches(init, section=cfg, speakers=NAMES, **check)
    assert "trained on other speakers (hi, lo, zed) than this corpus's (hi, lo, mid): id 2: 'zed' in the file" in line
    assert warm_start.mismatches(init, section=cfg, speakers=("hi", "lo", "zed"), **check) == []
    [single] = warm_start.mismatches(init, section=FastPitchConfig(**fp.TINY), speakers=(), **check)[-1:]
    assert "is a multi-speaker model (3 speakers (hi, lo, zed)) but this corpus has a single speaker" in single
    # Through the stage: refused before training, naming the key.
    with pytest.raises(UserError, match=r"(?s)fastpitch.init_from: .*trained on other speakers"):
        fp.run_stage([*fp.stage_argv(corpus, fp.section(max_steps=1, n_speakers=3)), "--warm-start", str(path)])


# --------------------------------------------------------------------------------------------------
# teacher-forced mels
# --------------------------------------------------------------------------------------------------


def test_teacher_forced_mels_use_each_utterances_speaker(tmp_path: Path) -> None:
    fp.make_features(tmp_path, extract.SPLIT_COUNTS)
    add_speakers(tmp_path)
    cfg = FastPitchConfig(**fp.TINY, n_speakers=3, speaker_emb_weight=3.0)
    torch.manual_seed(0)
    model = FastPitch(cfg, len(fp.SYMBOLS), fp.AUDIO.n_mel_channels, fp.PITCH.mean, fp.PITCH.std).eval()
    path = tmp_path / "fastpitch" / "model.pt"
    save_fastpitch(
        path, model, step=0, epoch=0, learning_rate=0.0, text=fp.TEXT, pitch=fp.PITCH, audio=fp.AUDIO, speakers=SPEAKERS
    )
    index = extract.run_stage(tmp_path)
    assert index["count"] == 10
    records = read_manifest(manifest_path(tmp_path / "data", "val"))
    dataset = FastPitchDataset(records, tmp_path / "features", fp.PITCH, fp.AUDIO.n_mel_channels, speakers=SPEAKERS)
    for position, record in enumerate(records):
        batch = collate([dataset[position]])
        written = np.load(tmp_path / "fastpitch_mels" / f"{record.id}.npy")
        with torch.no_grad():
            alone = model(batch.inputs()).mel[0].numpy()
            other = model(batch.inputs()._replace(speaker=(batch.speaker + 1) % 3)).mel[0].numpy()
        np.testing.assert_allclose(written, alone, atol=1e-4)
        assert np.abs(written - other).max() > 1e-3  # the speaker matters: the mel is that speaker's
    # A multi-speaker model that names no speakers cannot map the manifests' names to its rows.
    save_fastpitch(path, model, step=0, epoch=0, learning_rate=0.0, text=fp.TEXT, pitch=fp.PITCH, audio=fp.AUDIO)
    with pytest.raises(UserError, match=r"a FastPitch of 3 unnamed speakers \(NVIDIA's\?\), but the manifests name 3"):
        extract.run_stage(tmp_path)
