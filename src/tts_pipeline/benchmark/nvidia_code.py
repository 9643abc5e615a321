"""NVIDIA's own FastPitch and HiFi-GAN code, imported at run time from a DeepLearningExamples checkout
the user names, for side-by-side benchmarks (``bench-inference`` / ``bench-hifigan --nvidia-root``).

Their FastPitch folder (``PyTorch/SpeechSynthesis/FastPitch``) holds three top-level packages,
``fastpitch``, ``hifigan`` and ``common``, written to be imported with that folder on ``sys.path``.
Those names are generic (``common`` especially), and two of them are namespace packages (no
``__init__.py``), which Python's import system would merge with, or lose to, any regular package of
the same name elsewhere on the path. :func:`load_nvidia_code` therefore binds the three names to
that folder explicitly, imports the modules it needs, and then gives ``sys.path`` and ``sys.modules``
back as they were: the imported classes keep working (they hold their own module globals), and a
later ``import common`` in this process sees whatever it saw before.

The weights are ours: :func:`load_our_weights` copies a model's state dict into NVIDIA's
counterpart through the project's own readers of NVIDIA checkpoints (the ``convert_*`` functions of
:mod:`tts_pipeline.models.fastpitch.model`, :mod:`tts_pipeline.models.hifigan.generator` and
:mod:`tts_pipeline.models.hifigan.foreign`), so both sides compute the same function.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.machinery
import importlib.util
import inspect
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from tts_pipeline.errors import UserError

FASTPITCH_FOLDER = Path("PyTorch", "SpeechSynthesis", "FastPitch")
"""Where the FastPitch folder lies in a DeepLearningExamples checkout."""

PACKAGES = ("common", "fastpitch", "hifigan")
"""NVIDIA's top-level package names, bound to their folder only while importing."""

REQUIRED_FILES = (
    Path("fastpitch", "model.py"),
    Path("hifigan", "models.py"),
    Path("hifigan", "data_function.py"),
    Path("common", "utils.py"),
)
"""The files :func:`load_nvidia_code` imports from (or that those import), relative to the folder."""


@dataclass(frozen=True)
class NvidiaCode:
    """NVIDIA's classes and functions, as their FastPitch folder defines them.

    Attributes:
        folder: The FastPitch folder they were imported from.
        FastPitch: ``fastpitch.model.FastPitch`` (``infer(inputs, dur_tgt=...)`` returns ``(B, n_mels, T)`` first).
        Generator: ``hifigan.models.Generator(conf)``: ``(B, 80, T)`` mel -> ``(B, 1, T * hop)``.
        MultiPeriodDiscriminator, MultiScaleDiscriminator: ``(y, y_hat)`` -> real / generated scores
            and feature maps.
        feature_loss, discriminator_loss, generator_loss: Their loss functions.
        mel_spectrogram: ``hifigan.data_function.mel_spectrogram(y, n_fft, num_mels, sampling_rate,
            hop_size, win_size, fmin, fmax)``: ``(B, N)`` audio -> ``(B, n_mels, frames)`` log mel.
    """

    folder: Path
    FastPitch: type[nn.Module]
    Generator: type[nn.Module]
    MultiPeriodDiscriminator: type[nn.Module]
    MultiScaleDiscriminator: type[nn.Module]
    feature_loss: Callable[..., Any]
    discriminator_loss: Callable[..., Any]
    generator_loss: Callable[..., Any]
    mel_spectrogram: Callable[..., torch.Tensor]


def fastpitch_folder(root: str | Path, option: str = "--nvidia-root") -> Path:
    """The FastPitch folder of ``root``: a DeepLearningExamples checkout root, or that folder itself.

    Raises:
        UserError naming ``option``, the path and the first expected file that is missing.
    """
    root = Path(root).expanduser()
    if not root.is_dir():
        raise UserError(f"{option} {root}: not a folder; expected a DeepLearningExamples checkout")
    candidates = [root / FASTPITCH_FOLDER, root]
    for folder in candidates:
        if (folder / REQUIRED_FILES[0]).is_file():
            missing = [name for name in REQUIRED_FILES if not (folder / name).is_file()]
            if missing:
                raise UserError(
                    f"{option} {root}: {folder / missing[0]} is missing; expected NVIDIA's FastPitch folder with "
                    f"{', '.join(str(name) for name in REQUIRED_FILES)}"
                )
            return folder
    raise UserError(
        f"{option} {root}: found neither {root / FASTPITCH_FOLDER / REQUIRED_FILES[0]} nor "
        f"{root / REQUIRED_FILES[0]}; expected a DeepLearningExamples checkout (or its {FASTPITCH_FOLDER} folder)"
    )


def _owned(name: str) -> bool:
    return name.split(".", 1)[0] in PACKAGES


@contextlib.contextmanager
def isolated_packages(folder: Path) -> Iterator[None]:
    """Bind :data:`PACKAGES` to ``folder`` for the block; restore ``sys.path`` and those modules after.

    Each package is created from ``folder`` alone (a namespace package when it has no
    ``__init__.py``), so submodules resolve inside ``folder`` whatever else the path holds.
    """
    saved_path = list(sys.path)
    saved_modules = {name: module for name, module in sys.modules.items() if _owned(name)}
    for name in saved_modules:
        del sys.modules[name]
    try:
        sys.path.insert(0, str(folder))  # for any other top-level module of the folder they import
        for package in PACKAGES:
            spec = importlib.machinery.PathFinder.find_spec(package, [str(folder)])
            if spec is None:
                raise UserError(f"{folder / package}: missing; expected NVIDIA's {package!r} package there")
            module = importlib.util.module_from_spec(spec)
            sys.modules[package] = module
            if spec.loader is not None:  # a regular package: run its __init__.py
                spec.loader.exec_module(module)
        yield
    finally:
        sys.path[:] = saved_path
        for name in [name for name in sys.modules if _owned(name)]:
            del sys.modules[name]
        sys.modules.update(saved_modules)


