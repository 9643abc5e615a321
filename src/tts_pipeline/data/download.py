"""Downloading large files that resume and verify, and extracting tar archives safely.

- :func:`download_file` streams a URL to ``<dest>.part`` in constant memory, resumes a partial
  download with an HTTP ``Range`` request (and starts over cleanly when the server ignores it),
  checks the size and SHA-256, and only then renames the file to ``dest``. A file that fails the
  check is moved aside to ``<dest>.rejected`` so that it is never picked up again.
- :func:`safe_extract_tar` reads an archive once, front to back, and refuses any member that could
  land outside the target folder or is not a plain file or folder.

Only the standard library does the transfer (``urllib``); ``tqdm`` shows progress on a terminal.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import http.client
import logging
import lzma
import os
import re
import tarfile
import urllib.error
import urllib.request
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, BinaryIO

from filelock import FileLock
from tqdm import tqdm

from tts_pipeline import __version__
from tts_pipeline.errors import UserError

log = logging.getLogger(__name__)

DEFAULT_CHUNK_SIZE = 1 << 20  # 1 MiB: large enough for throughput, small enough for constant memory
DEFAULT_TIMEOUT_S = 60.0
_USER_AGENT = f"tts-pipeline/{__version__}"
_CONTENT_RANGE = re.compile(r"bytes\s+(\d+)-(\d+)/(\d+|\*)")


class DownloadError(UserError):
    """A download that failed, or whose bytes are not the expected ones."""


class ArchiveError(UserError):
    """An archive that is corrupt, truncated, or holds a member that is unsafe to extract."""


# --------------------------------------------------------------------------------------------------
# hashing and moving files aside
# --------------------------------------------------------------------------------------------------


def sha256_of(path: Path, *, chunk_size: int = DEFAULT_CHUNK_SIZE) -> str:
    """SHA-256 of a file as lowercase hex, read in chunks (constant memory)."""
    hasher = hashlib.sha256()
    _hash_file_into(hasher, Path(path), chunk_size)
    return hasher.hexdigest()


def _hash_file_into(hasher: Any, path: Path, chunk_size: int) -> None:
    with open(path, "rb") as handle:
        while chunk := handle.read(chunk_size):
            hasher.update(chunk)


def _rejected_path(dest: Path) -> Path:
    return dest.with_name(dest.name + ".rejected")


def _reject(path: Path, dest: Path) -> Path:
    """Move a file that failed verification to ``<dest>.rejected`` (replacing an older one)."""
    rejected = _rejected_path(dest)
    os.replace(path, rejected)
    return rejected


def _verify(path: Path, dest: Path, url: str, sha256: str, size_bytes: int | None, digest: str | None) -> None:
    """Raise :class:`DownloadError` (after moving ``path`` aside) unless size and checksum match.

    ``digest`` is the SHA-256 computed while downloading; ``None`` means hash the file now.
    """
    actual_size = path.stat().st_size
    if size_bytes is not None and actual_size != size_bytes:
        rejected = _reject(path, dest)
        raise DownloadError(
            f"{dest.name} from {url} has the wrong size: expected {size_bytes} bytes, got {actual_size}; "
            f"the file was moved aside to {rejected} and will not be reused (delete it when done)"
        )
    actual = digest if digest is not None else sha256_of(path)
    if actual != sha256.lower():
        rejected = _reject(path, dest)
        raise DownloadError(
            f"{dest.name} from {url} failed its checksum: expected sha256 {sha256.lower()}, got {actual}; "
            f"the file was moved aside to {rejected} and will not be reused (delete it when done)"
        )


# --------------------------------------------------------------------------------------------------
# download
# --------------------------------------------------------------------------------------------------


def download_file(
    url: str,
    dest: Path,
    *,
    sha256: str,
    size_bytes: int | None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> Path:
    """Download ``url`` to ``dest``, resuming a partial download; return ``dest`` once verified.

    - An existing ``dest`` that verifies is returned without touching the network; one that does
      not is moved to ``<dest>.rejected`` (with a warning) and downloaded again.
    - Bytes go to ``<dest>.part``. When that file exists, only the missing bytes are requested
      (``Range: bytes=<n>-``); a server answering with the whole file instead restarts the download
      from byte 0. An interrupted download keeps ``.part`` for the next call.
    - ``size_bytes`` (when given) is checked against the server's announced length before the
      transfer and against the file after it; ``sha256`` is checked on the complete file. A
      mismatch raises :class:`DownloadError` and moves the bytes to ``<dest>.rejected``.
    - A lock file (``<dest>.lock``) keeps two processes from writing the same ``.part``.

    ``file://`` URLs work too (a local mirror), without resume.
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    with FileLock(str(dest.with_name(dest.name + ".lock"))):
        if dest.exists():
            try:
                _verify(dest, dest, url, sha256, size_bytes, digest=None)
            except DownloadError as error:
                log.warning("existing download does not verify, downloading it again: %s", error)
            else:
                log.info("%s is present and verified", dest)
                return dest
        digest = _fetch(url, part, size_bytes=size_bytes, chunk_size=chunk_size, timeout_s=timeout_s)
        _verify(part, dest, url, sha256, size_bytes, digest=digest)
        with open(part, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(part, dest)
    log.info("downloaded and verified %s", dest)
    return dest


def _fetch(url: str, part: Path, *, size_bytes: int | None, chunk_size: int, timeout_s: float) -> str | None:
    """Bring ``part`` to the full length of ``url``; return its SHA-256 (``None``: not computed)."""
    offset = part.stat().st_size if part.exists() else 0
    if size_bytes is not None and offset > size_bytes:
        log.warning("%s is longer than the expected %d bytes; starting over", part, size_bytes)
        part.unlink()
        offset = 0
    if size_bytes is not None and offset == size_bytes:
        # A complete .part (killed between download and rename): verify it without the network.
        return None
    try:
        response = _open_url(url, offset, timeout_s)
        if response is None:
            # 416: the server has fewer bytes than our .part, so it cannot be a prefix of the file.
            log.warning("server refused to resume %s at byte %d; starting over", url, offset)
            part.unlink()
            return _fetch(url, part, size_bytes=size_bytes, chunk_size=chunk_size, timeout_s=timeout_s)
        with response:
            start = _response_start(response, url, offset)
            if start == 0 and offset > 0:
                log.warning("server ignored the range request for %s; starting over from byte 0", url)
            total = _announced_total(response, start)
            if size_bytes is not None and total is not None and total != size_bytes:
                raise DownloadError(
                    f"{url} has the wrong size: expected {size_bytes} bytes, the server reports {total}; "
                    f"check the URL and the expected size"
                )
            expected = size_bytes if size_bytes is not None else total
            return _stream_to_part(response, part, start, expected, url, chunk_size)
    except (urllib.error.URLError, http.client.HTTPException, OSError) as error:
        have = part.stat().st_size if part.exists() else 0
        reason = getattr(error, "reason", None) or error
        raise DownloadError(
            f"download of {url} failed ({reason}); {have} bytes are kept in {part} "
            f"and the next run resumes from there"
        ) from error


def _open_url(url: str, offset: int, timeout_s: float) -> http.client.HTTPResponse | None:
    """Open ``url`` asking for the bytes from ``offset`` on; ``None`` when the server answers 416."""
    headers = {"User-Agent": _USER_AGENT, "Accept-Encoding": "identity"}
    if offset:
        headers["Range"] = f"bytes={offset}-"
    request = urllib.request.Request(url, headers=headers)
    try:
        return urllib.request.urlopen(request, timeout=timeout_s)
    except urllib.error.HTTPError as error:
        error.close()
        if error.code == 416 and offset:
            return None
        raise DownloadError(f"download of {url} failed: HTTP {error.code} {error.reason}") from None


def _response_start(response: http.client.HTTPResponse, url: str, offset: int) -> int:
    """Byte offset in the file where the response body starts (0 when the server sent it all)."""
    status = getattr(response, "status", None) or 200  # file:// responses carry no status
    if status != 206:
        return 0
    match = _CONTENT_RANGE.fullmatch(response.headers.get("Content-Range", "").strip())
    if match is None or int(match.group(1)) != offset:
        raise DownloadError(
            f"download of {url}: asked for bytes from {offset} on, the server answered "
            f"Content-Range {response.headers.get('Content-Range')!r}"
        )
    return offset


def _announced_total(response: http.client.HTTPResponse, start: int) -> int | None:
    """The full file size the server announces, or ``None`` when it does not say."""
    match = _CONTENT_RANGE.fullmatch(response.headers.get("Content-Range", "").strip())
    if match and match.group(3) != "*":
        return int(match.group(3))
    length = response.headers.get("Content-Length")
    return start + int(length) if length and length.isdigit() else None


def _stream_to_part(
    response: BinaryIO, part: Path, start: int, expected: int | None, url: str, chunk_size: int
) -> str:
    """Write the body to ``part`` (appending when ``start`` > 0); return the whole file's SHA-256.

    The bytes already on disk are hashed first, so the file is never read twice after the transfer.
    """
    hasher = hashlib.sha256()
    if start:
        _hash_file_into(hasher, part, chunk_size)
    written = start
    progress = tqdm(
        total=expected,
        initial=start,
        unit="B",
        unit_scale=True,
        unit_divisor=1024,
        desc=part.name.removesuffix(".part"),
        disable=None,  # None: show it on a terminal only, not in Snakemake logs
    )
    with progress, open(part, "ab" if start else "wb") as out:
        while chunk := response.read(chunk_size):
            written += len(chunk)
            if expected is not None and written > expected:
                break
            out.write(chunk)
            hasher.update(chunk)
            progress.update(len(chunk))
    if expected is not None and written > expected:
        # More bytes than expected: not the file we want. Stop before filling the disk, and delete
        # the bytes so that the next run does not resume from them.
        part.unlink()
        raise DownloadError(
            f"{url} has the wrong size: expected {expected} bytes, the server sent more; "
            f"the partial download {part} was deleted"
        )
    if expected is not None and written < expected:
        raise DownloadError(
            f"download of {url} ended early at {written} of {expected} bytes; "
            f"they are kept in {part} and the next run resumes from there"
        )
    return hasher.hexdigest()


# --------------------------------------------------------------------------------------------------
# safe extraction
# --------------------------------------------------------------------------------------------------

# Compression is recognised by the file's first bytes, not by its name.
_MAGIC: tuple[tuple[bytes, Callable[..., IO[bytes]]], ...] = (
    (b"BZh", bz2.open),
    (b"\x1f\x8b", gzip.open),
    (b"\xfd7zXZ\x00", lzma.open),
)
# What a corrupt or truncated compressed stream raises (bz2/gzip raise OSError without an errno,
# gzip also EOFError/zlib.error, lzma LZMAError); a real I/O error carries an errno and passes.
_CORRUPT = (tarfile.TarError, EOFError, zlib.error, lzma.LZMAError)


def _open_decompressed(archive: Path) -> IO[bytes]:
    with open(archive, "rb") as handle:
        head = handle.read(8)
    for magic, opener in _MAGIC:
        if head.startswith(magic):
            return opener(archive, "rb")
    return open(archive, "rb")


def safe_extract_tar(archive: Path, target: Path, *, strip_prefix: str | None = None) -> int:
    """Extract a (compressed) tar archive into ``target``; return the number of members written.

    The archive is read once, front to back (streaming mode): a ``.tar.bz2`` of a few GB would
    otherwise be re-read from the start on every backward seek. Compression (bz2, gzip, xz, none)
    is decoded by the matching stdlib module rather than tarfile's own stream reader, because that
    reader stops at the tar end marker without checking the compressed stream's end (a truncated
    tail goes unnoticed) and cannot read multi-stream bzip2 files (pbzip2). The stream is read to
    its end after the last member, so truncation and trailing corruption are always reported.

    With ``strip_prefix`` (e.g. ``"LJSpeech-1.1/"``), members under that folder are written without
    it and members outside it are skipped.

    Raises :class:`ArchiveError`, naming the archive and the member, for: absolute paths, ``..``
    components, symbolic and hard links (corpus archives have none, and link chains are how past
    bypasses of tarfile's own ``data`` filter escaped the target), device files, FIFOs, and corrupt
    or truncated data. Every member that is written also passes tarfile's ``data`` filter (safe
    permission bits, no owner change). Members read before the error stay in ``target``: extract
    into a temporary folder and rename it on success when a half result must never be seen.
    """
    archive, target = Path(archive), Path(target)
    prefix = _split_name(strip_prefix) if strip_prefix else []
    target.mkdir(parents=True, exist_ok=True)
    try:
        with _open_decompressed(archive) as stream:
            with tarfile.open(fileobj=stream, mode="r|") as tar:
                count = _extract_members(tar, archive, target, prefix)
            # Drain what follows the tar end marker so that the decompressor reaches (and checks)
            # the end of the compressed stream.
            while stream.read(DEFAULT_CHUNK_SIZE):
                pass
    except ArchiveError:
        raise
    except _CORRUPT as error:
        raise ArchiveError(f"{archive} is corrupt or truncated ({type(error).__name__}: {error})") from None
    except OSError as error:
        if error.errno is not None:
            raise
        raise ArchiveError(f"{archive} is corrupt or truncated ({error})") from None
    return count


# tarfile's extraction filters arrived in 3.11.4 (and in security updates of older releases). Our own
# checks already refuse every unsafe member kind; the filter adds safe permission bits where present.
_FILTER_ARGS: dict[str, str] = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
_FILTER_ERRORS: tuple[type[Exception], ...] = (tarfile.FilterError,) if hasattr(tarfile, "FilterError") else ()


def _extract_members(tar: tarfile.TarFile, archive: Path, target: Path, prefix: list[str]) -> int:
    """Extract the members of a streaming ``tar`` in archive order; return how many were written."""
    count = 0
    with tqdm(unit=" files", desc=f"extracting {archive.name}", disable=None) as progress:
        for member in tar:
            renamed = _checked_member(member, archive, prefix)
            if renamed is None:
                continue
            try:
                tar.extract(renamed, target, **_FILTER_ARGS)
            except _FILTER_ERRORS as error:
                raise ArchiveError(f"{archive}: refusing unsafe member {member.name!r}: {error}") from None
            count += 1
            progress.update()
    return count


def _split_name(name: str) -> list[str]:
    """Path components of an archive member name, without empty and ``.`` parts."""
    return [part for part in name.replace("\\", "/").split("/") if part not in ("", ".")]


def _checked_member(member: tarfile.TarInfo, archive: Path, prefix: list[str]) -> tarfile.TarInfo | None:
    """Refuse unsafe members; return the member renamed without ``prefix``, or ``None`` to skip it.

    Every member is checked, including those outside ``prefix`` that would be skipped: an archive
    holding an escaping member is not the archive we expect.
    """
    name = member.name
    parts = _split_name(name)
    if name.startswith(("/", "\\")) or os.path.isabs(name):
        raise ArchiveError(f"{archive}: refusing member {name!r}: absolute path")
    if ".." in parts:
        raise ArchiveError(f"{archive}: refusing member {name!r}: '..' in its path could escape the target")
    if member.issym() or member.islnk():
        kind = "symbolic" if member.issym() else "hard"
        raise ArchiveError(f"{archive}: refusing member {name!r}: {kind} link to {member.linkname!r}")
    if not (member.isfile() or member.isdir()):
        raise ArchiveError(f"{archive}: refusing member {name!r}: not a regular file or folder (device, FIFO, ...)")
    if parts[: len(prefix)] != prefix:
        log.debug("skipping %s: outside %s", name, "/".join(prefix))
        return None
    rest = parts[len(prefix):]
    if not rest:
        return None  # the prefix folder itself
    return member.replace(name="/".join(rest), deep=False)
