"""Resumable, verified downloads from a local HTTP server, and safe streaming tar extraction."""

from __future__ import annotations

import bz2
import hashlib
import io
import re
import stat
import tarfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from tts_pipeline.data.download import ArchiveError, DownloadError, download_file, safe_extract_tar, sha256_of
from tts_pipeline.errors import UserError

from ..local_server import serving

CHUNK = 16 * 1024


# --------------------------------------------------------------------------------------------------
# a local server that honours (or ignores) Range requests
# --------------------------------------------------------------------------------------------------


@dataclass
class ServerState:
    """Files served by path, server behaviour, and what clients asked for."""

    files: dict[str, bytes]
    honour_range: bool = True
    truncate_after: int | None = None  # announce the full length but close after this many bytes
    send_length: bool = True  # False: no Content-Length, the body ends when the connection closes
    ranges: list[str | None] = field(default_factory=list)
    bytes_sent: int = 0


class RangeHandler(BaseHTTPRequestHandler):
    """GET with single open-ended ranges (``bytes=N-``): all the downloader asks for."""

    state: ServerState  # set on a subclass per server

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        data = self.state.files.get(self.path)
        requested = self.headers.get("Range")
        self.state.ranges.append(requested)
        if data is None:
            self.send_error(404)
            return
        start = 0
        if requested and self.state.honour_range:
            start = int(re.fullmatch(r"bytes=(\d+)-", requested).group(1))
            if start >= len(data):
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(data)}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        else:
            self.send_response(200)
        body = data[start:]
        if self.state.send_length:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.state.truncate_after is not None:
            body = body[: self.state.truncate_after]
        self.wfile.write(body)
        self.state.bytes_sent += len(body)

    def log_message(self, format: str, *args: object) -> None:  # keep test output quiet
        pass


class QuietServer(ThreadingHTTPServer):
    """A client that hangs up early (as the downloader does on a wrong size) is not a test failure."""

    def handle_error(self, request: object, client_address: object) -> None:
        pass


@dataclass
class Server:
    state: ServerState
    base_url: str
    stop: Callable[[], None]


@pytest.fixture
def payload() -> bytes:
    return np.random.default_rng(0).bytes(300_000)


@pytest.fixture
def server(payload: bytes) -> Iterator[Server]:
    state = ServerState(files={"/data.bin": payload})
    handler = type("Handler", (RangeHandler,), {"state": state})
    with serving(QuietServer(("127.0.0.1", 0), handler)) as (url, stop):
        yield Server(state, url, stop)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _download(server: Server, dest: Path, data: bytes, **overrides: object) -> Path:
    kwargs: dict = {"sha256": _sha(data), "size_bytes": len(data), "chunk_size": CHUNK, "timeout_s": 5}
    kwargs.update(overrides)
    return download_file(f"{server.base_url}/data.bin", dest, **kwargs)


# --------------------------------------------------------------------------------------------------
# download_file
# --------------------------------------------------------------------------------------------------


def test_sha256_of_matches_hashlib(tmp_path: Path, payload: bytes) -> None:
    path = tmp_path / "f.bin"
    path.write_bytes(payload)
    assert sha256_of(path, chunk_size=1000) == _sha(payload)


def test_full_download_is_verified_and_renamed(tmp_path: Path, server: Server, payload: bytes) -> None:
    dest = tmp_path / "dl" / "data.bin"
    assert _download(server, dest, payload) == dest
    assert dest.read_bytes() == payload
    assert not dest.with_name("data.bin.part").exists()
    assert server.state.ranges == [None]


def test_resume_requests_only_the_missing_bytes(tmp_path: Path, server: Server, payload: bytes) -> None:
    dest = tmp_path / "data.bin"
    have = 100_000
    dest.with_name("data.bin.part").write_bytes(payload[:have])
    _download(server, dest, payload)
    assert dest.read_bytes() == payload
    assert server.state.ranges == [f"bytes={have}-"]
    assert server.state.bytes_sent == len(payload) - have


def test_server_ignoring_range_restarts_from_zero(tmp_path: Path, server: Server, payload: bytes) -> None:
    server.state.honour_range = False
    dest = tmp_path / "data.bin"
    # Wrong bytes in the partial file: appending the full body to them would fail the checksum.
    dest.with_name("data.bin.part").write_bytes(b"x" * 50_000)
    _download(server, dest, payload)
    assert dest.read_bytes() == payload
    assert server.state.ranges == ["bytes=50000-"]


def test_interrupted_download_keeps_part_and_resumes(tmp_path: Path, server: Server, payload: bytes) -> None:
    dest = tmp_path / "data.bin"
    part = dest.with_name("data.bin.part")
    server.state.truncate_after = 100_000
    with pytest.raises(DownloadError, match="resumes"):
        _download(server, dest, payload)
    kept = part.stat().st_size
    assert 0 < kept <= 100_000 and part.read_bytes() == payload[:kept]
    assert not dest.exists()

    server.state.truncate_after = None
    _download(server, dest, payload)
    assert dest.read_bytes() == payload
    assert server.state.ranges[-1] == f"bytes={kept}-"


