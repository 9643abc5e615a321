"""Rules that tie one config section to another.

Each section validates itself; these rules need two. The full config checks them when it is loaded
(:class:`~tts_pipeline.config.PipelineConfig`), and a stage run by hand with its own ``--section`` JSON
checks them again, so both paths give the same message. They raise ``ValueError`` (pydantic turns it
into a config error naming the key); :func:`require` turns it into a user error for a stage.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from tts_pipeline.errors import UserError


def check_vocoder_hop(upsample_rates: Sequence[int], hop_length: int) -> None:
    """HiFi-GAN turns one mel frame into ``hop_length`` samples: its upsampling must multiply to the hop."""
    product = math.prod(upsample_rates)
    if product != hop_length:
        raise ValueError(
            f"hifigan.upsample_rates: their product ({product}) must equal audio.hop_length ({hop_length})"
        )


def check_segment_size(segment_size: int, hop_length: int) -> None:
    """A training segment holds whole mel frames."""
    if segment_size <= 0 or segment_size % hop_length:
        raise ValueError(f"hifigan.segment_size: expected a multiple of audio.hop_length ({hop_length})")


def check_hifigan_fits_audio(hifigan: Any, audio: Any) -> None:
    """Every rule between the ``hifigan`` and ``audio`` sections."""
    check_vocoder_hop(hifigan.upsample_rates, audio.hop_length)
    check_segment_size(hifigan.segment_size, audio.hop_length)


def require(rule: Callable[..., None], *args: Any) -> None:
    """Apply a rule in a stage: a broken rule is the user's to fix, so it ends without a traceback."""
    try:
        rule(*args)
    except ValueError as error:
        raise UserError(str(error)) from None