def load_nvidia_code(root: str | Path, option: str = "--nvidia-root") -> NvidiaCode:
    """Import NVIDIA's FastPitch, HiFi-GAN networks, losses and mel function from checkout ``root``.

    Raises:
        UserError naming ``option`` and the path when the folder or one of :data:`REQUIRED_FILES`
        is missing, or when a module does not define what is expected of it.
    """
    folder = fastpitch_folder(root, option)
    with isolated_packages(folder):
        try:
            model = importlib.import_module("fastpitch.model")
            models = importlib.import_module("hifigan.models")
            data = importlib.import_module("hifigan.data_function")
        except ImportError as error:
            raise UserError(f"{option} {folder}: importing NVIDIA's code failed: {error}") from None
    wanted = {
        model: ("FastPitch",),
        models: (
            "Generator",
            "MultiPeriodDiscriminator",
            "MultiScaleDiscriminator",
            "feature_loss",
            "discriminator_loss",
            "generator_loss",
        ),
        data: ("mel_spectrogram",),
    }
    found: dict[str, Any] = {}
    for module, names in wanted.items():
        for name in names:
            if not hasattr(module, name):
                raise UserError(f"{option} {module.__file__}: defines no {name}; expected NVIDIA's {module.__name__}")
            found[name] = getattr(module, name)
    _keyword_librosa_mel(data)
    return NvidiaCode(folder=folder, **found)


def _keyword_librosa_mel(data_module: Any) -> None:
    """Their mel function calls ``librosa.filters.mel`` with positional arguments, which librosa 0.10
    made keyword-only; give their module a same-order positional front to today's function."""
    mel_fn = getattr(data_module, "librosa_mel_fn", None)
    if mel_fn is None:
        return
    import librosa

    def positional_mel(sr: float, n_fft: int, n_mels: int, fmin: float, fmax: float | None) -> Any:
        return librosa.filters.mel(sr=sr, n_fft=n_fft, n_mels=n_mels, fmin=fmin, fmax=fmax)

    data_module.librosa_mel_fn = positional_mel


# --------------------------------------------------------------------------------------------------
# NVIDIA's models with our hyperparameters and weights
# --------------------------------------------------------------------------------------------------


def nvidia_fastpitch_arguments(code: NvidiaCode, model_config: Mapping[str, Any]) -> dict[str, Any]:
    """Constructor arguments of NVIDIA's FastPitch for our :meth:`FastPitch.model_config`.

    Our field names are theirs (the project reads their checkpoints' ``config`` as is); the rest is
    their zero-padding setting (the speakers, ``n_speakers`` and ``speaker_emb_weight``, are ours as theirs).

    Raises:
        ValueError naming the arguments their constructor needs that our config does not give.
    """
    parameters = inspect.signature(code.FastPitch).parameters
    arguments = {key: value for key, value in model_config.items() if key in parameters}
    arguments |= {
        "n_mel_channels": int(model_config["n_mels"]),
        "n_symbols": int(model_config["n_symbols"]),
        "padding_idx": 0,
    }
    missing = [
        name
        for name, parameter in parameters.items()
        if parameter.default is inspect.Parameter.empty and name not in arguments
    ]
    if missing:
        raise ValueError(f"NVIDIA's FastPitch needs {missing}, which our model config does not give")
    return arguments


Converter = Callable[[dict[str, Any]], Mapping[str, Any]]
"""A reader of NVIDIA state dicts: their names -> ours, values passed through."""


def their_names(their_state: Mapping[str, Any], convert: Converter) -> dict[str, str]:
    """Our parameter name -> NVIDIA's, for every name ``convert`` (one of the project's readers of
    NVIDIA state dicts, which rename keys and pass values through) keeps.

    Each of their names gets a distinct placeholder value; a renamed key is traced back by the
    identity of the value it carries.
    """
    placeholders = {name: object() for name in their_state}
    source = {id(value): name for name, value in placeholders.items()}
    return {ours: source[id(value)] for ours, value in convert(placeholders).items()}


def load_our_weights(
    theirs: nn.Module,
    our_state: Mapping[str, torch.Tensor],
    convert: Converter,
    what: str,
) -> None:
    """Copy ``our_state`` into NVIDIA's module ``theirs``.

    Every tensor of ours must find a place in theirs; their tensors that ``convert`` drops (FastPitch's
    training-only aligner) keep their values, as they play no part in what is compared.

    Raises:
        ValueError naming ``what`` and the names that do not match, or a shape that differs.
    """
    their_state = theirs.state_dict()
    mapping = their_names(their_state, convert)
    unknown = sorted(set(our_state) - set(mapping))
    missing = sorted(set(mapping) - set(our_state))
    if unknown or missing:
        raise ValueError(
            f"{what}: our weights {unknown[:5]} have no place in NVIDIA's; theirs {missing[:5]} none in ours"
        )
    for ours, tensor in our_state.items():
        target = their_state[mapping[ours]]
        if target.numel() != tensor.numel():
            raise ValueError(f"{what}: {ours} is {tuple(tensor.shape)}, NVIDIA's {mapping[ours]} {tuple(target.shape)}")
        with torch.no_grad():
            target.copy_(tensor.reshape(target.shape))
