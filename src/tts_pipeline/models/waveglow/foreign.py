"""WaveGlow checkpoints written by NVIDIA's DeepLearningExamples recipe, read as they are.

Layouts:

* Their Tacotron2 ``train.py`` ``save_checkpoint`` (``checkpoint_WaveGlow_<epoch>.pt``): ``epoch``,
  ``config`` (``WaveGlow(**config)`` arguments, WN sizes nested in ``WN_config``), ``state_dict``
  (``module.``-prefixed after multi-GPU training), ``optimizer``, ``scaler``, ``cuda_rng_state_all``,
  ``random_rng_states_all``.
* NGC's published files (``nvidia_waveglow256pyt_fp16.pt``, ``nvidia_waveglowpyt_fp32_*``, the torch.hub
  entry point's): ``state_dict`` with the ``module.`` prefix, and ``config`` where recorded.

Module names are this project's already (:mod:`tts_pipeline.models.waveglow.model` keeps NVIDIA's);
only torch's old weight norm differs: ``<conv>.weight_g`` / ``<conv>.weight_v`` are the
parametrisation's ``<conv>.parametrizations.weight.original0`` / ``original1``. A state dict saved
after NVIDIA's ``remove_weightnorm`` (plain ``WN.<k>.start.weight``) loads into a model with its weight
norm folded. The sizes are read from the weights (every hyperparameter shapes some tensor); a recorded
``config`` is used when present and must agree. Optimiser states are not reused.

Files of NVIDIA's original WaveGlow repository (the whole model pickled under ``model``) cannot be read
with ``weights_only=True`` and are refused.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

from tts_pipeline.errors import UserError
from tts_pipeline.models.model_file import ModelFile
from tts_pipeline.models.waveglow.model import UPSAMPLE_KERNEL, WaveGlowConfig

log = logging.getLogger(__name__)

NVIDIA_FORMAT = "NVIDIA DeepLearningExamples / NGC WaveGlow checkpoint"

_WN = re.compile(r"^WN\.(\d+)\.")
_IN_LAYER = re.compile(r"^WN\.0\.in_layers\.(\d+)\.")


def _strip(name: Any) -> str:
    return str(name).removeprefix("module.")


def is_nvidia_waveglow(payload: Any) -> bool:
    """Whether an unpickled payload is an NVIDIA WaveGlow checkpoint: a ``state_dict`` of tensors with the
    mel upsampler and the first flow's 1x1 conv (with or without ``module.``)."""
    if not isinstance(payload, dict):
        return False
    state = payload.get("state_dict")
    if not isinstance(state, Mapping) or not all(isinstance(t, torch.Tensor) for t in state.values()):
        return False
    names = {_strip(name) for name in state}
    return "upsample.weight" in names and "convinv.0.conv.weight" in names


