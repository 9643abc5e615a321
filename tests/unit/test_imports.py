"""Synthesis and benchmarks must not pull in training code: no module of ``inference/``, ``models/`` or
``benchmark/`` imports ``tts_pipeline.training``, at module level or inside a function."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

import tts_pipeline

PACKAGE_ROOT = Path(tts_pipeline.__file__).parent
GUARDED = ("inference", "models", "benchmark")
FORBIDDEN = "tts_pipeline.training"


def imported_modules(path: Path) -> list[str]:
    """Absolute names of every module a file imports, anywhere in it (relative imports resolved)."""
    package = ".".join(("tts_pipeline", *path.relative_to(PACKAGE_ROOT).parent.parts))
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            # ``from tts_pipeline import training`` imports the package through its parent.
            names.extend([module, *(f"{module}.{alias.name}" for alias in node.names)])
    return names


def is_training(name: str) -> bool:
    return name == FORBIDDEN or name.startswith(f"{FORBIDDEN}.")


def guarded_files() -> list[Path]:
    return sorted(path for folder in GUARDED for path in (PACKAGE_ROOT / folder).rglob("*.py"))


def test_the_guarded_folders_have_modules():
    files = guarded_files()
    for folder in GUARDED:
        assert any(path.is_relative_to(PACKAGE_ROOT / folder) for path in files), folder


@pytest.mark.parametrize("path", guarded_files(), ids=lambda path: str(path.relative_to(PACKAGE_ROOT)))
def test_no_training_import(path):
    offending = sorted({name for name in imported_modules(path) if is_training(name)})
    assert not offending, f"{path.relative_to(PACKAGE_ROOT)} imports {offending}"


@pytest.mark.parametrize(
    ("source", "where", "expected"),
    [
        ("import tts_pipeline.training.engine", "inference/x.py", True),
        ("def f():\n    from tts_pipeline.training import hifigan", "inference/x.py", True),
        ("from tts_pipeline import training", "models/x.py", True),
        ("from ..training import loop", "benchmark/x.py", True),
        ("from ...training.checkpoint import Checkpoint", "models/hifigan/x.py", True),
        ("from . import training", "benchmark/x.py", False),  # tts_pipeline.benchmark.training
        ("from tts_pipeline.trainingwheels import x", "models/x.py", False),
        ("from tts_pipeline.timers import Timer", "inference/x.py", False),
    ],
)
def test_the_check_sees_every_form_of_import(tmp_path, monkeypatch, source, where, expected):
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE_ROOT", tmp_path)
    path = tmp_path / where
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source + "\n", encoding="utf-8")
    assert any(is_training(name) for name in imported_modules(path)) is expected