def test_part_longer_than_the_file_starts_over(tmp_path: Path, server: Server, payload: bytes) -> None:
    dest = tmp_path / "data.bin"
    dest.with_name("data.bin.part").write_bytes(b"y" * (len(payload) + 10))
    _download(server, dest, payload, size_bytes=None)  # unknown size: the server's 416 tells us
    assert dest.read_bytes() == payload
    assert server.state.ranges == [f"bytes={len(payload) + 10}-", None]


def test_verified_file_is_returned_without_the_network(tmp_path: Path, server: Server, payload: bytes) -> None:
    dest = tmp_path / "data.bin"
    _download(server, dest, payload)
    server.stop()
    assert _download(server, dest, payload) == dest
    assert server.state.ranges == [None]


def test_wrong_checksum_is_refused_and_moved_aside(tmp_path: Path, server: Server, payload: bytes) -> None:
    dest = tmp_path / "data.bin"
    wrong = "0" * 64
    with pytest.raises(DownloadError) as caught:
        _download(server, dest, payload, sha256=wrong)
    message = str(caught.value)
    rejected = tmp_path / "data.bin.rejected"
    assert "data.bin" in message and wrong in message and _sha(payload) in message
    assert "moved aside" in message and str(rejected) in message
    assert rejected.read_bytes() == payload
    assert not dest.exists() and not dest.with_name("data.bin.part").exists()

    # The rejected bytes are not resumed from: the next attempt downloads the whole file again.
    _download(server, dest, payload)
    assert server.state.ranges == [None, None]


def test_wrong_size_is_refused_before_the_transfer(tmp_path: Path, server: Server, payload: bytes) -> None:
    dest = tmp_path / "data.bin"
    with pytest.raises(DownloadError, match=rf"expected {len(payload) + 1} bytes.*reports {len(payload)}"):
        _download(server, dest, payload, size_bytes=len(payload) + 1)
    assert not dest.exists() and not dest.with_name("data.bin.part").exists()


def test_unannounced_extra_bytes_are_refused_and_deleted(tmp_path: Path, server: Server, payload: bytes) -> None:
    server.state.send_length = False
    dest = tmp_path / "data.bin"
    with pytest.raises(DownloadError, match=rf"expected {len(payload) - 1} bytes, the server sent more.*deleted"):
        _download(server, dest, payload, size_bytes=len(payload) - 1)
    assert not dest.exists() and not dest.with_name("data.bin.part").exists()


def test_unannounced_short_body_is_kept_for_resume(tmp_path: Path, server: Server, payload: bytes) -> None:
    server.state.send_length = False
    dest = tmp_path / "data.bin"
    with pytest.raises(DownloadError, match=rf"ended early at {len(payload)} of {len(payload) + 1} bytes"):
        _download(server, dest, payload, size_bytes=len(payload) + 1)
    assert dest.with_name("data.bin.part").read_bytes() == payload


def test_file_url_is_a_local_mirror(tmp_path: Path, payload: bytes) -> None:
    mirror = tmp_path / "mirror" / "data.bin"
    mirror.parent.mkdir()
    mirror.write_bytes(payload)
    dest = tmp_path / "dl" / "data.bin"
    dest.parent.mkdir()
    dest.with_name("data.bin.part").write_bytes(b"z" * 10)  # file:// cannot resume: starts over
    download_file(mirror.as_uri(), dest, sha256=_sha(payload), size_bytes=len(payload), chunk_size=CHUNK)
    assert dest.read_bytes() == payload


def test_http_error_names_the_url(tmp_path: Path, server: Server, payload: bytes) -> None:
    with pytest.raises(DownloadError, match=r"missing\.bin failed: HTTP 404"):
        download_file(f"{server.base_url}/missing.bin", tmp_path / "m.bin", sha256=_sha(payload), size_bytes=None)


def test_unreachable_server_is_a_user_error(tmp_path: Path, server: Server, payload: bytes) -> None:
    server.stop()
    with pytest.raises(UserError, match="data.bin failed"):
        _download(server, tmp_path / "data.bin", payload)


# --------------------------------------------------------------------------------------------------
# safe_extract_tar
# --------------------------------------------------------------------------------------------------


def _file(name: str, data: bytes = b"hello") -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, data


def _special(name: str, kind: bytes, linkname: str = "") -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = linkname
    return info, None


def _write_tar(path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]], mode: str = "w:bz2") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, mode) as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


def _all_files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def test_extract_strips_prefix_and_skips_other_members(tmp_path: Path) -> None:
    members = [
        _special("LJSpeech-1.1", tarfile.DIRTYPE),
        _special("LJSpeech-1.1/wavs", tarfile.DIRTYPE),
        _file("LJSpeech-1.1/wavs/LJ001-0001.wav", b"RIFF"),
        _file("./LJSpeech-1.1/metadata.csv", b"LJ001-0001|a|a\n"),
        _file("unrelated.txt"),
    ]
    archive = _write_tar(tmp_path / "a.tar.bz2", members)
    target = tmp_path / "out"
    assert safe_extract_tar(archive, target, strip_prefix="LJSpeech-1.1/") == 3
    assert _all_files(target) == {"wavs", "wavs/LJ001-0001.wav", "metadata.csv"}
    assert (target / "wavs" / "LJ001-0001.wav").read_bytes() == b"RIFF"


