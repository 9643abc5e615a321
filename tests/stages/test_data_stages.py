"""The corpus and manifest stages run as commands: sources, records, bad input, exit codes."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import tarfile
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import yaml

from tts_pipeline.cli import main
from tts_pipeline.config import parse_config
from tts_pipeline.stage_table import stage_params

from ..conftest import REPO

RATE = 22050


def write_corpus(root: Path, clips: dict[str, tuple[np.ndarray, int]], texts: dict[str, str] | None = None) -> Path:
    """An LJSpeech-layout folder: wavs/<id>.wav and metadata.csv (id|text|text)."""
    (root / "wavs").mkdir(parents=True)
    rows = []
    for utterance_id, (samples, rate) in clips.items():
        sf.write(root / "wavs" / f"{utterance_id}.wav", samples, rate, subtype="PCM_16")
        text = (texts or {}).get(utterance_id, "A short sentence.")
        rows.append(f"{utterance_id}|{text}|{text}")
    (root / "metadata.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return root


def speechlike(seconds: float, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * RATE)) / RATE
    return (0.3 * np.sin(2 * np.pi * 150 * t) + 0.01 * rng.standard_normal(t.size)).astype(np.float32)


def config_for(tmp_path: Path, **corpus) -> dict:
    raw = yaml.safe_load((REPO / "config/demo.yaml").read_text())
    raw["corpus"] = {**{"source": "demo", "name": "demo"}, **corpus}
    raw["data"]["split"].update(val_size=1, test_size=1)
    return raw


def run_stage(*argv: str) -> None:
    main(list(argv))


def digest(folder: Path) -> str:
    sha = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            sha.update(path.name.encode() + path.read_bytes())
    return sha.hexdigest()


def test_local_corpus_is_recorded_and_never_modified(tmp_path):
    local = write_corpus(tmp_path / "mine", {f"utt{i}": (speechlike(1.0, i), RATE) for i in range(4)})
    before = digest(local)
    config = parse_config(config_for(tmp_path, source="local", name="mine", path=str(local)))
    record = tmp_path / "resources/mine/corpus.json"
    run_stage("corpus", "--section", stage_params(config, "corpus"), "--record", str(record))
    payload = json.loads(record.read_text())
    assert payload["root"] == str(local) and payload["n_wavs"] == 4 and payload["n_metadata_rows"] == 4
    assert digest(local) == before
    assert sorted(p.name for p in record.parent.iterdir()) == ["corpus.json"]


def test_local_corpus_in_wrong_layout_names_the_key(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    config = parse_config(config_for(tmp_path, source="local", name="x", path=str(tmp_path / "empty")))
    with pytest.raises(SystemExit) as exit_info:
        run_stage("corpus", "--section", stage_params(config, "corpus"), "--record", str(tmp_path / "r/x/corpus.json"))
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "corpus.path" in err and "metadata.csv" in err
    assert not (tmp_path / "r/x/corpus.json").exists()


def _ljspeech_archive(path: Path) -> tuple[str, int]:
    """A miniature LJSpeech-1.1.tar.bz2; returns its SHA-256 and size."""
    with tarfile.open(path, "w:bz2") as tar:
        def add(name: str, data: bytes) -> None:
            info = tarfile.TarInfo(f"LJSpeech-1.1/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))

        rows = []
        for i in range(3):
            buffer = io.BytesIO()
            sf.write(buffer, speechlike(1.0, i), RATE, format="WAV", subtype="PCM_16")
            add(f"wavs/LJ001-000{i}.wav", buffer.getvalue())
            rows.append(f"LJ001-000{i}|Printing, in the only sense.|Printing, in the only sense.")
        add("metadata.csv", ("\n".join(rows) + "\n").encode())
        add("README", b"miniature\n")
    data = path.read_bytes()
    return hashlib.sha256(data).hexdigest(), len(data)


def test_ljspeech_source_downloads_verifies_and_skips_a_verified_copy(tmp_path):
    archive = tmp_path / "mirror/LJSpeech-1.1.tar.bz2"
    archive.parent.mkdir()
    sha256, size = _ljspeech_archive(archive)
    config = parse_config(
        config_for(
            tmp_path,
            source="ljspeech",
            name="LJSpeech-1.1",
            ljspeech={"url": archive.as_uri(), "sha256": sha256, "size_bytes": size},
        )
    )
    record = tmp_path / "resources/LJSpeech-1.1/corpus.json"
    argv = ["corpus", "--section", stage_params(config, "corpus"), "--record", str(record),
            "--downloads", str(tmp_path / "resources/downloads")]
    run_stage(*argv)
    assert json.loads(record.read_text())["n_wavs"] == 3
    assert (tmp_path / "resources/LJSpeech-1.1/wavs/LJ001-0002.wav").is_file()

    archive.unlink()  # a verified copy is used as it is: no download, no extraction
    record.unlink()
    run_stage(*argv)
    assert json.loads(record.read_text())["n_wavs"] == 3


def _manifest_argv(tmp_path: Path, corpus: Path, **data) -> list[str]:
    raw = config_for(tmp_path)
    raw["data"].update(data)
    config = parse_config(raw)
    record = tmp_path / "corpus.json"
    record.write_text(json.dumps({"name": "test", "root": str(corpus)}))
    return ["manifest", "--section", stage_params(config, "manifest"), "--corpus", str(record),
            "--validation", str(tmp_path / "out/validation.json"), "--resampled-dir", str(tmp_path / "resampled")]


@pytest.fixture
def flawed_corpus(tmp_path) -> Path:
    clips = {f"good{i}": (speechlike(1.0, i), RATE) for i in range(4)}
    clips["stereo"] = (np.stack([speechlike(1.0), speechlike(1.0)], axis=1), RATE)
    clips["slow_rate"] = (speechlike(1.0)[:16000], 16000)
    clips["tiny"] = (speechlike(0.1), RATE)
    return write_corpus(tmp_path / "corpus", clips, texts={"good3": "Caf\u00e9 \U0001F600 menu."})


def test_manifest_error_policy_lists_every_bad_utterance(tmp_path, flawed_corpus, capsys):
    with pytest.raises(SystemExit) as exit_info:
        run_stage(*_manifest_argv(tmp_path, flawed_corpus, on_invalid="error"))
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    for utterance_id, reason in (("stereo", "multichannel"), ("slow_rate", "wrong_sample_rate"),
                                 ("tiny", "too_short"), ("good3", "unknown_characters")):
        assert utterance_id in err and reason in err
    assert not (tmp_path / "out").exists(), "nothing is written when the stage fails"


def test_manifest_skip_policy_records_exclusions(tmp_path, flawed_corpus):
    run_stage(*_manifest_argv(tmp_path, flawed_corpus, on_invalid="skip"))
    validation = json.loads((tmp_path / "out/validation.json").read_text())
    assert validation["n_valid"] == 3
    assert {r["id"] for r in validation["rejections"]} == {"stereo", "slow_rate", "tiny", "good3"}
    records = [json.loads(line) for split in ("train", "val", "test")
               for line in (tmp_path / f"out/manifest.{split}.jsonl").read_text().splitlines()]
    assert sorted(r["id"] for r in records) == ["good0", "good1", "good2"]


def test_manifest_resamples_when_allowed(tmp_path, flawed_corpus):
    run_stage(*_manifest_argv(tmp_path, flawed_corpus, on_invalid="skip", resample=True))
    records = {json.loads(line)["id"]: json.loads(line) for split in ("train", "val", "test")
               for line in (tmp_path / f"out/manifest.{split}.jsonl").read_text().splitlines()}
    resampled = records["slow_rate"]
    assert resampled["sample_rate"] == RATE
    assert sf.info(resampled["wav"]).samplerate == RATE


@pytest.fixture
def every_kind_of_bad_clip(tmp_path) -> tuple[Path, dict[str, str]]:
    """A corpus with one utterance per kind of bad input beside four good ones: (folder, id -> reason)."""
    root = tmp_path / "zoo"
    wavs = root / "wavs"
    wavs.mkdir(parents=True)
    good = {f"good{i}": speechlike(1.0, i) for i in range(4)}
    for name, samples in good.items():
        sf.write(wavs / f"{name}.wav", samples, RATE, subtype="PCM_16")
    some_nan = speechlike(1.0)
    some_nan[100:110] = np.nan
    sf.write(wavs / "some_nan.wav", some_nan, RATE, subtype="FLOAT")
    sf.write(wavs / "all_nan.wav", np.full(RATE, np.nan, np.float32), RATE, subtype="FLOAT")
    one_inf = speechlike(1.0)
    one_inf[500] = np.inf
    sf.write(wavs / "one_inf.wav", one_inf, RATE, subtype="FLOAT")
    (wavs / "zero_bytes.wav").write_bytes(b"")
    (wavs / "not_audio.wav").write_bytes(b"RIFF" + bytes(range(200)))
    sf.write(wavs / "stereo.wav", np.stack([speechlike(1.0)] * 2, axis=1), RATE, subtype="PCM_16")
    sf.write(wavs / "slow_rate.wav", speechlike(1.0)[:16000], 16000, subtype="PCM_16")
    sf.write(wavs / "tiny.wav", speechlike(0.1), RATE, subtype="PCM_16")
    sf.write(wavs / "too_long.wav", speechlike(21.0), RATE, subtype="PCM_16")
    sf.write(wavs / "clipped.wav", np.sign(speechlike(1.0)), RATE, subtype="PCM_16")
    outside = tmp_path / "elsewhere.wav"
    sf.write(outside, speechlike(1.0), RATE, subtype="PCM_16")
    (wavs / "linked_out.wav").symlink_to(outside)
    sf.write(wavs / "no_text.wav", speechlike(1.0), RATE, subtype="PCM_16")
    sf.write(wavs / "emoji.wav", speechlike(1.0), RATE, subtype="PCM_16")
    sf.write(wavs / "orphan.wav", speechlike(1.0), RATE, subtype="PCM_16")  # no metadata line
    texts = {name: "A short sentence." for name in [*good, "some_nan", "all_nan", "one_inf", "zero_bytes",
                                                      "not_audio", "stereo", "slow_rate", "tiny", "too_long",
                                                      "clipped", "linked_out", "no_wav"]}  # fmt: skip
    texts.update(no_text="", emoji="Caf\u00e9 \U0001F600 menu.")
    lines = [f"{name}|{text}|{text}" for name, text in texts.items()]
    (root / "metadata.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    expected = {
        "some_nan": "non_finite_audio", "all_nan": "non_finite_audio", "one_inf": "non_finite_audio",
        "zero_bytes": "empty_audio", "not_audio": "unreadable_audio", "stereo": "multichannel",
        "slow_rate": "wrong_sample_rate", "tiny": "too_short", "too_long": "too_long", "clipped": "clipped",
        "linked_out": "outside_corpus", "no_text": "empty_text", "emoji": "unknown_characters",
        "no_wav": "missing_wav", "orphan": "wav_without_metadata",
    }  # fmt: skip
    return root, expected


def test_every_kind_of_bad_clip_is_named_and_none_reaches_a_manifest(tmp_path, every_kind_of_bad_clip, capsys):
    corpus, expected = every_kind_of_bad_clip
    run_stage(*_manifest_argv(tmp_path, corpus, on_invalid="skip"))
    validation = json.loads((tmp_path / "out/validation.json").read_text())
    rejected = {r["id"]: r["reason"] for r in validation["rejections"]}
    assert rejected == expected
    records = [json.loads(line) for split in ("train", "val", "test")
               for line in (tmp_path / f"out/manifest.{split}.jsonl").read_text().splitlines()]
    assert sorted(r["id"] for r in records) == ["good0", "good1", "good2", "good3"]

    shutil.rmtree(tmp_path / "out")
    with pytest.raises(SystemExit) as exit_info:
        run_stage(*_manifest_argv(tmp_path, corpus, on_invalid="error"))
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    for utterance_id, reason in expected.items():
        assert utterance_id in err and reason in err, (utterance_id, reason)
    assert not (tmp_path / "out").exists()
