"""HiFi-GAN checkpoints written by NVIDIA's DeepLearningExamples recipe and by jik876/hifi-gan, read
as they are: recognised from their keys, their weights renamed to this project's modules.

Layouts (from the two ``train.py`` files):

* NVIDIA generator (``hifigan_gen_checkpoint_*.pt``): ``generator`` (or ``gen``), ``config`` (the
  generator's arguments, jik876's key names), ``gen_ema``, ``train_setup``, ``train_state``.
  Resblocks nested ``resblocks.<stage>.<block>``; ``conv_pre`` always takes 80 mel channels.
* NVIDIA discriminators (``hifigan_discrim_checkpoint_*.pt``): ``mpd``, ``msd``, their EMA copies,
  ``optim_g``, ``optim_d``, ``scaler_g``, ``scaler_d``, ``train_state``, ``steps``, ``epoch``.
* jik876 generator (``g_*``): ``{"generator": state_dict}`` only, resblocks flat
  ``resblocks.<n_blocks * stage + block>``; v1 / v2 / v3 sizes, kernel order [3, 7, 11] where
  NVIDIA's v1 uses [11, 7, 3].
* jik876 discriminators (``do_*``): ``mpd``, ``msd``, ``optim_g``, ``optim_d``, ``steps``, ``epoch``.
* A bare generator state dict (older exports): the weights alone.

All of them use torch's old weight norm (``weight_g`` / ``weight_v``) and old spectral norm
(``weight_orig`` / ``weight_u`` / ``weight_v``); this project uses the parametrisations of current
torch. Foreign optimiser states are not reused: their parameter order is another module tree's.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import torch

from tts_pipeline.config import AudioConfig
from tts_pipeline.errors import UserError
from tts_pipeline.models.hifigan.generator import GENERATOR_FIELDS, convert_state_dict
from tts_pipeline.models.hifigan.presets import PRESETS
from tts_pipeline.models.model_file import MODEL_FILE_FORMAT, ModelFile

log = logging.getLogger(__name__)

NVIDIA_GENERATOR = "NVIDIA DeepLearningExamples HiFi-GAN generator checkpoint (hifigan_gen_checkpoint_*.pt)"
JIK876_GENERATOR = "jik876/hifi-gan generator checkpoint (g_*)"
BARE_GENERATOR = "bare HiFi-GAN generator state dict"
NVIDIA_DISCRIMINATORS = (
    "NVIDIA DeepLearningExamples HiFi-GAN discriminator checkpoint (hifigan_discrim_checkpoint_*.pt)"
)
JIK876_DISCRIMINATORS = "jik876/hifi-gan discriminator checkpoint (do_*)"

GENERATOR_FORMATS = (
    f"a HiFi-GAN model file of format {MODEL_FILE_FORMAT}",
    NVIDIA_GENERATOR,
    JIK876_GENERATOR,
    BARE_GENERATOR,
)
DISCRIMINATOR_FORMATS = (NVIDIA_DISCRIMINATORS, JIK876_DISCRIMINATORS)


# --------------------------------------------------------------------------------------------------
# recognising a file
# --------------------------------------------------------------------------------------------------


def _is_generator_state(value: Any) -> bool:
    """A mapping of tensors with a ``conv_pre`` weight (with or without ``module.``)."""
    if not isinstance(value, Mapping) or not value:
        return False
    names = [str(name).removeprefix("module.") for name in value]
    return any(name.startswith("conv_pre.") for name in names) and all(
        isinstance(tensor, torch.Tensor) for tensor in value.values()
    )


def generator_format(payload: Any) -> str | None:
    """Which foreign generator layout an unpickled payload is, or None."""
    if not isinstance(payload, dict):
        return None
    if _is_generator_state(payload):
        return BARE_GENERATOR
    state = payload.get("generator", payload.get("gen"))
    if not _is_generator_state(state):
        return None
    # NVIDIA's files carry the generator's arguments; jik876's hold the weights alone.
    return NVIDIA_GENERATOR if isinstance(payload.get("config"), Mapping) else JIK876_GENERATOR


def discriminator_format(payload: Any) -> str | None:
    """Which foreign discriminator layout an unpickled payload is, or None."""
    if not isinstance(payload, dict) or not all(isinstance(payload.get(key), Mapping) for key in ("mpd", "msd")):
        return None
    # NVIDIA adds its own training state (and AMP scalers) to jik876's keys.
    return NVIDIA_DISCRIMINATORS if "train_state" in payload or "scaler_d" in payload else JIK876_DISCRIMINATORS


# --------------------------------------------------------------------------------------------------
# generator
# --------------------------------------------------------------------------------------------------

_UPS = re.compile(r"^ups\.(\d+)\.")
_RESBLOCK_FIRST = re.compile(r"^resblocks\.(\d+)\.")


def _generator_state(payload: Mapping[str, Any], fmt: str) -> dict[str, torch.Tensor]:
    """The generator weights under this project's names (nested resblocks, parametrised weight norm)."""
    raw = payload if fmt == BARE_GENERATOR else payload.get("generator", payload.get("gen"))
    names = [str(name).removeprefix("module.") for name in raw]
    n_ups = len({int(m[1]) for name in names if (m := _UPS.match(name))})
    nested = any(re.match(r"^resblocks\.\d+\.\d+\.", name) for name in names)
    n_blocks = 1
    if not nested and n_ups:
        # Flat layout: n_ups * n_blocks resblocks, numbered stage-major.
        n_blocks = max(1, len({int(m[1]) for name in names if (m := _RESBLOCK_FIRST.match(name))}) // n_ups)
    return convert_state_dict(raw, n_blocks=n_blocks)


def _weight(state: Mapping[str, torch.Tensor], module: str) -> torch.Tensor:
    """A conv's weight shape carrier: ``v`` of its weight norm, or the plain weight."""
    for suffix in (".parametrizations.weight.original1", ".weight"):
        if module + suffix in state:
            return state[module + suffix]
    raise KeyError(module)


def infer_generator_shape(state: Mapping[str, torch.Tensor]) -> dict[str, Any]:
    """What the weights fix about the generator: ``n_mels``, ``upsample_initial_channel``,
    ``upsample_kernel_sizes``, ``resblock``, ``resblock_kernel_sizes`` and dilations per block.

    Args:
        state: Generator weights under this project's names (conv weights ``(C_out, C_in, k)``,
            transposed convs ``(C_in, C_out, k)``).
    """
    conv_pre = _weight(state, "conv_pre")  # (C, n_mels, 7)
    n_ups = len({int(m[1]) for name in state if (m := _UPS.match(name))})
    resblock = "1" if any(".convs1." in name for name in state) else "2"
    first = "convs1" if resblock == "1" else "convs"
    kernels, n_dilations = [], []
    block = 0
    while any(name.startswith(f"resblocks.0.{block}.") for name in state):
        kernels.append(int(_weight(state, f"resblocks.0.{block}.{first}.0").shape[-1]))
        taps = {name.split(".")[4] for name in state if name.startswith(f"resblocks.0.{block}.{first}.")}
        n_dilations.append(len(taps))
        block += 1
    return {
        "n_mels": int(conv_pre.shape[1]),
        "upsample_initial_channel": int(conv_pre.shape[0]),
        "upsample_kernel_sizes": [int(_weight(state, f"ups.{i}").shape[-1]) for i in range(n_ups)],
        "resblock": resblock,
        "resblock_kernel_sizes": kernels,
        "n_dilations": n_dilations,
    }


def complete_generator_config(shape: Mapping[str, Any], candidates: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A full generator config from the weights' shape and the first candidate config (the hifigan
    section, then jik876's v1 / v2 / v3) that agrees with it: weights fix the kernels but not the
    upsampling rates or dilations, which only shape the computation.

    Dilations are matched per kernel size, so a file with its parallel blocks in another order than
    the candidate (jik876's [3, 7, 11] against NVIDIA's [11, 7, 3]) still completes.

    Raises:
        ValueError when no candidate agrees.
    """
    for candidate in candidates:
        if candidate.get("resblock", "1") != shape["resblock"]:
            continue
        if list(candidate["upsample_kernel_sizes"]) != shape["upsample_kernel_sizes"]:
            continue
        dilations = {
            int(k): list(d)
            for k, d in zip(candidate["resblock_kernel_sizes"], candidate["resblock_dilation_sizes"], strict=True)
        }
        if sorted(dilations) != sorted(shape["resblock_kernel_sizes"]):
            continue
        ordered = [dilations[k] for k in shape["resblock_kernel_sizes"]]
        if [len(d) for d in ordered] != shape["n_dilations"]:
            continue
        return {
            "resblock": shape["resblock"],
            "upsample_rates": [int(rate) for rate in candidate["upsample_rates"]],
            "upsample_kernel_sizes": shape["upsample_kernel_sizes"],
            "upsample_initial_channel": shape["upsample_initial_channel"],
            "upsampling": "transposed",  # jik876's and NVIDIA's generators: free transposed-conv kernels
            "resblock_kernel_sizes": shape["resblock_kernel_sizes"],
            "resblock_dilation_sizes": ordered,
            "n_mels": shape["n_mels"],
        }
    raise ValueError(
        f"no known generator size has upsample kernels {shape['upsample_kernel_sizes']} and resblock kernels "
        f"{shape['resblock_kernel_sizes']} (type {shape['resblock']}); set the hifigan section to the file's sizes"
    )


def foreign_generator_file(
    path: str | Path,
    payload: Mapping[str, Any],
    fmt: str,
    *,
    audio: AudioConfig | None,
    section: Mapping[str, Any] | None = None,
) -> ModelFile:
    """This project's model-file contents for a foreign generator file.

    Args:
        path: The file (for messages).
        payload: Its unpickled contents; ``fmt`` is :func:`generator_format` of it.
        audio: The config's ``audio`` section; checked against the file's hop (product of upsampling
            rates) and mel channels.
        section: The config's ``hifigan`` section: the sizes tried first for a file that records none.

    Raises:
        UserError naming the file when its sizes cannot be told or disagree with ``audio``.
    """
    if audio is None:
        raise UserError(f"{path}: a {fmt} records no audio settings; they come from the config's audio section")
    state = _generator_state(payload, fmt)
    try:
        shape = infer_generator_shape(state)
        recorded = payload.get("config") if fmt == NVIDIA_GENERATOR else None
        candidates = ([recorded] if recorded else []) + ([section] if section else []) + list(PRESETS.values())
        config = complete_generator_config(
            shape, [{k: c[k] for k in GENERATOR_FIELDS if k in c} for c in candidates if _complete(c)]
        )
    except (KeyError, ValueError, IndexError) as error:
        raise UserError(f"{path}: the {fmt} does not describe a HiFi-GAN generator ({error})") from None
    hop = math.prod(config["upsample_rates"])
    if hop != audio.hop_length or config["n_mels"] != audio.n_mel_channels:
        raise UserError(
            f"{path}: the generator upsamples by {hop} from {config['n_mels']} mel channels, but the audio section "
            f"has hop_length {audio.hop_length} and n_mel_channels {audio.n_mel_channels}"
        )
    train_state = payload.get("train_state") if isinstance(payload.get("train_state"), Mapping) else {}
    log.info("%s: recognised a %s (%s)", path, fmt, config)
    return ModelFile(
        state_dict=state,
        model_config=config,
        step=int(train_state.get("iters_all", 0)),
        extra={
            "audio": audio.model_dump(mode="json"),
            "epoch": int(train_state.get("epoch", 0)),
            "learning_rate": None,
            "fine_tuned_from": None,
            "source_format": fmt,
        },
    )


def _complete(candidate: Mapping[str, Any] | None) -> bool:
    return bool(candidate) and all(
        key in candidate
        for key in ("upsample_rates", "upsample_kernel_sizes", "resblock_kernel_sizes", "resblock_dilation_sizes")
    )


def reorder_resblocks(
    state: Mapping[str, torch.Tensor], config: Mapping[str, Any], kernel_order: Sequence[int]
) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """The same generator with its parallel blocks in ``kernel_order``: each stage averages its blocks'
    outputs, so permuting them (with their dilations) leaves the function unchanged.

    Raises:
        ValueError when ``kernel_order`` is not a permutation of the config's kernels.
    """
    kernels = [int(k) for k in config["resblock_kernel_sizes"]]
    if sorted(kernels) != sorted(int(k) for k in kernel_order) or len(set(kernels)) != len(kernels):
        raise ValueError(f"resblock kernels {kernels} cannot be put in the order {list(kernel_order)}")
    source_of = [kernels.index(int(k)) for k in kernel_order]  # new block index -> old block index
    new_of = {old: new for new, old in enumerate(source_of)}
    renamed = {}
    for name, tensor in state.items():
        match = re.match(r"^resblocks\.(\d+)\.(\d+)\.(.*)$", name)
        if match:
            name = f"resblocks.{match[1]}.{new_of[int(match[2])]}.{match[3]}"
        renamed[name] = tensor
    reordered = dict(config)
    reordered["resblock_kernel_sizes"] = [kernels[old] for old in source_of]
    reordered["resblock_dilation_sizes"] = [list(config["resblock_dilation_sizes"][old]) for old in source_of]
    return renamed, reordered


# --------------------------------------------------------------------------------------------------
# discriminators
# --------------------------------------------------------------------------------------------------


def convert_discriminator_state_dict(state: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """An MPD or MSD state dict of jik876 / NVIDIA under this project's names.

    Module names already agree (``discriminators.<i>.convs.<j>``, ``conv_post``); the norms differ.
    Old spectral norm (MSD's first scale) stores ``weight_orig``, ``weight_u``, ``weight_v``; the
    parametrisation stores ``original``, ``0._u``, ``0._v``. Old weight norm stores ``weight_g`` /
    ``weight_v``, now ``original0`` / ``original1``. ``weight_v`` means either, so each module is
    classified by whether it has a ``weight_orig``. Names already ours pass through.
    """
    state = {str(name).removeprefix("module."): tensor for name, tensor in state.items()}
    spectral = {name.removesuffix(".weight_orig") for name in state if name.endswith(".weight_orig")}
    converted = {}
    for name, tensor in state.items():
        module, _, leaf = name.rpartition(".")
        if module in spectral:
            leaf = {"weight_orig": "original", "weight_u": "0._u", "weight_v": "0._v"}.get(leaf, leaf)
        else:
            leaf = {"weight_g": "original0", "weight_v": "original1"}.get(leaf, leaf)
        if leaf in ("original", "0._u", "0._v", "original0", "original1"):
            name = f"{module}.parametrizations.weight.{leaf}"
        converted[name] = tensor
    return converted


def foreign_discriminators(
    path: str | Path, payload: Any
) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor], int]:
    """The MPD and MSD weights (this project's names) and the step of a foreign discriminator file.

    Raises:
        UserError naming the file and the accepted formats when it is none of them.
    """
    fmt = discriminator_format(payload)
    if fmt is None:
        raise UserError(
            f"{path}: not a HiFi-GAN discriminator checkpoint; accepted: {'; '.join(DISCRIMINATOR_FORMATS)}"
        )
    log.info("%s: recognised a %s", path, fmt)
    step = payload.get("steps", 0)
    return (
        convert_discriminator_state_dict(payload["mpd"]),
        convert_discriminator_state_dict(payload["msd"]),
        int(step) if isinstance(step, int) else 0,
    )
