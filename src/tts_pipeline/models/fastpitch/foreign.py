"""FastPitch checkpoints written by NVIDIA's DeepLearningExamples recipe (its ``train.py``, and the
files NGC publishes), read as they are and turned into this project's model-file contents.

NVIDIA's ``Checkpointer.maybe_save`` writes a dict with ``state_dict`` (``module.``-prefixed when the
model was wrapped in DDP), ``config`` (the model's constructor arguments), ``epoch``, ``iteration``,
``train_setup`` (the command-line arguments), ``optimizer``, ``scaler`` and, with EMA, ``ema_state_dict``.
Inference uses ``state_dict``, as NVIDIA's own ``inference.py`` does. The file records no symbol
table, pitch statistics as such, or audio section: the symbols come from the config's ``text`` section,
the pitch statistics from the model's ``pitch_mean`` / ``pitch_std`` buffers, and the audio section
from the config (checked against the model's mel channels). Whether the input is characters or ARPAbet
comes from ``train_setup["p_arpabet"]``: NVIDIA's ``inference.py`` takes ``p_arpabet`` from the
checkpoint's ``train_setup`` over its own default of 0, so a model trained with ``--p-arpabet 1.0``
(their ``train.sh`` default) reads CMUdict words as ARPAbet at inference.

A multi-speaker checkpoint (``--n-speakers`` above 1) carries ``n_speakers`` and ``speaker_emb_weight`` in
its ``config`` and the speaker table as ``speaker_emb.weight``: both are read as they are.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

from tts_pipeline.config import AudioConfig, TextConfig
from tts_pipeline.errors import UserError
from tts_pipeline.models.fastpitch.data import TextSettings
from tts_pipeline.models.fastpitch.model import config_from_nvidia, convert_state_dict
from tts_pipeline.models.model_file import MODEL_FILE_FORMAT, ModelFile

log = logging.getLogger(__name__)

NVIDIA_FORMAT = "NVIDIA DeepLearningExamples / NGC FastPitch checkpoint"
ACCEPTED_FORMATS = (f"a FastPitch model file of format {MODEL_FILE_FORMAT}", NVIDIA_FORMAT)

# A weight every FastPitch has, under NVIDIA's names and ours.
_MARKER = "encoder.word_emb.weight"


def is_nvidia_fastpitch(payload: Any) -> bool:
    """Whether an unpickled payload is an NVIDIA FastPitch checkpoint: a ``state_dict`` holding the
    encoder's symbol embedding (with or without ``module.``) next to a ``config`` mapping."""
    if not isinstance(payload, dict):
        return False
    state, config = payload.get("state_dict"), payload.get("config")
    if not isinstance(state, Mapping) or not isinstance(config, Mapping):
        return False
    return any(str(name).removeprefix("module.") == _MARKER for name in state)


def text_settings_from_config(text: TextConfig, symbols_kind: str = "characters") -> TextSettings:
    """The text settings of a model trained on the config's ``text`` section: ``symbols_kind`` input
    over its symbol set, cleaned with its cleaners (what NVIDIA's recipe trains on LJSpeech)."""
    from tts_pipeline.text import get_symbols

    return TextSettings(
        symbols=tuple(get_symbols(text.symbol_set)),
        source="aligner",
        symbols_kind=symbols_kind,
        symbol_set=text.symbol_set,
        cleaners=text.cleaners,
    )


def nvidia_model_file(
    path: str | Path, payload: Mapping[str, Any], *, text: TextConfig | None, audio: AudioConfig | None
) -> ModelFile:
    """This project's model-file contents for an NVIDIA FastPitch checkpoint.

    Args:
        path: The file (for messages).
        payload: Its unpickled contents (:func:`is_nvidia_fastpitch`).
        text: The config's ``text`` section: the symbol table the file does not record.
        audio: The config's ``audio`` section: the mel settings the file does not record.

    Raises:
        UserError naming the file when the config sections are missing or disagree with the model.
    """
    if text is None or audio is None:
        raise UserError(
            f"{path}: an {NVIDIA_FORMAT} records no text or audio settings; they come from the config's "
            "text and audio sections, which this command was not given"
        )
    try:
        model_config = config_from_nvidia(payload["config"])
    except ValueError as error:
        raise UserError(f"{path}: {error}") from None
    state_dict = convert_state_dict(payload["state_dict"])
    if model_config["n_mels"] != audio.n_mel_channels:
        raise UserError(
            f"{path}: the model makes {model_config['n_mels']} mel channels but audio.n_mel_channels is "
            f"{audio.n_mel_channels}"
        )
    settings = text_settings_from_config(text, _symbols_kind(payload, path))
    extra = {
        "kind": "fastpitch",
        "epoch": int(payload.get("epoch", 0)),
        "text": settings.as_dict(),
        "pitch_mean": _scalar(state_dict, "pitch_mean", path),
        "pitch_std": _scalar(state_dict, "pitch_std", path),
        "audio": audio.model_dump(mode="json"),
        "source_format": NVIDIA_FORMAT,
    }
    n_speakers = int(model_config.get("n_speakers", 1))  # older configs have no such key: one speaker
    log.info(
        "%s: recognised an %s (epoch %s, %s speaker%s)",
        path,
        NVIDIA_FORMAT,
        extra["epoch"],
        n_speakers,
        "" if n_speakers == 1 else "s",
    )
    return ModelFile(
        state_dict=state_dict, model_config=model_config, step=int(payload.get("iteration", 0)), extra=extra
    )


def _symbols_kind(payload: Mapping[str, Any], path: str | Path) -> str:
    """``"arpabet"`` when the model was trained with ``p_arpabet`` of at least 0.5, else ``"characters"``.

    NVIDIA's ``inference.py`` applies the checkpoint's ``p_arpabet``: at 1.0 every CMUdict word becomes
    ARPAbet, at 0 none does; in between it draws per word at random, which no deterministic reading can
    reproduce, so the likelier reading is taken (with a warning)."""
    train_setup = payload.get("train_setup")
    value = train_setup.get("p_arpabet") if isinstance(train_setup, Mapping) else None
    try:
        p_arpabet = float(value or 0.0)
    except (TypeError, ValueError):
        raise UserError(f"{path}: train_setup p_arpabet {value!r} is not a number") from None
    kind = "arpabet" if p_arpabet >= 0.5 else "characters"
    if 0.0 < p_arpabet < 1.0:
        log.warning(
            "%s: trained with p_arpabet %s; NVIDIA's inference would pick ARPAbet per word at random, "
            "this reads %s throughout",
            path,
            p_arpabet,
            kind,
        )
    return kind


def _scalar(state_dict: Mapping[str, torch.Tensor], name: str, path: str | Path) -> float:
    """A one-element buffer as a float (NVIDIA stores the pitch statistics as model buffers)."""
    try:
        return float(state_dict[name].reshape(-1)[0])
    except (KeyError, IndexError, AttributeError):
        raise UserError(f"{path}: the FastPitch state dict has no {name} buffer") from None
