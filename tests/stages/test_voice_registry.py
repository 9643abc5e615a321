"""The exported voice as a registered MLflow model: export_voice in-process on tiny model files, tracked
into a SQLite store; a new version only for a new voice, the alias on it, the model speaking WAVs through
``mlflow.pyfunc``, bad input named, the voice resolved from its ``models:/`` URI, a tracking server that is
away; and (slow) ``mlflow models serve`` answering HTTP."""

from __future__ import annotations

import base64
import io
import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import requests
import soundfile as sf
import torch

from tts_pipeline.config import ExportConfig
from tts_pipeline.errors import UserError
from tts_pipeline.files import write_jsonl
from tts_pipeline.serving import registry
from tts_pipeline.serving.voice_source import resolve_voice
from tts_pipeline.stages import export_voice as stage

from ..inference_models import save_fastpitch_file, save_hifigan_file
from ..mlflow_server import free_port
from ..stage_helpers import track_into
from ..voice_folder import export_section, run_export

EXPERIMENT = "voice-test"
ALIAS = "champion"
URI = f"models:/{EXPERIMENT}@{ALIAS}"


@pytest.fixture
def files(tmp_path) -> Path:
    """Tiny model files as the trainers write them and a validation manifest of two texts; one thread."""
    torch.set_num_threads(1)
    save_fastpitch_file(tmp_path / "fastpitch" / "model.pt")
    save_hifigan_file(tmp_path / "hifigan" / "model.pt")
    records = [{"id": f"VAL-{i}", "text": text, "wav": f"wavs/VAL-{i}.wav"} for i, text in enumerate(["Hi.", "A cat."])]
    write_jsonl(tmp_path / "data" / "manifest.val.jsonl", records)
    return tmp_path


@pytest.fixture
def store(files, monkeypatch) -> str:
    """Tracking on into ``files/mlflow.db`` (the stage's TTS_* variables and MLflow's own); its URI."""
    track_into(monkeypatch, stage, files, EXPERIMENT)
    uri = f"sqlite:///{files / 'mlflow.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    monkeypatch.setenv("TTS_PIPELINE_CACHE", str(files / "cache"))
    return uri


def export(root: Path, *, pace: float = 1.0, **settings: object) -> Path:
    """Run export_voice (ONNX only, the fewest checks) into ``root/demo/export``."""
    settings = ExportConfig(**{"formats": ["onnx"], "n_texts": 1, "batch_size": 2, **settings})
    files = (root / "fastpitch/model.pt", root / "hifigan/model.pt", root / "data/manifest.val.jsonl")
    return run_export(export_section(settings, pace=pace), *files, root / "demo" / "export")


def versions(uri: str) -> dict[str, str]:
    """Version -> its voice hash tag, of every version of the experiment's registered model."""
    from mlflow import MlflowClient

    found = MlflowClient(tracking_uri=uri).search_model_versions(f"name = '{EXPERIMENT}'")
    return {str(version.version): version.tags.get(registry.HASH_TAG) for version in found}


def aliased(uri: str) -> str:
    from mlflow import MlflowClient

    return str(MlflowClient(tracking_uri=uri).get_model_version_by_alias(EXPERIMENT, ALIAS).version)


def test_a_new_version_only_for_a_new_voice(files, store, caplog):
    caplog.set_level(logging.INFO, logger="tts_pipeline")
    out = export(files)
    assert versions(store) == {"1": registry.voice_hash(out)} and aliased(store) == "1"
    assert f"serve it with: mlflow models serve -m {URI} --env-manager local" in caplog.text

    export(files)  # the same models again: the same voice, no new version
    assert list(versions(store)) == ["1"] and aliased(store) == "1"
    assert "version 1 holds the same voice" in caplog.text

    export(files, pace=1.5)  # other default controls: another voice
    assert sorted(versions(store)) == ["1", "2"] and aliased(store) == "2"


def test_the_registered_voice_speaks_wavs_and_names_bad_input(files, store):
    import mlflow.pyfunc
    from mlflow.exceptions import MlflowException

    card = json.loads((export(files) / "voice.json").read_text())
    model = mlflow.pyfunc.load_model(URI)
    answer = model.predict(pd.DataFrame({"text": ["Hello there.", "A cat."], "speed": [1.0, 2.0]}))
    assert list(answer.columns) == ["audio_wav_base64", "sampling_rate", "duration_s"] and len(answer) == 2
    for row in answer.itertuples():
        audio, rate = sf.read(io.BytesIO(base64.b64decode(row.audio_wav_base64)), dtype="int16")
        info = sf.info(io.BytesIO(base64.b64decode(row.audio_wav_base64)))
        assert rate == row.sampling_rate == card["audio"]["sampling_rate"] and info.subtype == "PCM_16"
        assert audio.ndim == 1 and audio.size > 0 and row.duration_s == pytest.approx(audio.size / rate)
    assert answer.duration_s[1] < answer.duration_s[0]  # a shorter text, twice as fast

    bad = {
        "row 1: text: expected a non-empty string": pd.DataFrame({"text": ["Hi.", " "]}),
        "row 0: speed: expected a number from 0.25 to 4.0, got 9.0": pd.DataFrame({"text": ["Hi."], "speed": [9.0]}),
        "missing inputs ['text']": pd.DataFrame({"words": ["Hi."]}),
        "row 1: text: ": pd.DataFrame({"text": ["Hi.", "word " * 1200]}),  # longer than max_phrase_symbols
    }
    for message, frame in bad.items():
        with pytest.raises(MlflowException) as error:
            model.predict(frame)
        assert message in str(error.value) and error.value.error_code == "INVALID_PARAMETER_VALUE"


