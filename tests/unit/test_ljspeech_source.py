"""prepare_ljspeech end to end on a tiny LJSpeech-like archive served from a local HTTP server."""

from __future__ import annotations

import functools
import hashlib
import json
import tarfile
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from tts_pipeline.config import LJSpeechDownloadConfig
from tts_pipeline.data.ljspeech import (
    MARKER_NAME,
    CorpusLayoutError,
    archive_name,
    check_ljspeech_layout,
    prepare_ljspeech,
)
from tts_pipeline.errors import UserError

from ..local_server import serving

IDS = ("LJ001-0001", "LJ001-0002", "LJ002-0001")
METADATA = "".join(f"{uid}|Text {i}.|Text {i}.\n" for i, uid in enumerate(IDS))


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@dataclass
class Served:
    folder: Path  # what the server serves
    base_url: str
    stop: Callable[[], None]


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    folder = tmp_path / "served"
    folder.mkdir()
    handler = functools.partial(QuietHandler, directory=str(folder))
    with serving(ThreadingHTTPServer(("127.0.0.1", 0), handler)) as (url, stop):
        yield Served(folder, url, stop)


def _build_archive(path: Path, *, with_metadata: bool = True) -> Path:
    """A .tar.bz2 shaped like LJSpeech-1.1: a root folder with wavs/, metadata.csv and README."""
    staging = path.parent / "staging" / "LJSpeech-1.1"
    (staging / "wavs").mkdir(parents=True)
    rng = np.random.default_rng(0)
    for uid in IDS:
        audio = (0.1 * rng.standard_normal(2205)).astype(np.float32)
        sf.write(staging / "wavs" / f"{uid}.wav", audio, 22050, subtype="PCM_16")
    if with_metadata:
        (staging / "metadata.csv").write_text(METADATA, encoding="utf-8")
    (staging / "README").write_text("LJ Speech Dataset (test copy)\n", encoding="utf-8")
    with tarfile.open(path, "w:bz2") as tar:
        tar.add(staging, arcname="LJSpeech-1.1")
    return path


def _config(served: Served, archive: Path) -> LJSpeechDownloadConfig:
    data = archive.read_bytes()
    return LJSpeechDownloadConfig(
        url=f"{served.base_url}/{archive.name}", sha256=hashlib.sha256(data).hexdigest(), size_bytes=len(data)
    )


@pytest.fixture
def archive(served: Served) -> Path:
    return _build_archive(served.folder / "LJSpeech-1.1.tar.bz2")


def _siblings(out_dir: Path) -> set[str]:
    return {p.name for p in out_dir.parent.iterdir()}


def test_download_and_extract(tmp_path: Path, served: Served, archive: Path) -> None:
    out_dir, download_dir = tmp_path / "resources" / "ljspeech", tmp_path / "downloads"
    cfg = _config(served, archive)
    assert prepare_ljspeech(out_dir, cfg, download_dir) == out_dir

    assert sorted(p.name for p in (out_dir / "wavs").iterdir()) == [f"{uid}.wav" for uid in IDS]
    assert (out_dir / "metadata.csv").read_text(encoding="utf-8") == METADATA
    assert (out_dir / "README").is_file() and not (out_dir / "LJSpeech-1.1").exists()
    audio, rate = sf.read(out_dir / "wavs" / f"{IDS[0]}.wav", dtype="int16")
    assert rate == 22050 and audio.shape == (2205,)
    assert json.loads((out_dir / MARKER_NAME).read_text())["sha256"] == cfg.sha256
    # The archive stays outside the corpus, for re-extraction without the network.
    assert (download_dir / "LJSpeech-1.1.tar.bz2").read_bytes() == archive.read_bytes()
    assert {n for n in _siblings(out_dir) if not n.endswith(".lock")} == {"ljspeech"}


