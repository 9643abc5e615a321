"""The exported voice in the MLflow Model Registry: logged as a model in the export's run, registered
under the experiment's name, a new version only when the voice changed, an alias on that version.

::

    registered = register_voice("results/demo/export", name="demo", alias="champion", run_id=run_id)
    # RegisteredVoice(name="demo", version="3", uri="models:/demo@champion")
    # then: mlflow models serve -m models:/demo@champion --env-manager local

Whether the voice changed is told by :func:`voice_hash`, kept as the version tag ``voice_sha256``: the
bytes of the ONNX files and the voice card without what says where the files came from (``source``:
run ids, paths, the git commit) or how they were made (``export``: library versions). A re-export of
the same models gives the same voice, so the latest version stays and only the alias is set again.

The model (:class:`tts_pipeline.serving.mlflow_model.VoiceModel`) carries the ONNX voice alone:
``voice.json``, the ONNX files and ``verification.json``; the TorchScript and PyTorch files stay in the
export folder (and the run's artifacts): the served model runs on ONNX Runtime and need not carry them.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from tts_pipeline.errors import UserError
from tts_pipeline.export.voice_card import ROLES, VERIFICATION, VOICE_CARD, read_card

log = logging.getLogger(__name__)

MODEL_NAME = "voice"
"""The logged model's name in the run (``mlflow.pyfunc.log_model(name=...)``)."""
HASH_TAG = "voice_sha256"
"""Tag of each model version (and its logged model): :func:`voice_hash` of the voice it holds."""
# card sections that do not change what the voice says: provenance and the exporter's versions
UNSPOKEN = ("source", "export")
ENGINE_FORMAT = "onnx"
ENV_TRACKING_URI = "MLFLOW_TRACKING_URI"


class RegisteredVoice(NamedTuple):
    """A registered voice: the registered model, the version the alias points at, the alias's URI."""

    name: str
    version: str
    uri: str


def registry_name(experiment: str) -> str:
    """The registered model's name for ``experiment``: the experiment's name itself (UserError when the
    registry cannot take it: it refuses ``/`` and ``:`` in names)."""
    bad = [char for char in ("/", ":") if char in experiment]
    if not experiment.strip() or bad:
        raise UserError(
            f"experiment {experiment!r}: the MLflow Model Registry names the voice after the experiment and "
            f"refuses {' and '.join(repr(char) for char in bad) or 'an empty name'}; rename the experiment "
            "or set export.register_voice: false"
        )
    return experiment


def model_files(folder: str | Path, card: Mapping[str, Any] | None = None) -> list[Path]:
    """The files the model carries: ``voice.json``, the ONNX files it names, ``verification.json`` (when
    there). UserError naming the card's key when an ONNX file is missing."""
    folder = Path(folder)
    card = card if card is not None else read_card(folder)
    files = [folder / VOICE_CARD]
    for role in ROLES:
        name = card[role]["files"].get(ENGINE_FORMAT)
        if not name or not (folder / name).is_file():
            raise UserError(
                f"{folder / VOICE_CARD}: {role}.files.{ENGINE_FORMAT}: no ONNX file ({name or 'not exported'}); "
                "the registered voice runs on ONNX Runtime (export.formats must hold onnx)"
            )
        files.append(folder / name)
    if (folder / VERIFICATION).is_file():
        files.append(folder / VERIFICATION)
    return files


