"""A full disk, told as such: the folder being written and the space left on its file system.

Libraries report a full disk in their own words. Python's own writes raise ``OSError`` with errno
``ENOSPC`` (or ``EDQUOT`` past a quota), but numpy says ``1000000 requested and 65520 written`` and
torch's checkpoint writer ``unexpected pos 704 vs 598``, with no errno at all, and SQLite under MLflow
``database or disk is full``. :func:`full_disk_message` recognises all of them in an exception or anything
it was raised from, and says instead which folder could not be written and how much its file system has
left. A short write (numpy's, torch's) counts as a
full disk only while that file system is nearly full (:data:`NEARLY_FULL`): the same words on a disk
with room are some other fault, left as they are.
"""

from __future__ import annotations

import errno
import re
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path

from tts_pipeline.sizes import describe_bytes

FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})

# What writers say about a write the disk could not take, when they give no errno.
SHORT_WRITE = re.compile(
    r"No space left on device|Disk quota exceeded|unexpected pos \d+ vs \d+|requested and \d+ written|"
    r"PytorchStreamWriter failed|iostream error|database or disk is full",
    re.IGNORECASE,
)

NEARLY_FULL = 1024**3
"""Free bytes under which a short write is taken for a full disk (a checkpoint may need this much)."""


def _chain(error: BaseException) -> Iterator[BaseException]:
    """``error`` and what it was raised from or during, each once."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _existing(path: Path) -> Path | None:
    """``path`` or its nearest folder above that exists (where a file would have gone)."""
    for candidate in (path, *path.parents):
        if candidate.is_dir():
            return candidate
    return None


def full_disk_message(error: BaseException, folders: Iterable[str | Path] = ()) -> str | None:
    """What to tell the user when ``error`` comes from a full disk, or None when it does not.

    Args:
        error: The exception a command ended with.
        folders: Where the command writes (its output and work folders, or files in them); the one
            with the least free space is named when the error does not name its file.
    """
    chain = list(_chain(error))
    certain = any(isinstance(item, OSError) and item.errno in FULL_ERRNOS for item in chain)
    if not certain and not any(SHORT_WRITE.search(str(item)) for item in chain):
        return None
    named = [Path(item.filename) for item in chain if isinstance(item, OSError) and isinstance(item.filename, str)]
    candidates = [found for path in [*named, *map(Path, folders)] if (found := _existing(path)) is not None]
    if not candidates:
        return f"no space left on device ({_words(error)})" if certain else None
    usage = {folder: shutil.disk_usage(folder) for folder in dict.fromkeys(candidates)}
    # the folder of the file the error names, else the fullest of the folders the command writes
    folder = candidates[0] if named else min(usage, key=lambda name: usage[name].free)
    free, total = usage[folder].free, usage[folder].total
    if not certain and free >= NEARLY_FULL:
        return None
    return (
        f"no space left on device: {folder} has {describe_bytes(free)} free of {describe_bytes(total)} on its "
        f"file system ({_words(error)}). Free some space (or move results_dir to a bigger disk), then run the "
        "same command again: finished outputs and checkpoints are kept"
    )


def _words(error: BaseException) -> str:
    """The writer's own words, short: the line of the error (or of what it was raised from) that says
    the write failed, after the error's type; a store's error repeats its whole SQL statement."""
    for item in _chain(error):
        lines = str(item).splitlines()
        said = next((line for line in lines if SHORT_WRITE.search(line)), None)
        if said is None and isinstance(item, OSError) and item.errno in FULL_ERRNOS:
            said = lines[0] if lines else ""
        if said is not None:
            said = said.strip()
            return f"{type(item).__name__}: {said if len(said) <= 160 else said[:157] + '...'}"
    return type(error).__name__