def test_verified_copy_is_returned_without_the_network(
    tmp_path: Path, served: Served, archive: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out_dir, download_dir = tmp_path / "ljspeech", tmp_path / "downloads"
    cfg = _config(served, archive)
    prepare_ljspeech(out_dir, cfg, download_dir)
    served.stop()
    (download_dir / "LJSpeech-1.1.tar.bz2").unlink()

    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("the network was used")

    monkeypatch.setattr(urllib.request, "urlopen", no_network)
    assert prepare_ljspeech(out_dir, cfg, download_dir) == out_dir


def test_incomplete_folder_is_replaced(tmp_path: Path, served: Served, archive: Path) -> None:
    out_dir = tmp_path / "ljspeech"
    (out_dir / "wavs").mkdir(parents=True)
    (out_dir / "leftover.txt").write_text("from a run that was killed")
    stale = tmp_path / ".ljspeech.tmp-123-abcd"
    (stale / "wavs").mkdir(parents=True)

    prepare_ljspeech(out_dir, _config(served, archive), tmp_path / "downloads")
    assert not (out_dir / "leftover.txt").exists() and (out_dir / MARKER_NAME).is_file()
    assert not stale.exists()


def test_marker_for_another_archive_is_not_trusted(tmp_path: Path, served: Served, archive: Path) -> None:
    out_dir = tmp_path / "ljspeech"
    cfg = _config(served, archive)
    prepare_ljspeech(out_dir, cfg, tmp_path / "downloads")
    (out_dir / MARKER_NAME).write_text(json.dumps({"sha256": "1" * 64}))
    (out_dir / "README").unlink()
    prepare_ljspeech(out_dir, cfg, tmp_path / "downloads")
    assert (out_dir / "README").is_file()


def test_wrong_checksum_names_the_config(tmp_path: Path, served: Served, archive: Path) -> None:
    cfg = _config(served, archive).model_copy(update={"sha256": "0" * 64})
    with pytest.raises(UserError, match=r"(?s)expected sha256 0{64}.*corpus\.ljspeech"):
        prepare_ljspeech(tmp_path / "ljspeech", cfg, tmp_path / "downloads")
    assert not (tmp_path / "ljspeech").exists()


def test_corrupt_archive_leaves_no_corpus(tmp_path: Path, served: Served, archive: Path) -> None:
    # The checksum matches the corrupt bytes, so only extraction can notice.
    archive.write_bytes(archive.read_bytes()[:-200])
    out_dir = tmp_path / "resources" / "ljspeech"
    with pytest.raises(UserError, match="corrupt or truncated") as caught:
        prepare_ljspeech(out_dir, _config(served, archive), tmp_path / "downloads")
    assert "LJSpeech-1.1.tar.bz2" in str(caught.value)
    assert {n for n in _siblings(out_dir) if not n.endswith(".lock")} == set()


def test_archive_without_metadata_is_refused(tmp_path: Path, served: Served) -> None:
    archive = _build_archive(served.folder / "LJSpeech-1.1.tar.bz2", with_metadata=False)
    out_dir = tmp_path / "ljspeech"
    with pytest.raises(CorpusLayoutError, match=r"LJSpeech-1\.1\.tar\.bz2.*metadata\.csv is missing"):
        prepare_ljspeech(out_dir, _config(served, archive), tmp_path / "downloads")
    assert not out_dir.exists()


def test_download_folder_inside_the_corpus_is_refused(tmp_path: Path, served: Served, archive: Path) -> None:
    with pytest.raises(UserError, match="inside the corpus folder"):
        prepare_ljspeech(tmp_path / "ljspeech", _config(served, archive), tmp_path / "ljspeech" / "downloads")


def test_check_layout_requires_wavs(tmp_path: Path) -> None:
    (tmp_path / "metadata.csv").write_text(METADATA)
    with pytest.raises(CorpusLayoutError, match="wavs/ folder is missing"):
        check_ljspeech_layout(tmp_path)
    (tmp_path / "wavs").mkdir()
    with pytest.raises(CorpusLayoutError, match=r"no \.wav file"):
        check_ljspeech_layout(tmp_path)


@pytest.mark.parametrize(
    ("url", "name"),
    [
        ("https://data.keithito.com/data/speech/LJSpeech-1.1.tar.bz2", "LJSpeech-1.1.tar.bz2"),
        ("https://mirror.example/get/LJ%20Speech.tar.bz2?token=1", "LJ Speech.tar.bz2"),
        ("https://mirror.example/", "LJSpeech-1.1.tar.bz2"),
    ],
)
def test_archive_name(url: str, name: str) -> None:
    assert archive_name(url) == name
