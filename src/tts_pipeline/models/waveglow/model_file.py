"""The WaveGlow model file (format of :mod:`tts_pipeline.models.model_file`): weights (weight norm
kept), :class:`WaveGlowConfig`, the step and ``extra`` with ``kind`` ``"waveglow"``, ``epoch`` and, when
known, the ``audio`` section its mels follow. :func:`load_waveglow` also reads NVIDIA's checkpoints as
they are (:mod:`tts_pipeline.models.waveglow.foreign`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tts_pipeline.config import AudioConfig
from tts_pipeline.errors import UserError
from tts_pipeline.models.model_file import (
    MODEL_FILE_FORMAT,
    ModelFile,
    read_model_file_or_foreign,
    rebuild_model,
    save_model_file,
)
from tts_pipeline.models.waveglow import foreign
from tts_pipeline.models.waveglow.model import HOP_LENGTH, WaveGlow

ACCEPTED_FORMATS = (f"a WaveGlow model file of format {MODEL_FILE_FORMAT}", foreign.NVIDIA_FORMAT)


def save_waveglow(
    path: str | Path,
    model: WaveGlow,
    *,
    step: int,
    epoch: int = 0,
    audio: AudioConfig | None = None,
    extra: Mapping[str, Any] | None = None,
) -> None:
    """Write ``model.pt`` atomically: weights, config, step, ``kind``, ``epoch``, ``audio`` and ``extra``.

    Raises ValueError for a model whose weight norm was folded (training files keep it, so that
    training can resume from them and NVIDIA's layout stays one).
    """
    if not model.has_weight_norm:
        raise ValueError("save_waveglow: the model's weight norm is folded; save the model before folding it")
    values = {"kind": "waveglow", "epoch": int(epoch), **dict(extra or {})}
    if audio is not None:
        values["audio"] = audio.model_dump(mode="json")
    save_model_file(path, model, model.model_config(), step, values)


def read_waveglow_file(path: str | Path) -> ModelFile:
    """The contents of a WaveGlow file of any accepted format, as this project's model file.

    Raises UserError naming the file when it is missing, unreadable with ``weights_only=True``, a model
    file of another model, or of no accepted format.
    """

    def nvidia(payload: Any) -> ModelFile:
        if foreign.is_nvidia_waveglow(payload):
            return foreign.nvidia_model_file(path, payload)
        keys = sorted(str(key) for key in payload)[:8] if isinstance(payload, dict) else type(payload).__name__
        raise UserError(
            f"{path}: not a WaveGlow checkpoint (top-level keys {keys}); accepted: {'; '.join(ACCEPTED_FORMATS)}"
        )

    return read_model_file_or_foreign(path, nvidia, kind="waveglow", what="WaveGlow")


def load_waveglow(
    path: str | Path, *, remove_weight_norm: bool = False, audio: AudioConfig | None = None
) -> tuple[WaveGlow, ModelFile]:
    """Rebuild WaveGlow from a model file or an NVIDIA checkpoint, in eval mode on the CPU.

    Args:
        path: The file.
        remove_weight_norm: Fold the weight norms for inference (what NVIDIA's inference does on load;
            same output). Weights saved folded are always loaded folded.
        audio: The config's ``audio`` section, checked against the model's mel channels and hop (256).

    Raises:
        UserError naming the file when it is missing, of no accepted format, its weights do not fit
        its config (missing / unexpected keys or shapes), or it disagrees with ``audio``.
    """
    model_file = read_waveglow_file(path)
    folded = bool(model_file.extra.get("weight_norm_folded"))

    def build(config: dict[str, Any]) -> WaveGlow:
        model = WaveGlow.from_config(config)
        if folded:
            model.remove_weight_norm()
        return model

    model, model_file = rebuild_model(path, build, what="WaveGlow", model_file=model_file)
    if audio is not None:
        n_mels = model.config.n_mel_channels
        if n_mels != audio.n_mel_channels or audio.hop_length != HOP_LENGTH:
            raise UserError(
                f"{path}: WaveGlow takes {n_mels} mel channels at hop {HOP_LENGTH}, but the audio section has "
                f"n_mel_channels {audio.n_mel_channels} and hop_length {audio.hop_length}"
            )
    if remove_weight_norm and model.has_weight_norm:
        model.remove_weight_norm()
    return model, model_file