def test_the_model_carries_the_onnx_voice_and_resolves_from_its_uri(files, store, monkeypatch):
    out = export(files)
    folder = resolve_voice(URI, tracking_uri=store)
    assert sorted(path.name for path in folder.iterdir()) == [
        "fastpitch.onnx", "hifigan.onnx", "verification.json", "voice.json"
    ]  # fmt: skip
    assert registry.voice_hash(folder) == registry.voice_hash(out)
    assert folder.is_relative_to(files / "cache")
    assert resolve_voice(f"models:/{EXPERIMENT}/1", tracking_uri=store) == folder  # found in the cache
    assert resolve_voice(str(out)) == out

    for spec, message in [
        (str(files), "no voice.json here"),
        (f"models:/{EXPERIMENT}@nobody", "not in the MLflow registry"),
        ("models:/no-version", "not a registered voice's URI"),
    ]:
        with pytest.raises(UserError, match=message):
            resolve_voice(spec, tracking_uri=store)
    monkeypatch.delenv("MLFLOW_TRACKING_URI")  # MLflow would look in a new ./mlflow.db
    with pytest.raises(UserError, match="Set MLFLOW_TRACKING_URI"):
        resolve_voice(URI)


def test_registration_follows_the_settings(files, store):
    export(files, register_voice=False)
    assert versions(store) == {}
    export(files, registry_alias="staging")
    from mlflow import MlflowClient

    assert str(MlflowClient(tracking_uri=store).get_model_version_by_alias(EXPERIMENT, "staging").version) == "1"


def test_a_tracking_server_that_is_away_leaves_the_export_standing(files, store, monkeypatch, caplog):
    def away(*args, **kwargs):
        raise requests.exceptions.ConnectionError("[Errno 111] Connection refused")

    monkeypatch.setattr(registry, "register_voice", away)
    out = export(files)
    assert (out / "voice.json").is_file()
    assert caplog.text.count("is unreachable") == 1 and "the voice is not registered" in caplog.text

    def broken(*args, **kwargs):
        raise ValueError("a bug")

    monkeypatch.setattr(registry, "register_voice", broken)
    with pytest.raises(ValueError, match="a bug"):
        export(files)


def test_an_experiment_the_registry_cannot_name_is_refused_before_the_export(files, store, monkeypatch):
    monkeypatch.setenv("TTS_MLFLOW_EXPERIMENT", "team/voice")
    with pytest.raises(UserError, match="refuses '/'"):
        export(files)
    assert not (files / "demo" / "export" / "voice.json").exists()


# --------------------------------------------------------------------------------------------------
# MLflow's scoring server
# --------------------------------------------------------------------------------------------------

SERVE_TIMEOUT_S = 180


@pytest.mark.slow
def test_mlflow_models_serve_speaks_the_registered_voice(files, store):
    card = json.loads((export(files) / "voice.json").read_text())
    port = free_port()
    command = [sys.executable, "-m", "mlflow", "models", "serve", "-m", URI, "--env-manager", "local",
               "--host", "127.0.0.1", "--port", str(port)]  # fmt: skip
    # the scoring server starts `uvicorn` from PATH: this environment's, as an activated one would
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    env = {**os.environ, "PATH": path, "MLFLOW_TRACKING_URI": store, "MLFLOW_DISABLE_TELEMETRY": "true"}
    log = files / "serve.log"
    with log.open("w") as output:
        # a session of its own: the server's workers are stopped with it
        server = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + SERVE_TIMEOUT_S
        while not _answers(f"{base}/ping"):
            assert server.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.5)
        hello = {"dataframe_records": [{"text": "Hello there."}]}
        answer = requests.post(f"{base}/invocations", json=hello, timeout=60)
        assert answer.status_code == 200, answer.text
        row = answer.json()["predictions"][0]
        audio, rate = sf.read(io.BytesIO(base64.b64decode(row["audio_wav_base64"])), dtype="int16")
        assert rate == row["sampling_rate"] == card["audio"]["sampling_rate"] and audio.ndim == 1 and audio.size > 0

        for body in ({"dataframe_records": [{"text": ""}]}, {"dataframe_records": [{"text": "Hi.", "speed": 10.0}]}):
            refused = requests.post(f"{base}/invocations", json=body, timeout=60)
            assert refused.status_code == 400, refused.text
    finally:
        try:
            os.killpg(server.pid, signal.SIGKILL)
        except ProcessLookupError:  # it ended by itself (the assertion above says why)
            pass
        server.wait(timeout=30)


def _answers(url: str) -> bool:
    try:
        return requests.get(url, timeout=2).status_code == 200
    except requests.exceptions.RequestException:
        return False
