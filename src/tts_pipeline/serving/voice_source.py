"""Where a served voice comes from: an export folder, or a voice registered in the MLflow Model Registry.

::

    resolve_voice("results/demo/export")                 # a folder with voice.json: as it is
    resolve_voice("models:/demo@champion")               # the version the alias points at
    resolve_voice("models:/demo/3", tracking_uri="http://mlflow:5000")

A registered voice (:mod:`tts_pipeline.serving.registry`) is downloaded once per registry, model and
version into a cache folder (:func:`cache_dir`) and found there afterwards; the path returned is the
voice folder inside the model's artifacts, which :class:`tts_pipeline.serving.speaker.Speaker` opens
like an export folder.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

from tts_pipeline.errors import UserError
from tts_pipeline.export.voice_card import VOICE_CARD
from tts_pipeline.files import user_cache_dir

MODELS_SCHEME = "models:/"
# the one artifact of the registered voice model (tts_pipeline.serving.mlflow_model.VOICE_ARTIFACT);
# spelled here too so that resolving a folder never imports mlflow
VOICE_ARTIFACT = "voice"
EXPECTED = "an export folder (R/export) or a registered voice, models:/<name>@<alias> or models:/<name>/<version>"


def resolve_voice(spec: str, *, tracking_uri: str | None = None) -> Path:
    """The voice folder ``spec`` names (see the module's docstring).

    Args:
        spec: A folder with ``voice.json``, or ``models:/<name>@<alias>`` / ``models:/<name>/<version>``.
        tracking_uri: The MLflow store of the registry; default: ``MLFLOW_TRACKING_URI`` (one of them
            must be given for a ``models:/`` URI).

    Raises:
        UserError: A folder without ``voice.json``, a URI of another form, a model or alias the
            registry does not hold, or a registry that cannot be reached; each names ``spec``.
    """
    if not spec.startswith(MODELS_SCHEME):
        folder = Path(spec)
        if not (folder / VOICE_CARD).is_file():
            raise UserError(f"{folder}: no {VOICE_CARD} here; expected {EXPECTED}")
        return folder
    return _registered_voice(spec, tracking_uri)


def parse_model_uri(spec: str) -> tuple[str, str | None, str | None]:
    """``models:/<name>@<alias>`` -> ``(name, alias, None)``; ``models:/<name>/<version>`` ->
    ``(name, None, version)``; UserError for anything else."""
    rest = spec.removeprefix(MODELS_SCHEME)
    if "@" in rest:
        name, _, alias = rest.rpartition("@")
        if name and alias and "/" not in name:
            return name, alias, None
    else:
        name, _, version = rest.rpartition("/")
        if name and "/" not in name and version.isdigit():
            return name, None, version
    raise UserError(f"{spec}: not a registered voice's URI; expected {EXPECTED}")


def cache_dir() -> Path:
    """The folder downloaded voices are kept in (:func:`tts_pipeline.files.user_cache_dir`)."""
    return user_cache_dir()


def _registered_voice(spec: str, tracking_uri: str | None) -> Path:
    """Download (or find in the cache) the model version ``spec`` names; its voice folder."""
    import mlflow
    from mlflow.exceptions import MlflowException
    from mlflow.tracking import is_tracking_uri_set

    from tts_pipeline.tracking.outages import describe, is_unreachable

    name, alias, version = parse_model_uri(spec)
    if tracking_uri is None and not is_tracking_uri_set():
        # MLflow's fallback, a new mlflow.db in the current folder, never holds the voice
        raise UserError(
            f"{spec}: which MLflow store holds it? Set MLFLOW_TRACKING_URI (the pipeline's default store: "
            "sqlite:///results/mlflow.db) or pass its tracking URI"
        )
    uri = tracking_uri or mlflow.get_tracking_uri()
    client = mlflow.MlflowClient(tracking_uri=uri, registry_uri=uri)
    try:
        found = client.get_model_version_by_alias(name, alias) if alias else client.get_model_version(name, version)
        target = _cache_folder(uri, found)
        if not (target / "MLmodel").is_file():
            # where the version's files are (MLflow resolves a models:/ URI against its global registry,
            # not the one asked; the files' own address goes to the store named)
            _download(client.get_model_version_download_uri(name, found.version), target, uri)
    except Exception as error:
        if is_unreachable(error):
            raise UserError(f"{spec}: the MLflow registry at {uri} cannot be reached ({describe(error)})") from None
        if isinstance(error, MlflowException) and error.error_code in (
            "RESOURCE_DOES_NOT_EXIST",
            "INVALID_PARAMETER_VALUE",
        ):
            raise UserError(f"{spec}: not in the MLflow registry at {uri} ({error.message})") from None
        raise
    return _voice_folder(target, spec)


def _cache_folder(uri: str, version: Any) -> Path:
    """One folder per registry, model and version. A version's files never change, but a version
    number can come back after its deletion: its source and creation time are part of the key."""
    key = "\n".join([uri, version.name, str(version.version), str(version.source), str(version.creation_timestamp)])
    label = re.sub(r"[^\w.-]", "_", version.name)[:60]
    return cache_dir() / "voices" / f"{label}-v{version.version}-{hashlib.sha256(key.encode()).hexdigest()[:12]}"


def _download(artifact_uri: str, target: Path, uri: str) -> None:
    """The model's files at ``artifact_uri`` into ``target``, whole or not at all (a download cut short leaves no folder
    that looks complete: it lands beside ``target`` and is renamed at the end)."""
    import mlflow.artifacts

    target.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        local = mlflow.artifacts.download_artifacts(artifact_uri=artifact_uri, dst_path=str(partial), tracking_uri=uri)
        try:
            Path(local).rename(target)
        except OSError:  # another process downloaded it meanwhile
            if not (target / "MLmodel").is_file():
                raise
    finally:
        shutil.rmtree(partial, ignore_errors=True)


def _voice_folder(model_dir: Path, spec: str) -> Path:
    """The voice folder inside a downloaded pyfunc model, where its MLmodel file says it is."""
    import yaml

    meta = yaml.safe_load((model_dir / "MLmodel").read_text(encoding="utf-8")) or {}
    artifacts = meta.get("flavors", {}).get("python_function", {}).get("artifacts") or {}
    entry = artifacts.get(VOICE_ARTIFACT)
    if not isinstance(entry, dict) or "path" not in entry:
        raise UserError(
            f"{spec}: its model has no {VOICE_ARTIFACT!r} artifact; is it a voice registered by export_voice?"
        )
    folder = model_dir / entry["path"]
    if not (folder / VOICE_CARD).is_file():
        raise UserError(f"{spec}: {folder}: no {VOICE_CARD} in the model's {VOICE_ARTIFACT!r} artifact")
    return folder
