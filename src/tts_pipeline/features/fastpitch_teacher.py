"""What teacher-forced FastPitch mel extraction reads: the model, checked against the durations it is
to follow, and every utterance of the train, val and test manifests as a FastPitch dataset.

The dataset yields the ground-truth inputs of FastPitch's training forward (symbols ``(L,)``,
durations ``(L,)`` summing to the mel's ``T``, per-symbol pitch ``(L,)`` and, when the model was
trained with it, energy ``(L,)``), so the forward reproduces each utterance's frame count exactly.
A model file that names its speakers gets each utterance's speaker id (from the manifest's ``speaker``)
and that speaker's pitch normalisation, as in its training.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tts_pipeline.errors import UserError

if TYPE_CHECKING:
    from tts_pipeline.config import AudioConfig, TextConfig
    from tts_pipeline.data.manifest_record import ManifestRecord
    from tts_pipeline.models.fastpitch.data import FastPitchDataset, Speakers
    from tts_pipeline.models.fastpitch.model import FastPitch
    from tts_pipeline.models.fastpitch.model_file import FastPitchInfo

SPLITS = ("train", "val", "test")
# Named in the error for empty manifests, as the stage that reads them.
_STAGE = "extract_fastpitch_mels"


def load_teacher(
    model_path: Path, features_dir: Path, *, text: TextConfig, audio: AudioConfig
) -> tuple[FastPitch, FastPitchInfo]:
    """FastPitch from ``model_path`` (its file, or NVIDIA's checkpoint described by ``text`` / ``audio``).

    When ``features_dir`` holds a durations index, the model's symbol table must be the index's: the
    durations and symbol files in the folder are written in those ids. UserError otherwise.
    """
    from tts_pipeline.data.feature_layout import FeatureLayout
    from tts_pipeline.models.fastpitch.data import TextSettings
    from tts_pipeline.models.fastpitch.model_file import load_fastpitch

    model, info = load_fastpitch(model_path, text=text, audio=audio)
    index_path = FeatureLayout(features_dir).durations_index
    if index_path.is_file():
        table = TextSettings.from_durations_index(index_path, info.text.cleaners).symbols
        if table != info.symbols:
            raise UserError(
                f"{model_path}: trained on a symbol table of {len(info.symbols)} symbols that differs from "
                f"{index_path} ({len(table)}); retrain FastPitch on these durations"
            )
    return model, info


def read_split_records(manifest_dir: Path) -> tuple[list[ManifestRecord], list[str]]:
    """Every record of the train, val and test manifests, in that order, and the split of each.

    UserError when the manifests list no utterance at all.
    """
    from tts_pipeline.data.manifest import manifest_path, read_manifest

    by_split = {split: read_manifest(manifest_path(manifest_dir, split)) for split in SPLITS}
    records = [record for split in SPLITS for record in by_split[split]]
    if not records:
        raise UserError(f"{_STAGE}: the manifests in {manifest_dir} list no utterances")
    return records, [split for split in SPLITS for _ in by_split[split]]


def teacher_speakers(records: list[ManifestRecord], info: FastPitchInfo, model_path: Path) -> Speakers | None:
    """The speakers the teacher-forced dataset maps the records' ``speaker`` with: the model file's, or None
    for a model that names none (every utterance is then speaker 0 with the file's one pitch normalisation).

    UserError naming the model file when it is a multi-speaker model that names no speakers (NVIDIA's) and
    the manifests name theirs: which embedding row is whose voice cannot be known.
    """
    from tts_pipeline.data.speakers import corpus_speakers

    if info.speaker_table is not None:
        return info.speaker_table
    names = corpus_speakers({record.id: record.speaker for record in records}, "the manifests")
    if names and info.n_speakers > 1:
        raise UserError(
            f"{model_path}: a FastPitch of {info.n_speakers} unnamed speakers (NVIDIA's?), but the manifests name "
            f"{len(names)} ({', '.join(names)}); the teacher-forced mels need each utterance's speaker id, which "
            "a model file of this pipeline's train_fastpitch records"
        )
    return None


def teacher_forced_dataset(
    records: list[ManifestRecord], features_dir: Path, info: FastPitchInfo, model_path: Path | None = None
) -> FastPitchDataset:
    """The FastPitch dataset of ``records`` over ``features_dir``, with the pitch normalisation, mel
    channels, symbol count, energy conditioning and speakers (:func:`teacher_speakers`) that the model
    was trained with. ``model_path`` names the model file in errors."""
    from tts_pipeline.models.fastpitch.data import FastPitchDataset

    energy = bool(info.model_config.get("energy_conditioning", False))
    return FastPitchDataset(
        records,
        features_dir,
        info.pitch,
        info.audio.n_mel_channels,
        n_symbols=len(info.symbols),
        with_energy=energy,
        speakers=teacher_speakers(records, info, model_path or Path("the FastPitch model")),
    )
