"""Fine-tuning's start: the weights it starts from (a checkpoint of this trainer, a checkpoint folder, a
model file, or a published generator with its discriminator file: NVIDIA's or jik876's) and how they
enter a fresh state, with the learning rate scaled once."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from tts_pipeline.config import AudioConfig
from tts_pipeline.errors import UserError
from tts_pipeline.models.hifigan.foreign import foreign_discriminators, reorder_resblocks
from tts_pipeline.models.hifigan.model_file import read_generator_file
from tts_pipeline.models.model_file import read_weights_only
from tts_pipeline.training.checkpoint import CHECKPOINT_FORMAT, Checkpoint, load_checkpoint
from tts_pipeline.training.engine import learning_rate, scale_learning_rate
from tts_pipeline.training.hifigan.state import HiFiGANState

log = logging.getLogger(__name__)


@dataclass
class InitWeights:
    """Weights to start fine-tuning from (a checkpoint of this trainer, or a model file).

    Attributes:
        path: The file they came from.
        generator: Generator state dict.
        generator_config: Its ``model_config()``, when the file records it.
        mpd, msd: Discriminator state dicts (checkpoints only).
        optim_g, optim_d: Optimiser states (checkpoints only; their lr is the source's current lr).
        learning_rate: The source's generator lr, when known without optimiser states.
        step: The source's step.
        audio: The audio section the file records (a model file of this pipeline); None for a trainer
            checkpoint or a foreign file (whose hop and mel channels are checked where it is read).
    """

    path: Path
    generator: dict[str, torch.Tensor]
    generator_config: dict[str, Any] | None = None
    mpd: dict[str, Any] | None = None
    msd: dict[str, Any] | None = None
    optim_g: dict[str, Any] | None = None
    optim_d: dict[str, Any] | None = None
    learning_rate: float | None = None
    step: int = 0
    audio: dict[str, Any] | None = None


def load_init(
    path: str | Path,
    discriminators: str | Path | None = None,
    *,
    audio: AudioConfig | None = None,
    section: Mapping[str, Any] | None = None,
) -> InitWeights:
    """Read what fine-tuning starts from: a checkpoint file, a checkpoint folder (its newest loadable
    ``step-*.pt``) or a generator file of any accepted format (a model file, NVIDIA's, jik876's).

    Args:
        path: The checkpoint, folder or generator file.
        discriminators: A foreign discriminator file (NVIDIA ``hifigan_discrim_checkpoint_*.pt``,
            jik876 ``do_*``) whose MPD and MSD start fine-tuning with the generator file.
        audio, section: The config's ``audio`` and ``hifigan`` sections, describing a foreign generator.

    Raises UserError naming the path.
    """
    init = _load_generator_init(Path(path), audio=audio, section=section)
    if discriminators is not None:
        if init.mpd is not None:
            raise UserError(f"--init-from {path} holds its own discriminators; drop --init-discriminators")
        # Their optimiser states are not reused: jik876's and NVIDIA's order the parameters of
        # other module trees, so the optimisers start afresh at the fine-tuning learning rate.
        init.mpd, init.msd, _ = foreign_discriminators(discriminators, read_weights_only(discriminators))
    return init


def _load_generator_init(path: Path, *, audio: AudioConfig | None, section: Mapping[str, Any] | None) -> InitWeights:
    if path.is_dir():
        candidates = sorted(path.glob("step-*.pt"))
        for candidate in reversed(candidates):
            try:
                return _init_from_checkpoint(load_checkpoint(candidate))
            except Exception as error:
                log.warning("checkpoint %s does not load (%s); trying the previous one", candidate, error)
        raise UserError(f"--init-from {path}: no loadable checkpoint (step-*.pt) in the folder")
    if not path.is_file():
        raise UserError(f"--init-from {path}: no such file or folder")
    payload = read_weights_only(path)
    if isinstance(payload, dict) and payload.get("format") == CHECKPOINT_FORMAT and "states" in payload:
        return _init_from_checkpoint(load_checkpoint(path))
    model = read_generator_file(path, audio=audio, section=section)
    return InitWeights(
        path=path,
        generator=model.state_dict,
        generator_config=model.model_config,
        learning_rate=model.extra.get("learning_rate"),
        step=model.step,
        # a foreign file's audio settings are the config's own, copied when it was read
        audio=None if "source_format" in model.extra else model.extra.get("audio"),
    )


def in_block_order(init: InitWeights, kernel_order: list[int], *, label: str = "--init-from") -> InitWeights:
    """``init`` with its parallel resblocks in ``kernel_order`` when they are a permutation of it
    (jik876's v1 [3, 7, 11] into NVIDIA's [11, 7, 3]: the same function), else unchanged."""
    try:
        generator, config = reorder_resblocks(init.generator, init.generator_config or {}, kernel_order)
    except (ValueError, KeyError):
        return init
    log.info("%s %s: resblocks reordered to kernels %s", label, init.path, kernel_order)
    return dataclasses.replace(init, generator=generator, generator_config=config)


def _init_from_checkpoint(checkpoint: Checkpoint) -> InitWeights:
    states = checkpoint.states
    if "generator" not in states:
        raise UserError(f"{checkpoint.path}: not a HiFi-GAN checkpoint (no generator)")
    return InitWeights(
        path=checkpoint.path,
        generator=states["generator"],
        generator_config=checkpoint.extra.get("generator_config"),
        mpd=states.get("mpd"),
        msd=states.get("msd"),
        optim_g=states.get("optim_g"),
        optim_d=states.get("optim_d"),
        step=checkpoint.step,
    )


def apply_init(state: HiFiGANState, init: InitWeights, *, default_lr: float, lr_factor: float, lr_decay: float) -> None:
    """Start fine-tuning from ``init``: its weights (discriminators when present, fresh otherwise),
    its optimiser states when present, and the learning rate multiplied once by ``lr_factor``.

    Args:
        state: A fresh state (:func:`build_state`), changed in place.
        init: What fine-tuning starts from (:func:`load_init`).
        default_lr: The starting lr when ``init`` has no optimiser states and records no lr
            (``hifigan.learning_rate``); times the factor.
        lr_factor: ``hifigan.fine_tune_lr_factor``.
        lr_decay: ``hifigan.lr_decay``: the per-epoch schedulers are recreated from the new lr.
    """
    with_discriminators = load_weights(state, init, label="--init-from")
    base_lr = init.learning_rate if init.learning_rate is not None else default_lr
    if init.optim_g is not None:
        state.optim_g.load_state_dict(init.optim_g)
    else:
        _set_learning_rate(state.optim_g, base_lr)
    if with_discriminators and init.optim_d is not None:
        state.optim_d.load_state_dict(init.optim_d)
    else:
        _set_learning_rate(state.optim_d, learning_rate(state.optim_g))
    scale_learning_rate(state.optim_g, lr_factor)
    scale_learning_rate(state.optim_d, lr_factor)
    state.make_schedulers(lr_decay)
    log.info(
        "fine-tuning from %s (step %s): lr %.3g (x%g)",
        init.path,
        init.step,
        learning_rate(state.optim_g),
        lr_factor,
    )


def load_weights(state: HiFiGANState, init: InitWeights, *, label: str) -> bool:
    """Load ``init``'s generator (its parallel resblocks put in the section's kernel order when that is
    all that differs) and, when it holds them, its discriminators into ``state``; whether it did the
    discriminators (if not, they keep their fresh init).

    Raises UserError naming ``label`` (the option or config key) and the file when its generator config
    or any weights do not fit the section.
    """
    expected = state.generator.model_config()
    if init.generator_config is not None and dict(init.generator_config) != expected:
        init = in_block_order(init, expected["resblock_kernel_sizes"], label=label)
    if init.generator_config is not None and dict(init.generator_config) != expected:
        raise UserError(
            f"{label} {init.path}: its generator config {init.generator_config} differs from the hifigan "
            f"section's {expected}"
        )
    try:
        state.generator.load_state_dict(init.generator)
    except RuntimeError as error:
        raise UserError(f"{label} {init.path}: generator weights do not fit ({error})") from None
    with_discriminators = init.mpd is not None and init.msd is not None
    if with_discriminators:
        try:
            state.discriminators.mpd.load_state_dict(init.mpd)
            state.discriminators.msd.load_state_dict(init.msd)
        except RuntimeError as error:
            raise UserError(f"{label} {init.path}: discriminator weights do not fit ({error})") from None
    else:
        log.warning("%s %s has no discriminators; they start from scratch", label, init.path)
    return with_discriminators


def _set_learning_rate(optimizer: torch.optim.Optimizer, value: float) -> None:
    for group in optimizer.param_groups:
        group["lr"] = value
