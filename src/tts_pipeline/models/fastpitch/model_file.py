"""The FastPitch model file: weights, constructor arguments, step and epoch, the text settings with the
symbol table, the pitch statistics and the audio section (format of :mod:`tts_pipeline.models.model_file`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tts_pipeline.config import AudioConfig, TextConfig
from tts_pipeline.errors import UserError
from tts_pipeline.models.fastpitch import foreign
from tts_pipeline.models.fastpitch.data import PitchStats, TextSettings
from tts_pipeline.models.fastpitch.model import FastPitch
from tts_pipeline.models.model_file import ModelFile, read_model_file_or_foreign, rebuild_model, save_model_file


@dataclass
class FastPitchInfo:
    """What a FastPitch model file says besides the weights.

    Attributes:
        step: Training step of the weights.
        epoch: Epoch reached.
        model_config: The constructor arguments (:meth:`FastPitch.model_config`).
        text: The symbol table and how text becomes ids (cleaners, symbol kind and set).
        pitch: The pitch statistics the model's pitch is normalised with.
        audio: The audio section its mels follow (a vocoder must use the same).
    """

    step: int
    epoch: int
    model_config: dict[str, Any]
    text: TextSettings
    pitch: PitchStats
    audio: AudioConfig

    @property
    def symbols(self) -> tuple[str, ...]:
        return self.text.symbols

    @property
    def n_speakers(self) -> int:
        """Speakers the model was trained on (ids ``0 .. n_speakers - 1``); 1 for a single-speaker model,
        also from a file written before the key existed."""
        return int(self.model_config.get("n_speakers", 1))


def save_fastpitch(
    path: str | Path,
    model: FastPitch,
    *,
    step: int,
    epoch: int,
    learning_rate: float,
    text: TextSettings,
    pitch: PitchStats,
    audio: AudioConfig,
    warm_started_from: str | None = None,
) -> None:
    """Write ``model.pt``: weights, constructor arguments, step and epoch, the text settings with the
    symbol table, the pitch statistics (the training corpus's, also for a warm start) and the audio
    section; ``warm_started_from``, the file a warm start began from, when there was one."""
    extra = {
        "kind": "fastpitch",
        "epoch": epoch,
        "learning_rate": learning_rate,
        "text": text.as_dict(),
        "pitch_mean": pitch.mean,
        "pitch_std": pitch.std,
        "audio": audio.model_dump(mode="json"),
    }
    if warm_started_from is not None:
        extra["warm_started_from"] = warm_started_from
    save_model_file(path, model, model.model_config(), step, extra)


def load_fastpitch(
    path: str | Path, *, text: TextConfig | None = None, audio: AudioConfig | None = None
) -> tuple[FastPitch, FastPitchInfo]:
    """Rebuild FastPitch from a model file, or from an NVIDIA checkpoint as it is, in eval mode on the CPU.

    Args:
        path: A model file of this project, or an NVIDIA DeepLearningExamples / NGC FastPitch checkpoint.
        text: The config's ``text`` section; gives the symbol table of a file that records none.
        audio: The config's ``audio`` section; gives the audio settings of a file that records none.

    Raises UserError naming the file when it is missing, of no accepted format, or does not fit its config.
    """

    def nvidia(payload: Any) -> ModelFile:
        if not foreign.is_nvidia_fastpitch(payload):
            raise UserError(f"{path}: not a FastPitch checkpoint; accepted: {'; '.join(foreign.ACCEPTED_FORMATS)}")
        return foreign.nvidia_model_file(path, payload, text=text, audio=audio)

    model, model_file = rebuild_model(
        path,
        FastPitch.from_config,
        what="FastPitch",
        required_extra=("text", "pitch_mean", "pitch_std", "audio"),
        model_file=read_model_file_or_foreign(path, nvidia),
    )
    extra = model_file.extra
    text = TextSettings.from_dict(extra["text"])
    if len(text.symbols) != int(model_file.model_config["n_symbols"]):
        raise UserError(
            f"{path}: its symbol table has {len(text.symbols)} symbols but the model "
            f"{model_file.model_config['n_symbols']}"
        )
    info = FastPitchInfo(
        step=model_file.step,
        epoch=int(extra.get("epoch", 0)),
        model_config=dict(model_file.model_config),
        text=text,
        pitch=PitchStats(float(extra["pitch_mean"]), float(extra["pitch_std"])),
        audio=AudioConfig.model_validate(extra["audio"]),
    )
    return model, info
