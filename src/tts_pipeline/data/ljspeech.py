"""The LJSpeech-1.1 corpus source: download, verify, extract into the LJSpeech layout.

:func:`prepare_ljspeech` turns the published archive into ``<out_dir>/wavs/<id>.wav``,
``<out_dir>/metadata.csv`` and ``<out_dir>/README``. The archive is kept in a separate download
folder, so an interrupted download resumes and a deleted corpus is re-extracted without the network.

A corpus folder counts as complete only when it holds the marker file ``.verified.json``, which
records the SHA-256 of the archive it came from. The marker is written inside a temporary sibling
folder after the whole archive has been extracted, and that folder is then renamed into place: a
killed extraction leaves a hidden temporary folder (removed by the next run), never a corpus that
looks complete.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import shutil
import urllib.parse
from pathlib import Path, PurePosixPath

from filelock import FileLock

from tts_pipeline.config import LJSpeechDownloadConfig
from tts_pipeline.data.download import DownloadError, download_file, safe_extract_tar
from tts_pipeline.errors import UserError
from tts_pipeline.files import write_json

log = logging.getLogger(__name__)

ARCHIVE_ROOT = "LJSpeech-1.1/"  # the folder every member of the published archive lives in
DEFAULT_ARCHIVE_NAME = "LJSpeech-1.1.tar.bz2"
MARKER_NAME = ".verified.json"


class CorpusLayoutError(UserError):
    """A corpus folder without the LJSpeech layout (``metadata.csv`` and ``wavs/*.wav``)."""


def prepare_ljspeech(out_dir: Path, cfg: LJSpeechDownloadConfig, download_dir: Path) -> Path:
    """Make ``out_dir`` an extracted, verified copy of LJSpeech-1.1 and return it.

    ``download_dir`` keeps the archive (and its partial download) between runs; it must not be
    inside ``out_dir``, which is replaced as a whole. When ``out_dir`` already holds a copy
    verified against ``cfg.sha256``, it is returned at once, without touching the network.

    Raises :class:`~tts_pipeline.errors.UserError` subclasses for a failed download, a wrong size or
    checksum, an unsafe or corrupt archive, or an archive without the LJSpeech layout; ``out_dir``
    is then left as it was.
    """
    out_dir, download_dir = Path(out_dir), Path(download_dir)
    if download_dir.resolve().is_relative_to(out_dir.resolve()):
        raise UserError(
            f"download folder {download_dir} is inside the corpus folder {out_dir}, which is replaced "
            f"as a whole; choose a download folder outside it"
        )
    if is_verified(out_dir, cfg.sha256):
        log.info("%s already holds verified LJSpeech (sha256 %s)", out_dir, cfg.sha256)
        return out_dir
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(out_dir.with_name(f".{out_dir.name}.lock"))):
        if is_verified(out_dir, cfg.sha256):  # another process finished while we waited
            return out_dir
        archive = _download(cfg, download_dir)
        _extract_into_place(archive, out_dir, cfg)
    log.info("LJSpeech is ready in %s", out_dir)
    return out_dir


def is_verified(out_dir: Path, sha256: str) -> bool:
    """Whether ``out_dir`` holds a complete extraction of the archive with this SHA-256."""
    marker = Path(out_dir) / MARKER_NAME
    try:
        recorded = json.loads(marker.read_text(encoding="utf-8")).get("sha256")
    except (OSError, ValueError, AttributeError):
        return False
    if recorded != sha256.lower():
        return False
    try:
        check_ljspeech_layout(out_dir)
    except CorpusLayoutError as error:
        log.warning("%s has a verification marker but is incomplete, preparing it again: %s", out_dir, error)
        return False
    return True


def check_ljspeech_layout(root: Path, *, source: str | None = None) -> None:
    """Raise :class:`CorpusLayoutError` unless ``root`` has ``metadata.csv`` and ``wavs/*.wav``.

    ``source`` (e.g. the archive) is named in the message when the folder came from it.
    """
    root = Path(root)
    origin = f" (extracted from {source})" if source else ""
    if not (root / "metadata.csv").is_file():
        raise CorpusLayoutError(f"{root}{origin}: expected an LJSpeech layout, but metadata.csv is missing")
    wavs = root / "wavs"
    if not wavs.is_dir():
        raise CorpusLayoutError(f"{root}{origin}: expected an LJSpeech layout, but the wavs/ folder is missing")
    with os.scandir(wavs) as entries:
        if not any(entry.name.endswith(".wav") and entry.is_file() for entry in entries):
            raise CorpusLayoutError(f"{root}{origin}: expected an LJSpeech layout, but wavs/ holds no .wav file")


def archive_name(url: str) -> str:
    """The file name the archive is saved under: the URL's last path component."""
    name = PurePosixPath(urllib.parse.unquote(urllib.parse.urlsplit(url).path)).name
    return name if name not in ("", ".", "..") else DEFAULT_ARCHIVE_NAME


def _download(cfg: LJSpeechDownloadConfig, download_dir: Path) -> Path:
    dest = download_dir / archive_name(cfg.url)
    try:
        return download_file(cfg.url, dest, sha256=cfg.sha256, size_bytes=cfg.size_bytes)
    except DownloadError as error:
        # Name the config keys, so the user knows where the expected values come from.
        raise DownloadError(f"{error}\n(values from config corpus.ljspeech: url, sha256, size_bytes)") from error


def _extract_into_place(archive: Path, out_dir: Path, cfg: LJSpeechDownloadConfig) -> None:
    """Extract into a temporary sibling of ``out_dir``, check it, mark it verified, rename it."""
    _remove_stale_temporaries(out_dir)
    staging = _new_temporary(out_dir)
    try:
        n_members = safe_extract_tar(archive, staging, strip_prefix=ARCHIVE_ROOT)
        check_ljspeech_layout(staging, source=str(archive))
        write_json(
            staging / MARKER_NAME,
            {"sha256": cfg.sha256.lower(), "url": cfg.url, "archive": archive.name, "n_members": n_members},
        )
        _replace_dir(staging, out_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _temporary_prefix(out_dir: Path) -> str:
    return f".{out_dir.name}.tmp-"


def _new_temporary(out_dir: Path) -> Path:
    """A new empty hidden folder beside ``out_dir``.

    Not ``tempfile.mkdtemp``: its folders are private (mode 0700) and this one becomes the corpus,
    which should get the usual permissions (``mkdir`` applies the umask).
    """
    path = out_dir.with_name(f"{_temporary_prefix(out_dir)}{os.getpid()}-{secrets.token_hex(4)}")
    path.mkdir()
    return path


def _remove_stale_temporaries(out_dir: Path) -> None:
    """Remove temporary folders that a killed earlier run left beside ``out_dir`` (under the lock)."""
    for stale in out_dir.parent.glob(_temporary_prefix(out_dir) + "*"):
        log.info("removing %s, left by an interrupted run", stale)
        shutil.rmtree(stale, ignore_errors=True)


def _replace_dir(new: Path, out_dir: Path) -> None:
    """Put ``new`` at ``out_dir``. A folder cannot be renamed over a non-empty one, so an existing
    (incomplete or outdated) ``out_dir`` is first renamed to a temporary name, then deleted."""
    if out_dir.exists() or out_dir.is_symlink():
        log.warning("replacing %s, which is not a verified copy of this archive", out_dir)
        old = _new_temporary(out_dir)
        os.replace(out_dir, old / "old")
        os.replace(new, out_dir)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(new, out_dir)
