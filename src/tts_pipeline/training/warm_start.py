"""What every warm start shares ("adapt a trained voice": ``fastpitch.init_from``, ``hifigan.init_from``).

A warm start is a new training run on this corpus whose weights start from a trained model's file
instead of a random init; the optimiser, the schedule and the step counter start fresh. The pieces
each model's warm start uses: the file's identity (its SHA-256, which the resume hash and the tracking
run carry, so that another file at the same path restarts training), the audio settings a file must
share with the config (its mels must be the ones this corpus's features are), and parameters frozen
during training (``requires_grad`` off, left out of the optimiser).

The models' own checks and loading: :mod:`tts_pipeline.training.fastpitch.warm_start` and
:mod:`tts_pipeline.training.hifigan.warm_start`. :mod:`tts_pipeline.preflight` runs the checks before any
job; the stages run them again before training (a stage may be run by hand).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from torch import nn

from tts_pipeline.config import AudioConfig
from tts_pipeline.errors import UserError

# The audio keys that make a mel what it is: a model trained on other mels does not fit this corpus's.
# (max_wav_value only scales integer samples to [-1, 1]; mel_fmax_loss is HiFi-GAN's loss, not its input.)
MEL_KEYS = ("sampling_rate", "filter_length", "hop_length", "win_length", "n_mel_channels", "mel_fmin", "mel_fmax")

_CHUNK = 1 << 20


def file_digest(path: str | Path, key: str) -> str:
    """SHA-256 (hex) of the file a warm start reads; UserError naming ``key`` when it is not a file."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{key}: {path} is not a file (expected a model file to start training from)")
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def audio_mismatches(path: str | Path, recorded: Mapping[str, Any] | None, audio: AudioConfig) -> list[str]:
    """How the audio settings ``recorded`` in a model file differ from the config's ``audio`` section on
    :data:`MEL_KEYS`, one sentence each naming the file and the key; ``[]`` when they agree or the file
    records none (a foreign file: its mel channels and hop are checked where it is read)."""
    if not recorded:
        return []
    ours = audio.model_dump(mode="json")
    return [
        f"{path} was trained on mels with {key} {recorded[key]!r}, but audio.{key} is {ours[key]!r}; "
        f"expected the same {key} (a model trained on other mels does not fit this corpus's features)"
        for key in MEL_KEYS
        if key in recorded and recorded[key] != ours[key]
    ]


def refuse(key: str, found: Sequence[str]) -> None:
    """One UserError naming ``key`` that lists ``found`` (how a file does not fit the config, as the
    models' ``mismatches`` say it); nothing when ``found`` is empty."""
    if found:
        raise UserError("\n".join([f"{key}: the file does not fit this config:", *(f"  - {line}" for line in found)]))


def frozen_names(names: Iterable[str], prefixes: Sequence[str], key: str) -> list[str]:
    """The parameter ``names`` under any of ``prefixes`` (whole dotted segments: ``encoder`` matches
    ``encoder.layers.0...``, not ``encoder_x``).

    Raises:
        UserError naming ``key`` when a prefix matches no parameter (a typo would silently freeze nothing).
    """
    names = list(names)

    def under(name: str, prefix: str) -> bool:
        return name == prefix or name.startswith(prefix + ".")

    unmatched = [prefix for prefix in prefixes if not any(under(name, prefix) for name in names)]
    if unmatched:
        tops = sorted(dict.fromkeys(name.split(".")[0] for name in names))
        raise UserError(
            f"{key}: {unmatched} match no parameter of the model; expected dotted prefixes of its parameter "
            f"names, such as {', '.join(tops)}"
        )
    return [name for name in names if any(under(name, prefix) for prefix in prefixes)]


def freeze(model: nn.Module, prefixes: Sequence[str], key: str) -> list[str]:
    """Turn ``requires_grad`` off for the parameters under ``prefixes`` (:func:`frozen_names`); their
    names. An optimiser built afterwards from the parameters that require gradients leaves them out."""
    parameters = dict(model.named_parameters())
    names = frozen_names(parameters, prefixes, key)
    if names and len(names) == len(parameters):
        raise UserError(f"{key}: {list(prefixes)} freeze every parameter, so nothing would train; expected a part")
    for name in names:
        parameters[name].requires_grad_(False)
    return names


def trainable(model: nn.Module) -> list[nn.Parameter]:
    """The parameters an optimiser updates: those that require gradients."""
    return [parameter for parameter in model.parameters() if parameter.requires_grad]
