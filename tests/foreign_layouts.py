"""Checkpoints in NVIDIA's (DeepLearningExamples) and jik876's layouts, built from this project's
models through the inverse of the key mapping: the same weights, saved the way their ``train.py``
files save them (keys as in their ``Checkpointer.maybe_save`` / ``save_checkpoint`` calls)."""

from __future__ import annotations

import re
from pathlib import Path

import torch
from torch import nn

from tts_pipeline.config import FASTPITCH_MODEL_FIELDS
from tts_pipeline.models.fastpitch import FastPitch
from tts_pipeline.models.hifigan import Generator


def old_norm_names(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Parametrised weight / spectral norm names back to torch's old ones (``weight_g``, ``weight_v``,
    ``weight_orig``, ``weight_u``)."""
    renames = {
        ".parametrizations.weight.original0": ".weight_g",
        ".parametrizations.weight.original1": ".weight_v",
        ".parametrizations.weight.original": ".weight_orig",
        ".parametrizations.weight.0._u": ".weight_u",
        ".parametrizations.weight.0._v": ".weight_v",
    }
    old = {}
    for name, tensor in state.items():
        for ours, theirs in renames.items():
            if name.endswith(ours):
                name = name.removesuffix(ours) + theirs
                break
        old[name] = tensor.clone()
    return old


def generator_state(generator: Generator, *, flat: bool, prefix: str = "") -> dict[str, torch.Tensor]:
    """The generator's weights as jik876 (``flat``: ``resblocks.<n_blocks * stage + block>``) or NVIDIA
    (nested) store them."""
    n_blocks = len(generator.resblocks[0])
    state = {}
    for name, tensor in old_norm_names(generator.state_dict()).items():
        match = re.match(r"^resblocks\.(\d+)\.(\d+)\.(.*)$", name)
        if flat and match:
            name = f"resblocks.{n_blocks * int(match[1]) + int(match[2])}.{match[3]}"
        state[prefix + name] = tensor
    return state


def jik876_generator(generator: Generator) -> dict:
    """A ``g_*`` file: ``{"generator": state_dict}``."""
    return {"generator": generator_state(generator, flat=True)}


def nvidia_generator(generator: Generator) -> dict:
    """A ``hifigan_gen_checkpoint_*.pt`` file."""
    config = {key: value for key, value in generator.model_config().items() if key != "n_mels"}
    return {
        "generator": generator_state(generator, flat=False),
        "gen_ema": None,
        "config": config,
        "train_setup": {"learning_rate": 3e-4, "sampling_rate": 22050},
        "train_state": {"epoch": 7, "iters_all": 1234},
    }


def _adam_state(modules: list[nn.Module]) -> dict:
    params = [p for module in modules for p in module.parameters()]
    return torch.optim.AdamW(params, 2e-4, betas=(0.8, 0.99)).state_dict()


def jik876_discriminators(mpd: nn.Module, msd: nn.Module) -> dict:
    """A ``do_*`` file."""
    return {
        "mpd": old_norm_names(mpd.state_dict()),
        "msd": old_norm_names(msd.state_dict()),
        "optim_g": _adam_state([nn.Linear(2, 2)]),
        "optim_d": _adam_state([msd, mpd]),
        "steps": 2500,
        "epoch": 3,
    }


def nvidia_discriminators(mpd: nn.Module, msd: nn.Module) -> dict:
    """A ``hifigan_discrim_checkpoint_*.pt`` file (DDP-prefixed, as a multi-GPU run saves it unwrapped
    is also read; the prefix checks the stripping)."""
    payload = jik876_discriminators(mpd, msd)
    payload["mpd"] = {f"module.{name}": tensor for name, tensor in payload["mpd"].items()}
    scaler = {"scale": 65536.0, "growth_factor": 2.0, "backoff_factor": 0.5, "growth_interval": 2000}
    payload |= {"mpd_ema": None, "msd_ema": None, "scaler_g": scaler, "scaler_d": dict(scaler)}
    payload["train_state"] = {"epoch": 3, "iters_all": 2500}
    return payload


def nvidia_fastpitch(model: FastPitch, *, prefix: str = "module.") -> dict:
    """A FastPitch ``FastPitch_checkpoint_*.pt`` file as NVIDIA's ``train.py`` writes it."""
    ours = model.model_config()
    config = {key: value for key, value in ours.items() if key in FASTPITCH_MODEL_FIELDS and key != "max_duration"}
    config |= {"n_mel_channels": ours["n_mels"], "n_symbols": ours["n_symbols"], "padding_idx": 0, "n_speakers": 1}
    state = {prefix + name: tensor.clone() for name, tensor in model.state_dict().items()}
    state[prefix + "attention.key_proj.0.conv.weight"] = torch.zeros(4, 4, 3)  # the training-only aligner
    return {
        "epoch": 100,
        "iteration": 5000,
        "config": config,
        "train_setup": {"symbol_set": "english_basic", "text_cleaners": ["english_cleaners_v2"], "p_arpabet": 0.0},
        "state_dict": state,
        "optimizer": _adam_state([model]),
        "scaler": {"scale": 65536.0, "growth_factor": 2.0, "backoff_factor": 0.5, "growth_interval": 2000},
    }


class WritesMarker:
    """Unpickling this calls ``Path.touch`` on ``path``: a stand-in for a checkpoint that runs code."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self):
        return (Path.touch, (self.path,))
