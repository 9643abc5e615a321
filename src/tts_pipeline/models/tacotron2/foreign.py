"""Tacotron 2 checkpoints of NVIDIA's DeepLearningExamples recipe, read as they are.

NVIDIA's ``train.py`` (``save_checkpoint``) writes a dict with ``epoch``, ``config`` (the model's
constructor arguments, the names of :class:`~tts_pipeline.models.tacotron2.config.Tacotron2Config`),
``state_dict``, ``optimizer``, ``scaler`` and the random-generator states ``random_rng_states_all`` /
``cuda_rng_state_all``. The files NGC publishes (``nvidia_tacotron2pyt_fp16.pt`` / ``_fp32``) have
the same ``state_dict`` and ``config`` keys, with the weights under a DistributedDataParallel
``module.`` prefix (NVIDIA's hub loader also strips ``module.1.``). Only ``state_dict``, ``config``
and ``epoch`` are used; weights of any float precision become float32.

Parameter names need no mapping: the project's modules carry NVIDIA's names. One setting is the
project's own: ``padding_invariant`` keeps its default (True), so a padded batch gives each item what
it gives alone; NVIDIA's own outputs on a padded batch come with ``padding_invariant=False``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

from tts_pipeline.errors import UserError
from tts_pipeline.models.model_file import ModelFile
from tts_pipeline.models.tacotron2.config import Tacotron2Config
from tts_pipeline.models.tacotron2.model import Tacotron2

log = logging.getLogger(__name__)

NVIDIA_FORMAT = "NVIDIA DeepLearningExamples / NGC Tacotron 2 checkpoint"

# A weight only Tacotron 2 has (NVIDIA's name and ours).
_MARKER = "decoder.attention_layer.location_layer.location_conv.conv.weight"
_PREFIXES = ("module.1.", "module.")


def _strip(name: str) -> str:
    for prefix in _PREFIXES:
        if name.startswith(prefix):
            return name[len(prefix) :]
    return name


def is_nvidia_tacotron2(payload: Any) -> bool:
    """Whether an unpickled payload is an NVIDIA Tacotron 2 checkpoint: a ``state_dict`` holding the
    location-sensitive attention's convolution (with or without ``module.``)."""
    if not isinstance(payload, dict):
        return False
    state = payload.get("state_dict")
    return isinstance(state, Mapping) and any(_strip(str(name)) == _MARKER for name in state)


def convert_state_dict(state_dict: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """NVIDIA's state dict for :class:`Tacotron2`: the DDP prefix stripped, float weights as float32."""
    converted = {}
    for name, tensor in state_dict.items():
        converted[_strip(name)] = tensor.float() if tensor.is_floating_point() else tensor
    return converted


def config_from_nvidia(config: Mapping[str, Any] | None) -> dict[str, Any]:
    """An NVIDIA checkpoint's ``config`` as a :meth:`Tacotron2.from_config` mapping (missing keys take
    NVIDIA's defaults). ValueError for keys Tacotron 2 does not have or values it cannot take."""
    values = dict(config or {})
    return Tacotron2Config.from_mapping(values).as_dict()


def check_state_dict(state_dict: Mapping[str, torch.Tensor], model_config: Mapping[str, Any], path: str | Path) -> None:
    """UserError naming ``path`` when the weights do not fit the model its config describes: names
    missing or left over, or shapes that differ (a few of each are listed)."""
    with torch.device("meta"):
        expected = {name: tuple(t.shape) for name, t in Tacotron2.from_config(model_config).state_dict().items()}
    missing = sorted(set(expected) - set(state_dict))
    unexpected = sorted(set(state_dict) - set(expected))
    mismatched = [
        f"{name} {tuple(state_dict[name].shape)} (expected {expected[name]})"
        for name in sorted(set(expected) & set(state_dict))
        if tuple(state_dict[name].shape) != expected[name]
    ]
    problems = []
    for label, names in (("missing", missing), ("unexpected", unexpected), ("of another shape", mismatched)):
        if names:
            more = f" and {len(names) - 5} more" if len(names) > 5 else ""
            problems.append(f"{len(names)} weight(s) {label}: {', '.join(names[:5])}{more}")
    if problems:
        raise UserError(
            f"{path}: the Tacotron 2 weights do not fit the model its config describes; " + "; ".join(problems)
        )


def nvidia_model_file(path: str | Path, payload: Mapping[str, Any]) -> ModelFile:
    """This project's model-file contents for an NVIDIA Tacotron 2 checkpoint (:func:`is_nvidia_tacotron2`).

    Raises:
        UserError naming the file when its config is not a Tacotron 2's or its weights do not fit it.
    """
    config = payload.get("config")
    if config is not None and not isinstance(config, Mapping):
        raise UserError(f"{path}: the checkpoint's config is a {type(config).__name__}, expected a mapping")
    try:
        model_config = config_from_nvidia(config)
    except (TypeError, ValueError) as error:
        raise UserError(f"{path}: {error}") from None
    if config is None:
        log.warning("%s: the checkpoint records no config; NVIDIA's default hyperparameters are assumed", path)
    state_dict = convert_state_dict(payload["state_dict"])
    check_state_dict(state_dict, model_config, path)
    epoch = payload.get("epoch", 0)
    extra = {"kind": "tacotron2", "epoch": int(epoch) if isinstance(epoch, int) else 0, "source_format": NVIDIA_FORMAT}
    log.info("%s: recognised an %s (epoch %s)", path, NVIDIA_FORMAT, extra["epoch"])
    return ModelFile(state_dict=state_dict, model_config=model_config, step=0, extra=extra)
