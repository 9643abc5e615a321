"""The FastPitch model file: weights, constructor arguments, step and epoch, the text settings with the
symbol table, the pitch statistics and the audio section (format of :mod:`tts_pipeline.models.model_file`).

A model trained on a corpus with named speakers also records them, in its extra as ``speakers``: a list
in speaker-id order (names sorted) of ``{"name", "pitch_mean", "pitch_std"}``, each speaker's pitch
statistics in Hz, which its pitch was normalised with. ``pitch_mean`` / ``pitch_std`` stay the whole
corpus's (the model's buffers, as NVIDIA's files have them). A file without ``speakers`` (single-speaker,
written before speakers existed, or NVIDIA's, multi-speaker ones included) names no speaker; its speaker
ids are only numbers, and every speaker's pitch is read with the one ``pitch_mean`` / ``pitch_std``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tts_pipeline.config import AudioConfig, TextConfig
from tts_pipeline.errors import UserError
from tts_pipeline.models.fastpitch import foreign
from tts_pipeline.models.fastpitch.data import PitchStats, Speakers, TextSettings
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
        pitch: The pitch statistics of the whole training corpus (the model's buffers); a model with
            :attr:`speakers` normalised each speaker's pitch with :attr:`speaker_pitch` instead.
        audio: The audio section its mels follow (a vocoder must use the same).
        speaker_table: The named speakers with their pitch statistics, in id order; None when the file
            names none (use :attr:`speakers`, :attr:`speaker_pitch`, :meth:`speaker_id`).
    """

    step: int
    epoch: int
    model_config: dict[str, Any]
    text: TextSettings
    pitch: PitchStats
    audio: AudioConfig
    speaker_table: Speakers | None = None

    @property
    def symbols(self) -> tuple[str, ...]:
        return self.text.symbols

    @property
    def n_speakers(self) -> int:
        """Speakers the model was trained on (ids ``0 .. n_speakers - 1``); 1 for a single-speaker model,
        also from a file written before the key existed."""
        return int(self.model_config.get("n_speakers", 1))

    @property
    def speakers(self) -> tuple[str, ...]:
        """Speaker names in id order (``speakers[i]`` is speaker id ``i``); ``()`` when the file names none
        (a single-speaker file without a named speaker, an older file, NVIDIA's)."""
        return self.speaker_table.names if self.speaker_table is not None else ()

    @property
    def speaker_pitch(self) -> dict[str, PitchStats]:
        """``{name: pitch statistics}`` (Hz) each named speaker's pitch was normalised with: a pitch shift
        in Hz for that speaker divides by its ``std``; ``{}`` when the file names no speaker."""
        return self.speaker_table.pitch if self.speaker_table is not None else {}

    def speaker_id(self, name: str) -> int:
        """The id of speaker ``name``; ValueError listing the file's speakers when it has no such one."""
        speaker = self.speaker_table.id_of(name) if self.speaker_table is not None else None
        if speaker is None:
            known = ", ".join(self.speakers) if self.speakers else "none (the file names no speaker)"
            raise ValueError(f"speaker {name!r}: not a speaker of this FastPitch; its speakers: {known}")
        return speaker

    def pitch_of(self, speaker: int | None) -> PitchStats:
        """The pitch statistics of speaker id ``speaker`` (None: speaker 0): the speaker's own when the file
        names its speakers, else :attr:`pitch` (the one NVIDIA's files have for all)."""
        index = 0 if speaker is None else int(speaker)
        if self.speaker_table is not None and 0 <= index < len(self.speaker_table):
            return self.speaker_table.entries[index].pitch
        return self.pitch


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
    speakers: Speakers | None = None,
) -> None:
    """Write ``model.pt``: weights, constructor arguments, step and epoch, the text settings with the
    symbol table, the pitch statistics (the training corpus's, also for a warm start) and the audio
    section; ``warm_started_from``, the file a warm start began from, when there was one; ``speakers``
    (names in id order with their pitch statistics) for a model trained on named speakers.

    ValueError when ``speakers`` has more speakers than the model's ``n_speakers`` (ids past its
    embedding) or several speakers for a single-speaker model."""
    if speakers is not None and len(speakers) > max(model.n_speakers, 1):
        raise ValueError(
            f"save_fastpitch: {len(speakers)} speakers ({', '.join(speakers.names)}) for a model with "
            f"n_speakers {model.n_speakers}"
        )
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
    if speakers is not None:
        extra["speakers"] = speakers.as_list()
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
    speakers = Speakers.from_list(extra["speakers"], str(path)) if extra.get("speakers") else None
    if speakers is not None and len(speakers) > max(model.n_speakers, 1):
        raise UserError(
            f"{path}: it names {len(speakers)} speakers ({', '.join(speakers.names)}) but its model has "
            f"n_speakers {model.n_speakers}"
        )
    info = FastPitchInfo(
        step=model_file.step,
        epoch=int(extra.get("epoch", 0)),
        model_config=dict(model_file.model_config),
        text=text,
        pitch=PitchStats(float(extra["pitch_mean"]), float(extra["pitch_std"])),
        audio=AudioConfig.model_validate(extra["audio"]),
        speaker_table=speakers,
    )
    return model, info
