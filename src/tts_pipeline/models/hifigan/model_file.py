"""The HiFi-GAN model file: the generator (weight norm kept), its config, the step, the audio section
its mels follow and the learning rate fine-tuning continues from (format of
:mod:`tts_pipeline.models.model_file`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tts_pipeline.config import AudioConfig
from tts_pipeline.errors import UserError
from tts_pipeline.models.hifigan import foreign
from tts_pipeline.models.hifigan.generator import Generator
from tts_pipeline.models.model_file import ModelFile, read_model_file_or_foreign, rebuild_model, save_model_file


@dataclass
class GeneratorInfo:
    """What a HiFi-GAN model file says besides the weights.

    Attributes:
        step: Training step of the weights.
        epoch: Epoch reached.
        audio: The audio section the generator was trained with (its mels must match).
        model_config: The generator's constructor arguments.
        learning_rate: The generator lr when training stopped (fine-tuning continues from it).
        fine_tuned_from: The weights fine-tuning started from, if any.
    """

    step: int
    epoch: int
    audio: AudioConfig
    model_config: dict[str, Any]
    learning_rate: float | None
    fine_tuned_from: str | None


def save_generator(
    path: str | Path,
    generator: Generator,
    audio_cfg: AudioConfig,
    *,
    step: int,
    epoch: int,
    learning_rate: float | None,
    fine_tuned_from: str | None,
    warm_started_from: str | None = None,
) -> None:
    """Write ``model.pt``: generator weights (weight norm kept), its config, step, audio section, lr, and
    the file training began from: ``fine_tuned_from`` (fine-tuning) or ``warm_started_from`` (a warm
    start of base training), when there was one."""
    extra = {
        "audio": audio_cfg.model_dump(mode="json"),
        "epoch": epoch,
        "learning_rate": learning_rate,
        "fine_tuned_from": fine_tuned_from,
    }
    if warm_started_from is not None:
        extra["warm_started_from"] = warm_started_from
    save_model_file(path, generator, generator.model_config(), step, extra)


def read_generator_file(
    path: str | Path, *, audio: AudioConfig | None = None, section: Mapping[str, Any] | None = None
) -> ModelFile:
    """The contents of a generator file of any accepted format, as this project's model file.

    Args:
        path: A model file of this project, an NVIDIA generator checkpoint, a jik876 ``g_*`` file or
            a bare generator state dict (:data:`foreign.GENERATOR_FORMATS`).
        audio: The config's ``audio`` section: the audio settings of a file that records none
            (checked against its hop and mel channels).
        section: The config's ``hifigan`` section: sizes tried first for a file that records none.

    Raises UserError naming the file when it is missing or of no accepted format.
    """

    def foreign_generator(payload: Any) -> ModelFile:
        fmt = foreign.generator_format(payload)
        if fmt is not None:
            return foreign.foreign_generator_file(path, payload, fmt, audio=audio, section=section)
        hint = " (it holds discriminators: pass the generator file)" if foreign.discriminator_format(payload) else ""
        raise UserError(
            f"{path}: not a HiFi-GAN generator checkpoint{hint}; accepted: {'; '.join(foreign.GENERATOR_FORMATS)}"
        )

    return read_model_file_or_foreign(path, foreign_generator)


def load_generator(
    path: str | Path,
    *,
    remove_weight_norm: bool = False,
    audio: AudioConfig | None = None,
    section: Mapping[str, Any] | None = None,
) -> tuple[Generator, GeneratorInfo]:
    """Rebuild the generator from a model file or a foreign checkpoint as it is, in eval mode on the CPU.

    ``remove_weight_norm=True`` folds the weight norms for inference (same output, faster). ``audio``
    and ``section`` (the config's sections) describe a foreign file (:func:`read_generator_file`).
    Raises UserError naming the file when it is missing, foreign or does not fit its own config.
    """
    model_file = read_generator_file(path, audio=audio, section=section)
    generator, model = rebuild_model(
        path, Generator.from_config, what="HiFi-GAN", required_extra=("audio",), model_file=model_file
    )
    if remove_weight_norm:
        generator.remove_weight_norm()
    info = GeneratorInfo(
        step=model.step,
        epoch=int(model.extra.get("epoch", 0)),
        audio=AudioConfig.model_validate(model.extra["audio"]),
        model_config=model.model_config,
        learning_rate=model.extra.get("learning_rate"),
        fine_tuned_from=model.extra.get("fine_tuned_from"),
    )
    return generator, info
