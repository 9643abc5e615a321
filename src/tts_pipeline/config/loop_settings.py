"""The training-loop settings every model section shares, declared once.

Each trainer runs on the shared epoch loop (``tts_pipeline.training.loop``), which reads the same keys
from its model's section: how long training runs, the batches, precision, GPUs, seed, cadences and how
many checkpoints stay. A model section inherits them from one of these bases instead of retyping them:

- :class:`LoopSettings`: what all five trainers read (the aligner needs no more);
- :class:`EpochLoopSettings`: plus the fixed global batch and the per-epoch validation and checkpoint
  cadences of the multi-GPU trainers (HiFi-GAN, FastPitch, Tacotron 2, WaveGlow);
- :class:`BucketedLoopSettings`: plus length bucketing (FastPitch, Tacotron 2).

The models differ in their defaults (and in what their ``amp`` modes keep in float32), so a section
inherits from :meth:`LoopSettings.with_defaults`: the base with that model's values.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, Self

from pydantic import Field, create_model
from pydantic.fields import FieldInfo, PydanticUndefined

from tts_pipeline.config.base import StrictModel


class LoopSettings(StrictModel):
    """The loop settings of every trainer. ``epochs`` and ``batch_size`` have no default here: each
    model states its own with :meth:`with_defaults`."""

    epochs: int = Field(ge=1, description="Training stops after this many epochs, or at max_steps if sooner.")
    max_steps: int | None = Field(None, ge=1, description="Stop after this many optimiser steps, if sooner.")
    batch_size: int = Field(ge=1, description="Per process and micro-step.")
    amp: Literal["off", "fp16", "bf16"] = Field(
        "off",
        description="Mixed precision, the same on CUDA and a CPU: 'bf16' autocasts to bfloat16 with no gradient "
        "scaling (the losses stay float32); 'fp16' with gradient scaling on CUDA (float32 on a CPU).",
    )
    gpus: int = Field(8, ge=0, description="GPUs the rule asks for; 0 = CPU. Snakemake may grant fewer.")
    num_workers: int = Field(4, ge=0, description="Data-loader workers per process.")
    seed: int = 1234
    keep_checkpoints: int = Field(2, ge=1, description="Resumable checkpoints kept in R/work/<rule>/.")

    @classmethod
    def with_defaults(cls, descriptions: Mapping[str, str] | None = None, **defaults: Any) -> type[Self]:
        """This class with a model's own ``defaults`` (and its own words for the keys in ``descriptions``);
        types and bounds stay the base's.

        Raises:
            TypeError: A name that is not a field, or a field left without a default (the config
                would then require it).
        """
        descriptions = dict(descriptions or {})
        unknown = sorted({*defaults, *descriptions} - set(cls.model_fields))
        if unknown:
            raise TypeError(f"{cls.__name__}.with_defaults: no such fields {unknown}")
        fields: dict[str, Any] = {}
        for name, info in cls.model_fields.items():
            overrides: dict[str, Any] = {}
            if name in defaults:
                overrides["default"] = defaults[name]
            if name in descriptions:
                overrides["description"] = descriptions[name]
            if overrides:
                fields[name] = (info.annotation, FieldInfo.merge_field_infos(info, **overrides))
            elif info.default is PydanticUndefined and info.default_factory is None:
                raise TypeError(f"{cls.__name__}.with_defaults: {name} needs a default")
        return create_model(cls.__name__, __base__=cls, __module__=cls.__module__, **fields)


class EpochLoopSettings(LoopSettings):
    """The loop settings of the trainers whose optimiser step takes a fixed global batch over every
    process (gradient accumulation makes up what the GPUs granted do not) and that validate and
    checkpoint every n epochs."""

    global_batch_size: int = Field(ge=1, description="GPUs x batch_size x accumulation; fixed whatever the GPUs.")
    validation_every_n_epochs: int = Field(10, ge=1, description="Validate every this many epochs, and at the last.")
    checkpoint_every_n_epochs: int = Field(
        ge=1, description="A resumable checkpoint every this many epochs, and when training stops."
    )

    def check_global_batch(self) -> None:
        """Raise ValueError unless ``global_batch_size`` is a whole number of ``batch_size`` micro-batches."""
        if self.global_batch_size % self.batch_size:
            raise ValueError(
                f"global_batch_size: expected a multiple of batch_size ({self.batch_size}), "
                f"got {self.global_batch_size}"
            )


class BucketedLoopSettings(EpochLoopSettings):
    """Epoch-loop settings with optional length bucketing of the global batches (mel-length trainers)."""

    length_bucketing: bool = Field(
        False,
        description="Put utterances of similar mel length in the same global batch, so that batches pad "
        "less and train more real frames per second. false = NVIDIA's random batches.",
    )
    bucket_pool: int = Field(
        50,
        ge=1,
        description="With length_bucketing: how many global batches' worth of shuffled utterances are sorted "
        "by length together before being cut into batches. Bigger = less padding, less random batches.",
    )
