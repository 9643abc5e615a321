"""Atomic writes: whole files or none, ordinary permissions, fsync exactly when asked for."""

from __future__ import annotations

import os

import numpy as np
import pytest

from tts_pipeline import files


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_save_npy_round_trips_with_ordinary_permissions_and_no_temporary_left(tmp_path):
    array = np.arange(12, dtype=np.float32).reshape(3, 4)
    path = tmp_path / "sub" / "a.npy"
    files.save_npy(path, array, fsync=False)
    loaded = np.load(path)
    assert loaded.dtype == np.float32 and np.array_equal(loaded, array)
    assert path.stat().st_mode & 0o777 == 0o666 & ~_umask()
    assert [p.name for p in path.parent.iterdir()] == ["a.npy"]


def test_save_npy_refuses_object_arrays_and_keeps_the_previous_file(tmp_path):
    path = tmp_path / "a.npy"
    files.save_npy(path, np.ones(3, dtype=np.float32))
    with pytest.raises(ValueError):
        files.save_npy(path, np.array([{"a": 1}], dtype=object))  # needs pickle, which is off
    assert np.array_equal(np.load(path), np.ones(3, dtype=np.float32))
    assert [p.name for p in tmp_path.iterdir()] == ["a.npy"]


@pytest.mark.parametrize("mode", ["w", "wb"])
def test_atomic_open_replaces_only_when_the_block_succeeds(tmp_path, mode):
    path = tmp_path / "f.txt"
    path.write_text("old", encoding="utf-8")
    payload = "new" if mode == "w" else b"new"
    with pytest.raises(RuntimeError), files.atomic_open(path, mode) as handle:
        handle.write(payload)
        raise RuntimeError("killed half way")
    assert path.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["f.txt"]
    with files.atomic_open(path, mode) as handle:
        handle.write(payload)
    assert path.read_text(encoding="utf-8") == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["f.txt"]


@pytest.mark.parametrize("fsync", [True, False])
def test_fsync_happens_before_the_rename_exactly_when_asked(tmp_path, monkeypatch, fsync):
    events: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(os, "fsync", lambda fd: (events.append("fsync"), real_fsync(fd))[1])
    monkeypatch.setattr(os, "replace", lambda a, b: (events.append("replace"), real_replace(a, b))[1])
    files.save_npy(tmp_path / "a.npy", np.zeros(2), fsync=fsync)
    files.write_json(tmp_path / "b.json", {"x": 1})  # JSON is always fsynced
    expected_npy = ["fsync", "replace"] if fsync else ["replace"]
    assert events == [*expected_npy, "fsync", "replace"]
