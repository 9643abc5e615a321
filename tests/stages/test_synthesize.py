"""The synthesize stage in-process on tiny model files written by the trainers' save functions: WAVs,
manifest, pace, vocoder-only mode, bad inputs, and the MLflow artifacts."""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import torch

from tts_pipeline import tracking
from tts_pipeline.config import AudioConfig, TextConfig
from tts_pipeline.errors import UserError
from tts_pipeline.files import read_jsonl
from tts_pipeline.inference import InferenceConfig
from tts_pipeline.stages import synthesize as stage

from ..inference_models import AUDIO, save_fastpitch_file, save_hifigan_file
from ..stage_helpers import track_into

HOP, SR = AUDIO.hop_length, AUDIO.sampling_rate
PHRASES = """# three phrases
hello|Hello there.
long_one|The old lighthouse keeper painted the door a bright shade of blue.
price|It costs 25 dollars.
"""
MANIFEST_FIELDS = {
    "name", "wav", "text", "n_tokens", "n_frames", "seconds", "batch", "batch_size", "fastpitch_ms", "vocoder_ms",
    "vocoder",
}  # fmt: skip


@pytest.fixture(autouse=True)
def one_thread():
    torch.set_num_threads(1)


@pytest.fixture
def files(tmp_path) -> Path:
    save_fastpitch_file(tmp_path / "fastpitch" / "model.pt")
    save_hifigan_file(tmp_path / "hifigan" / "model.pt")
    (tmp_path / "phrases.txt").write_text(PHRASES, encoding="utf-8")
    return tmp_path


def section(audio: AudioConfig = AUDIO, **inference: object) -> str:
    cfg = InferenceConfig(**{"gpus": 0, "batch_size": 2, **inference})
    return json.dumps({
        "inference": cfg.model_dump(mode="json"),
        "audio": audio.model_dump(mode="json"),
        "text": TextConfig().model_dump(mode="json"),
    })


def run_stage(root: Path, payload: str, *extra: str, out: str = "inference") -> list[dict]:
    argv = [
        "--section", payload,
        "--vocoder", str(root / "hifigan" / "model.pt"),
        "--out-dir", str(root / out),
        *extra,
    ]  # fmt: skip
    if "--mels" not in extra:
        argv += ["--fastpitch", str(root / "fastpitch" / "model.pt")]
        if "--phrases" not in extra:
            argv += ["--phrases", str(root / "phrases.txt")]
    parser = argparse.ArgumentParser()
    stage.add_arguments(parser)
    stage.run(parser.parse_args(argv))
    return read_jsonl(root / out / "manifest.jsonl")


def test_phrases_become_16_bit_wavs_and_a_manifest_written_last(files):
    records = run_stage(files, section())
    out = files / "inference"
    assert [r["name"] for r in records] == ["hello", "long_one", "price"]  # file order
    assert records[1]["batch"] == 0 and records[1]["batch_size"] == 2  # the longest goes first
    for record in records:
        assert set(record) == MANIFEST_FIELDS
        info = sf.info(out / record["wav"])
        assert (info.samplerate, info.channels, info.subtype) == (SR, 1, "PCM_16")
        assert info.frames == record["n_frames"] * HOP > 0
        assert record["seconds"] == pytest.approx(info.frames / SR, abs=1e-6)
        assert record["n_tokens"] > 0 and record["fastpitch_ms"] > 0 and record["vocoder_ms"] > 0
    assert records[0]["text"] == "Hello there."
    manifest_time = (out / "manifest.jsonl").stat().st_mtime_ns
    assert all((out / r["wav"]).stat().st_mtime_ns <= manifest_time for r in records)
    assert sorted(p.name for p in out.iterdir()) == sorted(["manifest.jsonl", *(r["wav"] for r in records)])


def test_half_pace_roughly_doubles_the_audio(files):
    normal = run_stage(files, section(), out="normal")
    slow = run_stage(files, section(pace=0.5), out="slow")
    ratio = sum(r["seconds"] for r in slow) / sum(r["seconds"] for r in normal)
    assert 1.8 < ratio < 2.2


