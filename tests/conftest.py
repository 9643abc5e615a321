"""Shared fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def repo_root() -> Path:
    return REPO


@pytest.fixture(autouse=True)
def outside_the_workflow(monkeypatch):
    """Every test runs as a stage run by hand: the workflow's TTS_* variables (tracking, parent run,
    log cadence) of a surrounding shell never leak in; tests that want them set their own."""
    import os

    for name in [key for key in os.environ if key.startswith("TTS_")]:
        monkeypatch.delenv(name)


@pytest.fixture(scope="session")
def _cache_home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("cache-home")


@pytest.fixture(autouse=True)
def private_cache(monkeypatch, _cache_home):
    """The per-user cache (``inference.amp: auto``'s and ``serve --engine auto``'s measured choices,
    downloaded voices) in a folder of this test session, shared by its tests and their subprocesses: a
    test never reads the user's, nor writes into it."""
    monkeypatch.delenv("TTS_PIPELINE_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(_cache_home))
    return _cache_home


@pytest.fixture
def one_thread():
    """One torch thread for the test (bit-exact comparisons), the process's count restored after."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)
