"""HiFi-GAN's warm start (``hifigan.init_from``): base training starts from a trained generator (and the
discriminators, when the file holds them) instead of a random init, with fresh optimisers, schedulers
and step counter at the section's learning rate. Fine-tuning (:mod:`.finetune`) differs: it continues
a run, optimiser states and learning rate included.

The file is read as fine-tuning reads its start (:func:`~tts_pipeline.training.hifigan.finetune.load_init`:
a model file or trainer checkpoint of this pipeline, NVIDIA's or jik876's generator); what must agree
with the config: the audio settings the file records (:data:`~tts_pipeline.training.warm_start.MEL_KEYS`)
and the generator's shape (its parallel resblocks may come in another kernel order, the same function).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from tts_pipeline.config import AudioConfig, HiFiGANConfig
from tts_pipeline.models.hifigan.generator import GENERATOR_FIELDS, SOURCE_FIELDS
from tts_pipeline.training.hifigan.finetune import InitWeights, in_block_order, load_init, load_weights
from tts_pipeline.training.hifigan.state import HiFiGANState
from tts_pipeline.training.warm_start import audio_mismatches

log = logging.getLogger(__name__)

KEY = "hifigan.init_from"


def read_init(path: str | Path, *, audio: AudioConfig, section: HiFiGANConfig) -> InitWeights:
    """Read the file ``hifigan.init_from`` names; ``audio`` and ``section`` describe a foreign file (its
    hop and mel channels are checked against ``audio`` as it is read). Raises UserError naming the file."""
    return load_init(path, audio=audio, section=section.model_dump(mode="json"))


def expected_generator_config(section: HiFiGANConfig, n_mels: int) -> dict[str, Any]:
    """The generator config the section builds (:meth:`Generator.model_config`), without building it."""
    values = section.model_dump(mode="json")
    expected = {**{key: values[key] for key in GENERATOR_FIELDS}, "n_mels": int(n_mels)}
    if values["source"] == "none":  # as the generator records itself: without the source's settings
        for key in SOURCE_FIELDS:
            del expected[key]
    return expected


def mismatches(init: InitWeights, *, section: HiFiGANConfig, audio: AudioConfig) -> list[str]:
    """How the file differs from what base training with ``section`` and ``audio`` builds, one sentence
    each naming the file and the config key; ``[]`` when it fits."""
    found = audio_mismatches(init.path, init.audio, audio)
    expected = expected_generator_config(section, audio.n_mel_channels)
    if init.generator_config is None:
        return found  # a trainer checkpoint of an older version: its weights are checked as they load
    # A file written before a generator field existed was built with that field's default.
    defaults = {key: HiFiGANConfig.model_fields[key].default for key in GENERATOR_FIELDS}
    theirs = {**defaults, **init.generator_config}
    if theirs != expected:
        reordered = in_block_order(init, expected["resblock_kernel_sizes"], label=KEY)
        theirs = {**defaults, **(reordered.generator_config or {})}
    other = [key for key in expected if theirs.get(key) != expected[key]]
    if other:
        ours = {key: f"hifigan.{key} is {expected[key]!r}" for key in other}
        if "n_mels" in ours:
            ours["n_mels"] = f"audio.n_mel_channels is {audio.n_mel_channels}"
        listed = ", ".join(f"{key} {theirs.get(key)!r} ({ours[key]})" for key in other)
        found.append(f"{init.path} has another generator: {listed}; expected the config to give the file's generator")
    return found


def apply_warm_start(state: HiFiGANState, init: InitWeights) -> None:
    """Load ``init``'s weights into a fresh ``state`` (:func:`load_weights`); its optimisers, schedulers
    and counters stay as built (the section's learning rate, step 0). Raises UserError naming
    ``hifigan.init_from`` and the file when the weights do not fit."""
    with_discriminators = load_weights(state, init, label=KEY)
    log.info(
        "warm start from %s (step %s of its training)%s; optimisers fresh at the section's learning rate",
        init.path,
        init.step,
        ", discriminators included" if with_discriminators else "",
    )