def test_vocoder_only_mode_vocodes_a_folder_of_mels(files):
    mels = files / "mels"
    mels.mkdir()
    rng = np.random.default_rng(0)
    for name, frames in (("LJ001-0001", 30), ("LJ001-0002", 12)):
        np.save(mels / f"{name}.npy", rng.normal(-5.0, 2.0, (AUDIO.n_mel_channels, frames)).astype(np.float32))
    records = run_stage(files, section(), "--mels", str(mels), out="vocoded")
    assert [(r["name"], r["n_frames"], r["n_tokens"], r["fastpitch_ms"]) for r in records] == [
        ("LJ001-0001", 30, None, None),
        ("LJ001-0002", 12, None, None),
    ]
    for record in records:
        assert sf.info(files / "vocoded" / record["wav"]).frames == record["n_frames"] * HOP
        assert record["mel"].endswith(f"{record['name']}.npy")
    np.save(mels / "bad.npy", np.zeros((40, 5), dtype=np.float32))
    with pytest.raises(UserError, match=r"bad\.npy: expected a mel of shape \(80, T\)"):
        run_stage(files, section(), "--mels", str(mels), out="vocoded")


def test_models_with_different_sampling_rates_are_refused_naming_both_files(files):
    save_hifigan_file(files / "hifigan" / "model.pt", audio=AudioConfig(sampling_rate=16000))
    with pytest.raises(UserError) as error:
        run_stage(files, section(AudioConfig(sampling_rate=16000)))
    message = str(error.value)
    assert "sampling_rate 22050 vs 16000" in message
    assert str(files / "fastpitch" / "model.pt") in message and str(files / "hifigan" / "model.pt") in message
    with pytest.raises(UserError, match="the config's audio section and the HiFi-GAN model"):
        run_stage(files, section())  # the config (22050 Hz) against the vocoder (16000 Hz)