def voice_hash(folder: str | Path) -> str:
    """SHA-256 of what the served voice speaks with: the ONNX files' bytes and the card without
    :data:`UNSPOKEN` sections, each role's ``files`` cut to its ONNX file (other formats may come and
    go without changing the voice)."""
    folder = Path(folder)
    card = read_card(folder)
    spoken = {key: value for key, value in card.items() if key not in UNSPOKEN}
    for role in ROLES:
        spoken[role] = {**card[role], "files": {ENGINE_FORMAT: card[role]["files"].get(ENGINE_FORMAT)}}
    digest = hashlib.sha256(json.dumps(spoken, sort_keys=True).encode("utf-8"))
    for path in model_files(folder, card)[1:]:
        if path.name == VERIFICATION:
            continue  # its seconds change with every run
        digest.update(path.name.encode("utf-8") + b"\0")
        with path.open("rb") as file:
            for block in iter(lambda: file.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def register_voice(
    export_dir: str | Path,
    *,
    name: str,
    alias: str,
    run_id: str | None = None,
    tracking_uri: str | None = None,
) -> RegisteredVoice:
    """Log the voice of ``export_dir`` as an MLflow model in run ``run_id`` and register it as ``name``,
    unless the latest version of ``name`` already holds the same voice; then point ``alias`` at the
    version.

    Args:
        export_dir: The export folder (R/export) with its ``voice.json``.
        name: The registered model (the experiment's name, :func:`registry_name`).
        alias: The alias set on the version (``export.registry_alias``).
        run_id: The run the model is logged in; default: the active run, if any.
        tracking_uri: The store; default: MLflow's (``MLFLOW_TRACKING_URI``). Its registry is the
            same store (unless ``MLFLOW_REGISTRY_URI`` says otherwise).

    Returns:
        The name, the version the alias points at, and ``models:/<name>@<alias>``.
    """
    import mlflow
    from mlflow import MlflowClient

    from tts_pipeline.tracking.client import store_lock

    export_dir = Path(export_dir)
    digest = voice_hash(export_dir)
    uri = tracking_uri or mlflow.get_tracking_uri()
    # the whole registration holds a SQLite store's lock: other jobs write to it meanwhile otherwise
    with store_lock(uri), _tracking_uri(uri):
        client = MlflowClient(tracking_uri=uri)
        version = _latest_version_with(client, name, digest)
        if version is None:
            version = _log_and_register(client, export_dir, name, digest, run_id)
            log.info("registered model %r: version %s (a new voice, %s %s)", name, version, HASH_TAG, digest[:12])
        else:
            log.info("registered model %r: version %s holds the same voice; no new version", name, version)
        client.set_registered_model_alias(name, alias, version)
    return RegisteredVoice(name, version, f"models:/{name}@{alias}")


def serve_command(uri: str) -> str:
    """The command that serves the registered voice ``uri`` over HTTP with MLflow's scoring server."""
    return f"mlflow models serve -m {uri} --env-manager local"


def _latest_version_with(client: Any, name: str, digest: str) -> str | None:
    """The latest version of ``name`` when it holds the voice ``digest``; None otherwise (also when
    ``name`` is not registered yet)."""
    from mlflow.exceptions import MlflowException

    try:
        model = client.get_registered_model(name)
    except MlflowException as error:
        if error.error_code == "RESOURCE_DOES_NOT_EXIST":
            return None
        raise
    # the latest version of each stage; without stages (MLflow 3) the latest version
    versions = model.latest_versions or []
    if not versions:
        return None
    latest = max(versions, key=lambda version: int(version.version))
    return str(latest.version) if latest.tags.get(HASH_TAG) == digest else None


def _log_and_register(client: Any, export_dir: Path, name: str, digest: str, run_id: str | None) -> str:
    """Log the ONNX voice as a pyfunc model of run ``run_id`` and register it as a new version of ``name``."""
    import importlib.metadata

    import mlflow
    import mlflow.pyfunc
    from mlflow.entities import LoggedModelOutput

    from tts_pipeline.serving.mlflow_model import VOICE_ARTIFACT, VoiceModel, input_example, signature

    if run_id is None and (active := mlflow.active_run()) is not None:
        run_id = active.info.run_id
    # The model is made first, in the run's experiment and of the run: the stage's run is not MLflow's
    # active run (the job logs through its own client; starting it as the active run would end it when
    # done), and a model made by log_model alone would land in the default experiment.
    experiment_id = client.get_run(run_id).info.experiment_id if run_id else None
    logged = mlflow.initialize_logged_model(
        name=MODEL_NAME, source_run_id=run_id, tags={HASH_TAG: digest}, experiment_id=experiment_id
    )
    # What the model needs beside this package (installed where it is served: --env-manager local);
    # pinned to what logged it, as MLflow pins its own inferred requirements.
    requirements = [
        f"{package}=={importlib.metadata.version(package)}"
        for package in ("mlflow", "onnxruntime", "numpy", "pandas", "soundfile")
    ]
    with tempfile.TemporaryDirectory(prefix="voice-model-") as tmp:
        voice = Path(tmp) / VOICE_ARTIFACT
        _gather(model_files(export_dir), voice)
        info = mlflow.pyfunc.log_model(
            name=MODEL_NAME,
            model_id=logged.model_id,
            python_model=VoiceModel(),
            artifacts={VOICE_ARTIFACT: str(voice)},
            signature=signature(),
            input_example=input_example(),
            pip_requirements=requirements,
            registered_model_name=name,
            tags={HASH_TAG: digest},  # the version's tags
        )
    if run_id:  # the run's "logged models" (log_model links only the active run's)
        client.log_outputs(run_id, [LoggedModelOutput(logged.model_id, step=0)])
    if info.registered_model_version is None:
        raise RuntimeError(f"MLflow logged the model {info.model_uri} but registered no version of {name!r}")
    return str(info.registered_model_version)


def _gather(files: list[Path], folder: Path) -> None:
    """``files`` in ``folder``: hard links where the filesystem allows (no copy of large ONNX files)."""
    folder.mkdir(parents=True)
    for path in files:
        try:
            os.link(path, folder / path.name)
        except OSError:  # another filesystem, or one without links
            shutil.copy2(path, folder / path.name)


@contextlib.contextmanager
def _tracking_uri(uri: str) -> Iterator[None]:
    """MLflow's process-wide tracking URI set to ``uri`` for a while: logging a model reads it, not a
    client's. What was set before comes back afterwards: the URI set in the process (MLflow keeps it in
    a module variable, read here as ``mlflow.set_tracking_uri`` writes it) and ``MLFLOW_TRACKING_URI``,
    which setting the URI also writes."""
    import mlflow
    from mlflow.tracking._tracking_service import utils

    set_before = getattr(utils, "_tracking_uri", None)
    env_before = os.environ.get(ENV_TRACKING_URI)
    mlflow.set_tracking_uri(uri)
    try:
        yield
    finally:
        mlflow.set_tracking_uri(set_before)  # None also unsets the variable
        if env_before is not None:
            os.environ[ENV_TRACKING_URI] = env_before
