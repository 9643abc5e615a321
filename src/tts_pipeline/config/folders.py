"""The config's folders, checked on disk before any job writes into them.

``results_dir``, ``resources_dir`` and the folder of a SQLite ``tracking.uri`` are created by the
stages. A file already standing where one of them (or a folder above it) must go would end a job with
a raw ``NotADirectoryError`` / ``FileExistsError``; this check names the key and the path instead.
Relative paths are taken from the working directory, as the workflow and the stages take them.

Any character may appear in these folders (the rules quote every path they hand a shell) except a
``?`` on the way to the default MLflow store: in ``sqlite:///<results_dir>/mlflow.db`` SQLAlchemy
reads it as the start of the URI's query and would open a database somewhere else, silently.
SQLAlchemy takes the rest of the path literally (spaces, quotes, ``$``, ``%``, ``#``), so the URI is
not percent-encoded.
"""

from __future__ import annotations

from pathlib import Path

from tts_pipeline.config.base import ConfigError
from tts_pipeline.config.pipeline import PipelineConfig


def folder_problem(folder: Path) -> str | None:
    """Why ``folder`` cannot be used or created as a folder, or None when it can."""
    for candidate in (folder, *folder.parents):
        if candidate.is_symlink() and not candidate.exists():
            return f"'{candidate}' is a broken link, so '{folder}' cannot be made a folder"
        if candidate.exists():
            if candidate.is_dir():
                return None
            if candidate == folder:
                return f"'{folder}' is a file, not a folder"
            return f"'{candidate}' is a file, so '{folder}' cannot be made a folder"
    return None


def query_mark_problem(results_dir: Path) -> str | None:
    """Why the default SQLite store cannot live in ``results_dir``, or None when it can."""
    absolute = results_dir.resolve()
    if "?" not in str(absolute):
        return None
    return (
        f"'{absolute}' contains '?', which the MLflow store's URI (sqlite:///<results_dir>/mlflow.db) "
        "reads as the start of its query: choose a folder without '?', set tracking.uri, or set "
        "tracking.enabled: false"
    )


def sqlite_path(uri: str) -> Path | None:
    """The database file of a ``sqlite:///`` URI, or None for other stores and in-memory SQLite."""
    scheme, sep, rest = uri.partition(":///")
    if not sep or scheme.split("+")[0] != "sqlite":
        return None
    path = rest.split("?", 1)[0]
    if path in ("", ":memory:"):
        return None
    return Path(path)


def check_folders(config: PipelineConfig, source: str = "<dict>") -> None:
    """Raise :class:`ConfigError` naming every folder key whose path is blocked by a file."""
    problems = []
    for key in ("results_dir", "resources_dir"):
        problem = folder_problem(Path(getattr(config, key)))
        if problem:
            problems.append(f"  - {key}: {problem}")
    if config.tracking.enabled and config.tracking.uri is None:
        problem = query_mark_problem(Path(config.results_dir))
        if problem:
            problems.append(f"  - results_dir: {problem}")
    database = sqlite_path(config.tracking.uri) if config.tracking.enabled and config.tracking.uri else None
    if database is not None:
        problem = folder_problem(database.parent)
        if database.is_dir():
            problem = f"'{database}' is a folder, not a SQLite database file"
        if problem:
            problems.append(f"  - tracking.uri: {problem}")
    if problems:
        raise ConfigError("\n".join([f"invalid config ({source}):", *problems]))