def test_bad_inputs_are_reported(files):
    (files / "odd.txt").write_text("ok|Fine.\nbad|Snowman \u2603 {XX9} here.\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"odd\.txt:2: phrase 'bad'"):
        run_stage(files, section(), "--phrases", str(files / "odd.txt"))
    argv = ["--section", section(), "--vocoder", str(files / "hifigan" / "model.pt"), "--out-dir", str(files / "x"),
            "--phrases", str(files / "phrases.txt")]  # fmt: skip
    parser = argparse.ArgumentParser()
    stage.add_arguments(parser)
    with pytest.raises(UserError, match="--phrases needs --acoustic-model"):
        stage.run(parser.parse_args(argv))
    save_fastpitch_file(files / "fastpitch" / "model.pt", symbols_kind="textgrid")
    with pytest.raises(UserError, match="trained on TextGrid phone labels"):
        run_stage(files, section())


def test_each_batch_is_written_before_the_next_runs_and_a_failure_leaves_no_manifest(files, monkeypatch):
    from tts_pipeline.inference.synthesizer import Synthesizer

    out, seen = files / "inference", []
    run_batch = Synthesizer.run_batch

    def counting(self, *args):
        seen.append(len(list(out.glob("*.wav"))) if out.is_dir() else 0)
        if len(seen) == 4:
            raise RuntimeError("the third batch fails")
        return run_batch(self, *args)

    monkeypatch.setattr(Synthesizer, "run_batch", counting)
    (files / "five.txt").write_text("".join(f"p{n}|Phrase number {n} is here.\n" for n in range(5)))
    with pytest.raises(RuntimeError, match="the third batch fails"):
        run_stage(files, section(), "--phrases", str(files / "five.txt"))
    assert seen == [0, 0, 2, 4]  # warm-up, then batches of 2: each batch's WAVs are on disk before the next
    assert len(list(out.glob("*.wav"))) == 4 and not (out / "manifest.jsonl").exists()


def test_transliterated_lines_are_named_in_a_warning(files, caplog):
    phrases = files / "scripts.txt"
    phrases.write_text(
        "plain|Hello there.\n"
        "arabic|\u0645\u0631\u062d\u0628\u0627 friend.\n"
        "chinese|\u4f60\u597d world.\n"
        "marks|Hello \u200fthere\u200e.\n"
        "accent|The caf\u00e9 is open.\n",
        encoding="utf-8",
    )
    with caplog.at_level(logging.WARNING):
        records = run_stage(files, section(), "--phrases", str(phrases))
    assert len(records) == 5  # transliterated, and spoken
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    (warning,) = [message for message in warnings if "scripts.txt" in message]
    assert "3 phrases of" in warning
    assert f"{phrases}:2 'arabic' (Arabic; right-to-left) read as 'mrhb friend.'" in warning
    assert f"{phrases}:3 'chinese' (CJK) read as" in warning
    assert f"{phrases}:4 'marks' (2 bidi marks dropped)" in warning
    assert ":1 " not in warning and ":5 " not in warning  # ASCII and accented Latin are not reported


@pytest.mark.slow
def test_the_wavs_and_the_manifest_go_to_mlflow(files, monkeypatch):
    runs = track_into(monkeypatch, stage, files, "synthesize-test")
    run_stage(files, section(denoising_strength=0.0))
    settings = tracking.settings_from_env(tracking.TrackingSettings(enabled=False, uri="", experiment=""))
    summary = tracking.get_run(settings, runs[0])
    assert summary["status"] == "FINISHED"
    assert summary["metrics"]["n_utterances"] == 3 and summary["metrics"]["audio_seconds"] > 0
    artifacts = Path(summary["artifact_uri"].removeprefix("file://"))
    assert sorted(p.name for p in (artifacts / "audio").iterdir()) == ["hello.wav", "long_one.wav", "price.wav"]
    assert (artifacts / "manifest.jsonl").is_file()


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("amp", ["off", "fp16", "bf16"])
def test_synthesis_on_cuda(files, amp):
    records = run_stage(files, section(gpus=1, amp=amp), out=f"cuda-{amp}")
    for record in records:
        audio, rate = sf.read(files / f"cuda-{amp}" / record["wav"], dtype="float32")
        assert rate == SR and len(audio) == record["n_frames"] * HOP > 0 and np.isfinite(audio).all()


def test_nvidia_checkpoints_are_accepted_as_they_are(files):
    """``--fastpitch`` an NVIDIA FastPitch checkpoint and ``--hifigan`` an NVIDIA generator file: the text and
    audio settings they do not record come from the section; the audio equals that of the same weights
    in this project's model files."""
    from ..foreign_layouts import nvidia_fastpitch, nvidia_generator
    from ..inference_models import tiny_fastpitch, tiny_generator

    torch.save(nvidia_fastpitch(tiny_fastpitch()), files / "FastPitch_checkpoint_100.pt")
    torch.save(nvidia_generator(tiny_generator()), files / "hifigan_gen_checkpoint_10.pt")
    ours = run_stage(files, section(), out="ours")
    argv = [
        "--section", section(), "--fastpitch", str(files / "FastPitch_checkpoint_100.pt"),
        "--vocoder", str(files / "hifigan_gen_checkpoint_10.pt"), "--phrases", str(files / "phrases.txt"),
        "--out-dir", str(files / "foreign"),
    ]  # fmt: skip
    parser = argparse.ArgumentParser()
    stage.add_arguments(parser)
    stage.run(parser.parse_args(argv))
    foreign = read_jsonl(files / "foreign" / "manifest.jsonl")
    assert [r["n_frames"] for r in foreign] == [r["n_frames"] for r in ours]
    for mine, theirs in zip(ours, foreign, strict=True):
        a, _ = sf.read(files / "ours" / mine["wav"], dtype="int16")
        b, _ = sf.read(files / "foreign" / theirs["wav"], dtype="int16")
        np.testing.assert_array_equal(a, b)
