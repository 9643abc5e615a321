"""The final model file every stage writes (``R/<stage>/model.pt``), format 1.

A model file holds the weights (on the CPU), the model's constructor arguments, the training step and
stage-specific plain extras (symbol table, audio section, ...), so a model is rebuilt from the file
alone. Everything is stored as tensors and plain Python types, so ``torch.load(weights_only=True)``
reads it and loading a model cannot run code.

This is the inference side's format: loading a model needs nothing from training. Each model's own
save / load helpers (``models/<model>/model_file.py``) build on it. Resumable training checkpoints are
another format (:mod:`tts_pipeline.training.checkpoint`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import torch

from tts_pipeline.errors import UserError
from tts_pipeline.files import atomic_open

MODEL_FILE_FORMAT = 1


@dataclass
class ModelFile:
    """A loaded model file.

    Attributes:
        state_dict: The model's weights.
        model_config: Constructor arguments of the model.
        step: Training step the weights come from.
        extra: Stage-specific plain values (e.g. the symbol table).
    """

    state_dict: dict[str, torch.Tensor]
    model_config: dict[str, Any]
    step: int
    extra: dict[str, Any]


def save_model_file(
    path: str | Path,
    model: torch.nn.Module,
    model_config: Mapping[str, Any],
    step: int,
    extra: Mapping[str, Any] | None = None,
) -> None:
    """Write a model file atomically: weights (on the CPU), constructor arguments, step and extras."""
    payload = {
        "format": MODEL_FILE_FORMAT,
        "state_dict": {name: tensor.detach().cpu() for name, tensor in model.state_dict().items()},
        "model_config": dict(model_config),
        "step": int(step),
        "extra": dict(extra or {}),
    }
    # Through a file object, torch names the archive inside "archive"; given a path, it would name it
    # after the temporary file, and two saves of the same model would differ in their bytes.
    with atomic_open(path, "wb") as handle:
        torch.save(payload, handle)


def read_weights_only(path: str | Path) -> Any:
    """Unpickle ``path`` with ``torch.load(weights_only=True)``: tensors and plain Python types only,
    so a file that would run code on load (a crafted ``__reduce__``) is refused, never executed.

    Raises UserError naming the file when it is missing or does not load that way.
    """
    path = Path(path)
    if path.is_file() and path.stat().st_size == 0:
        raise UserError(f"model file {path} is empty (0 bytes): a copy or download that did not finish?")
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise UserError(f"model file not found: {path}") from None
    except Exception as error:
        raise UserError(f"model file {path} does not load ({error})") from None


def is_model_file(payload: Any) -> bool:
    """Whether an unpickled payload is a model file of this project's format."""
    return isinstance(payload, dict) and payload.get("format") == MODEL_FILE_FORMAT


def model_file_from_payload(path: str | Path, payload: Any) -> ModelFile:
    """The :class:`ModelFile` in an unpickled payload; UserError naming ``path`` when it is not one."""
    if not is_model_file(payload):
        raise UserError(f"{path}: not a model file of format {MODEL_FILE_FORMAT}")
    return ModelFile(
        state_dict=payload["state_dict"],
        model_config=payload["model_config"],
        step=int(payload["step"]),
        extra=payload.get("extra") or {},
    )


def load_model_file(path: str | Path) -> ModelFile:
    """Read a model file written by :func:`save_model_file` (``weights_only=True``).

    Raises UserError naming the file when it is missing or not a model file.
    """
    return model_file_from_payload(path, read_weights_only(path))


def read_model_file_or_foreign(
    path: str | Path,
    convert_foreign: Callable[[Any], ModelFile],
    *,
    kind: str | None = None,
    what: str = "",
) -> ModelFile:
    """The contents of ``path`` as this project's model file, whatever format it has: a model file as it
    is, any other payload through ``convert_foreign``.

    Args:
        path: The file, read with ``torch.load(weights_only=True)`` (:func:`read_weights_only`).
        convert_foreign: Makes a :class:`ModelFile` of another format's unpickled payload (e.g. an
            NVIDIA checkpoint); raises UserError naming the file and the accepted formats when it
            knows the payload's format no more than this project does.
        kind: The ``extra["kind"]`` a model file of this project must record, when given (a model file
            names its model; some only since they had a second model beside them).
        what: The model's name in the message for a model file of another kind ("WaveGlow").

    Raises:
        UserError naming the file when it is missing, unreadable that way, a model file of another
        kind, or of no format ``convert_foreign`` accepts.
    """
    payload = read_weights_only(path)
    if not is_model_file(payload):
        return convert_foreign(payload)
    model_file = model_file_from_payload(path, payload)
    found = model_file.extra.get("kind")
    if kind is not None and found != kind:
        raise UserError(f"{path}: a model file of another model ({found or 'unnamed'}), not {what}")
    return model_file


ModuleT = TypeVar("ModuleT", bound=torch.nn.Module)


def rebuild_model(
    path: str | Path,
    build: Callable[[dict[str, Any]], ModuleT],
    *,
    what: str,
    required_extra: Sequence[str] = (),
    model_file: ModelFile | None = None,
) -> tuple[ModuleT, ModelFile]:
    """A model rebuilt from its model file alone, weights loaded, in eval mode on the CPU.

    Args:
        path: The model file.
        model_file: Its contents when already read (e.g. converted from a foreign checkpoint);
            read from ``path`` otherwise.
        build: Makes the module from the file's ``model_config`` (e.g. a ``from_config`` classmethod).
        what: The model's name for messages ("HiFi-GAN", "FastPitch").
        required_extra: Extras the file must record to be this kind of model file.

    Raises:
        UserError naming the file when it is missing, of another kind, or does not fit its own config.
    """
    if model_file is None:
        model_file = load_model_file(path)
    missing = [key for key in required_extra if key not in model_file.extra]
    if missing:
        raise UserError(f"{path}: not a {what} model file (it records no {', '.join(missing)})")
    try:
        module = build(dict(model_file.model_config))
        module.load_state_dict(model_file.state_dict)
    except (ValueError, TypeError, KeyError, RuntimeError) as error:
        raise UserError(f"{path}: the {what} model does not rebuild from its own config ({error})") from None
    module.eval()
    return module, model_file