def convert_state_dict(state: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """NVIDIA's WaveGlow weights under this project's names: no ``module.`` prefix, ``weight_g`` /
    ``weight_v`` as ``parametrizations.weight.original0`` / ``original1``, floating tensors in float32
    (NGC's fp16 files). Names already ours pass through."""
    converted = {}
    for name, tensor in state.items():
        name = _strip(name)
        if name.endswith(".weight_g"):
            name = name.removesuffix(".weight_g") + ".parametrizations.weight.original0"
        elif name.endswith(".weight_v"):
            name = name.removesuffix(".weight_v") + ".parametrizations.weight.original1"
        converted[name] = tensor.float() if tensor.is_floating_point() else tensor
    return converted


def has_folded_weight_norm(state: Mapping[str, torch.Tensor]) -> bool:
    """Whether a (converted) state dict was saved after weight norm was folded (``remove_weightnorm``)."""
    return "WN.0.start.weight" in state


def _weight(state: Mapping[str, torch.Tensor], module: str) -> torch.Tensor:
    for suffix in (".parametrizations.weight.original1", ".weight"):
        if module + suffix in state:
            return state[module + suffix]
    raise KeyError(f"{module}.weight")


def config_from_weights(state: Mapping[str, torch.Tensor]) -> WaveGlowConfig:
    """The hyperparameters a (converted) state dict's shapes fix.

    ``n_early_every`` / ``n_early_size`` come from where the flows' channel count drops; a model
    whose channels never drop has no early output, recorded as ``n_early_every = n_flows``.

    Raises:
        KeyError or ValueError when a tensor is missing or the shapes are not a WaveGlow's.
    """
    upsample = state["upsample.weight"]  # (n_mels, n_mels, 1024)
    if upsample.dim() != 3 or upsample.shape[2] != UPSAMPLE_KERNEL:
        raise ValueError(f"upsample.weight has shape {tuple(upsample.shape)}, not (n_mels, n_mels, {UPSAMPLE_KERNEL})")
    n_flows = len({int(m[1]) for name in state if (m := _WN.match(name))})
    channels = [int(state[f"convinv.{k}.conv.weight"].shape[0]) for k in range(n_flows)]
    drops = [k for k in range(1, n_flows) if channels[k] != channels[k - 1]]
    n_early_every = drops[0] if drops else n_flows
    n_early_size = channels[drops[0] - 1] - channels[drops[0]] if drops else 2
    start = _weight(state, "WN.0.start")  # (wn_channels, n_group / 2, 1)
    return WaveGlowConfig(
        n_mel_channels=int(upsample.shape[0]),
        n_flows=n_flows,
        n_group=channels[0],
        n_early_every=n_early_every,
        n_early_size=n_early_size,
        wn_layers=len({int(m[1]) for name in state if (m := _IN_LAYER.match(name))}),
        wn_channels=int(start.shape[0]),
        wn_kernel_size=int(_weight(state, "WN.0.in_layers.0").shape[-1]),
    )


def nvidia_model_file(path: str | Path, payload: Mapping[str, Any]) -> ModelFile:
    """This project's model-file contents for an NVIDIA WaveGlow checkpoint (:func:`is_nvidia_waveglow`).

    ``extra`` records ``kind`` ``"waveglow"``, ``epoch``, ``source_format`` and ``weight_norm_folded``
    (load such weights into a model after :meth:`WaveGlow.remove_weight_norm`).

    Raises:
        UserError naming the file when its weights are not a WaveGlow's or disagree with its ``config``.
    """
    state = convert_state_dict(payload["state_dict"])
    try:
        from_weights = config_from_weights(state)
    except (KeyError, ValueError, IndexError) as error:
        raise UserError(f"{path}: the {NVIDIA_FORMAT} does not hold a WaveGlow's weights ({error})") from None
    config = from_weights
    recorded = payload.get("config")
    if isinstance(recorded, Mapping):
        try:
            config = WaveGlowConfig.from_nvidia(recorded)
        except ValueError as error:
            raise UserError(f"{path}: {error}") from None
        # Without early outputs the weights cannot tell n_early_every / n_early_size: compare the rest.
        comparable = ("n_mel_channels", "n_flows", "n_group", "wn_layers", "wn_channels", "wn_kernel_size")
        if from_weights.n_early_every != from_weights.n_flows:
            comparable += ("n_early_every", "n_early_size")
        differing = [key for key in comparable if getattr(config, key) != getattr(from_weights, key)]
        if differing:
            raise UserError(
                f"{path}: the checkpoint's config disagrees with its weights on {differing}: "
                f"config {config.to_dict()}, weights {from_weights.to_dict()}"
            )
    epoch = payload.get("epoch", 0)
    extra = {
        "kind": "waveglow",
        "epoch": int(epoch) if isinstance(epoch, int) else 0,
        "source_format": NVIDIA_FORMAT,
        "weight_norm_folded": has_folded_weight_norm(state),
    }
    log.info("%s: recognised an %s (%s)", path, NVIDIA_FORMAT, config.to_dict())
    return ModelFile(state_dict=state, model_config=config.to_dict(), step=0, extra=extra)
