"""Whether two models' audio settings let one's mels be the other's input."""

from __future__ import annotations

import logging

from tts_pipeline.config import AudioConfig
from tts_pipeline.errors import UserError

log = logging.getLogger(__name__)

# The audio settings two models must share for one's mels to be the other's input.
AGREEMENT_KEYS = ("sampling_rate", "hop_length", "n_mel_channels")
# Settings that change what a mel means without changing its shape: a mismatch is worth a warning.
MEL_KEYS = ("filter_length", "win_length", "mel_fmin", "mel_fmax", "max_wav_value")


def check_audio_agreement(first: AudioConfig, second: AudioConfig, first_name: str, second_name: str) -> None:
    """Raise UserError naming both sources when they differ in sampling rate, hop or mel channels;
    warn when they differ in another setting of the mel definition."""
    differences = [
        f"{key} {getattr(first, key)} vs {getattr(second, key)}"
        for key in AGREEMENT_KEYS
        if getattr(first, key) != getattr(second, key)
    ]
    if differences:
        raise UserError(
            f"{first_name} and {second_name} disagree on the audio settings ({'; '.join(differences)}): "
            "the vocoder must be trained on the mels the acoustic model produces"
        )
    for key in MEL_KEYS:
        if getattr(first, key) != getattr(second, key):
            log.warning(
                "%s and %s differ in audio.%s (%s vs %s): the vocoder will hear mels unlike its training mels",
                first_name,
                second_name,
                key,
                getattr(first, key),
                getattr(second, key),
            )