def test_extract_drops_special_permission_bits(tmp_path: Path) -> None:
    info, data = _file("setuid.sh", b"#!/bin/sh\n")
    info.mode = 0o6777
    archive = _write_tar(tmp_path / "a.tar.bz2", [(info, data)])
    safe_extract_tar(archive, tmp_path / "out")
    mode = (tmp_path / "out" / "setuid.sh").stat().st_mode
    assert not mode & (stat.S_ISUID | stat.S_ISGID) and not mode & stat.S_IWOTH


@pytest.mark.parametrize("mode", ["w", "w:gz", "w:xz", "w:bz2"])
def test_extract_reads_each_compression(tmp_path: Path, mode: str) -> None:
    archive = _write_tar(tmp_path / "a.tar", [_file("d/x.txt", b"x")], mode)
    assert safe_extract_tar(archive, tmp_path / "out") == 1
    assert (tmp_path / "out" / "d" / "x.txt").read_bytes() == b"x"


def test_extract_reads_multistream_bzip2(tmp_path: Path) -> None:
    # pbzip2 writes several bzip2 streams back to back; tarfile's own "r|bz2" reader stops at the first.
    plain = _write_tar(tmp_path / "a.tar", [_file(f"f{i}.bin", bytes([i]) * 20_000) for i in range(6)], "w")
    raw = plain.read_bytes()
    archive = tmp_path / "multi.tar.bz2"
    archive.write_bytes(bz2.compress(raw[: len(raw) // 2]) + bz2.compress(raw[len(raw) // 2 :]))
    assert safe_extract_tar(archive, tmp_path / "out") == 6


UNSAFE = {
    "parent": _file("../evil"),
    "nested parent": _file("LJSpeech-1.1/../../evil"),
    "absolute": _file("/tmp/evil"),
    "symlink outside": _special("LJSpeech-1.1/evil", tarfile.SYMTYPE, "../../evil"),
    "absolute symlink": _special("LJSpeech-1.1/evil", tarfile.SYMTYPE, "/etc/passwd"),
    "hard link outside": _special("LJSpeech-1.1/evil", tarfile.LNKTYPE, "../evil"),
    "device": _special("LJSpeech-1.1/evil", tarfile.CHRTYPE),
    "fifo": _special("LJSpeech-1.1/evil", tarfile.FIFOTYPE),
}


@pytest.mark.parametrize("case", list(UNSAFE))
def test_unsafe_member_is_refused(tmp_path: Path, case: str) -> None:
    info, data = UNSAFE[case]
    archive = _write_tar(tmp_path / "in" / "bad.tar.bz2", [_file("LJSpeech-1.1/ok.txt"), (info, data)])
    work = tmp_path / "work"
    with pytest.raises(ArchiveError) as caught:
        safe_extract_tar(archive, work / "target", strip_prefix="LJSpeech-1.1/")
    assert isinstance(caught.value, UserError)
    assert str(archive) in str(caught.value) and info.name in str(caught.value)
    assert _all_files(work) == {"target", "target/ok.txt"}  # nothing beside or above the target
    assert _all_files(tmp_path / "in") == {"bad.tar.bz2"}
    assert not any(p.name == "evil" for p in tmp_path.parent.glob("*"))


def test_unsafe_member_outside_the_prefix_is_refused_too(tmp_path: Path) -> None:
    archive = _write_tar(tmp_path / "bad.tar.bz2", [_file("other/../../evil")])
    with pytest.raises(ArchiveError, match=r"other/\.\./\.\./evil"):
        safe_extract_tar(archive, tmp_path / "out", strip_prefix="LJSpeech-1.1/")


@pytest.fixture(scope="module")
def good_bz2(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    rng = np.random.default_rng(1)
    members = [_file(f"LJSpeech-1.1/wavs/{i}.wav", rng.bytes(10_000)) for i in range(10)]
    return _write_tar(tmp_path_factory.mktemp("good") / "good.tar.bz2", members).read_bytes()


@pytest.mark.parametrize(
    "corrupt",
    [
        pytest.param(lambda raw: raw[: len(raw) // 2], id="truncated-half"),
        pytest.param(lambda raw: raw[:-1], id="truncated-last-byte"),
        pytest.param(lambda raw: raw[:1000] + bytes(b ^ 0xFF for b in raw[1000:1100]) + raw[1100:], id="flipped"),
        pytest.param(lambda raw: np.random.default_rng(2).bytes(50_000), id="garbage"),
        pytest.param(lambda raw: b"", id="empty"),
    ],
)
def test_corrupt_archive_is_refused(tmp_path: Path, good_bz2: bytes, corrupt) -> None:
    archive = tmp_path / "bad.tar.bz2"
    archive.write_bytes(corrupt(good_bz2))
    with pytest.raises(ArchiveError, match=rf"{re.escape(str(archive))} is corrupt or truncated"):
        safe_extract_tar(archive, tmp_path / "out", strip_prefix="LJSpeech-1.1/")
