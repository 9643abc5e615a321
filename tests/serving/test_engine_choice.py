"""``serve --engine auto``: the faster engine by measurement, measured once per machine and voice."""

from __future__ import annotations

import json

import pytest

from tts_pipeline.serving import engine_choice
from tts_pipeline.serving.engine_choice import EngineComparison, choose_engine, compare_engines

from ..voice_folder import export_tiny_voice


@pytest.fixture(scope="module")
def voice(tmp_path_factory):
    return export_tiny_voice(tmp_path_factory.mktemp("voice"))


def test_both_engines_are_timed_side_by_side(voice):
    comparison = compare_engines(voice, text="Hello there.", rounds=2, threads=1)
    assert set(comparison.seconds) == {"onnx", "torch"} and all(s > 0 for s in comparison.seconds.values())
    assert comparison.chosen == min(comparison.seconds, key=comparison.seconds.get)
    assert comparison.audio_seconds > 0 and comparison.real_time("onnx") > 0


def test_the_choice_is_measured_once_then_read_from_the_cache(voice, tmp_path, monkeypatch):
    calls = []

    def fake_compare(folder, **kwargs):
        calls.append(folder)
        return EngineComparison({"onnx": 0.3, "torch": 0.2}, 2.0, 3, kwargs.get("threads"), "torch")

    monkeypatch.setattr(engine_choice, "compare_engines", fake_compare)
    cache = tmp_path / "cache" / "engine-choice.json"
    assert choose_engine(voice, threads=1, cache=cache) == "torch"
    assert choose_engine(voice, threads=1, cache=cache) == "torch"
    assert len(calls) == 1  # the second start read the cache
    (entry,) = json.loads(cache.read_text()).values()
    assert entry["seconds"] == {"onnx": 0.3, "torch": 0.2}
    assert choose_engine(voice, threads=2, cache=cache) == "torch" and len(calls) == 2  # another thread count


def test_a_folder_with_one_engine_needs_no_measurement(voice, tmp_path, monkeypatch):
    import shutil

    copy = tmp_path / "export"
    shutil.copytree(voice, copy)
    (copy / "fastpitch.pt").unlink()  # as a registered model holds it: ONNX files only
    monkeypatch.setattr(engine_choice, "compare_engines", lambda *a, **k: pytest.fail("nothing to compare"))
    assert choose_engine(copy, cache=tmp_path / "cache.json") == "onnx"
