"""Where the features folder keeps each kind of per-utterance array and each index file.

The one description of the folder that the ``features`` and ``durations`` stages write and that
FastPitch, HiFi-GAN, the figures and the benchmark read::

    <root>/mels/<id>.npy          float32 (n_mels, T) log-mel                      features stage
    <root>/pitch/<id>.npy         float32 (T,) frame pitch in Hz, 0 = unvoiced     features stage
    <root>/symbols/<id>.npy       int32 (L,) symbol ids (0 is the pad id)          durations stage
    <root>/durations/<id>.npy     int32 (L,) mel frames per symbol, sum T          durations stage
    <root>/symbol_pitch/<id>.npy  float32 (L,) mean voiced pitch per symbol, Hz    durations stage
    <root>/pitch_stats.json       mean / std of the voiced training frames         features stage
    <root>/features.jsonl         features index (written last)                    features stage
    <root>/durations.json         durations index and symbol table (written last)  durations stage
    <root>/.state.json            the settings the mels and pitch were made with   features stage
    <root>/plots/                 figures of a few validation utterances           both stages
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

MELS = "mels"
PITCH = "pitch"
SYMBOLS = "symbols"
DURATIONS = "durations"
SYMBOL_PITCH = "symbol_pitch"

FRAME_KINDS = (MELS, PITCH)
"""Per-utterance arrays with one value (or one mel column) per frame: ``T`` long."""
SYMBOL_KINDS = (SYMBOLS, DURATIONS, SYMBOL_PITCH)
"""Per-utterance arrays with one value per symbol: ``L`` long."""
UTTERANCE_KINDS = FRAME_KINDS + SYMBOL_KINDS

PITCH_STATS_NAME = "pitch_stats.json"
FEATURES_INDEX_NAME = "features.jsonl"
DURATIONS_INDEX_NAME = "durations.json"
EXTRACTION_STATE_NAME = ".state.json"
PLOTS_DIR = "plots"


@dataclass(frozen=True)
class FeatureLayout:
    """The paths of one features folder ``root`` (module docstring)."""

    root: Path

    def __post_init__(self) -> None:
        object.__setattr__(self, "root", Path(self.root))

    def folder(self, kind: str) -> Path:
        """``<root>/<kind>``, the folder of one kind of :data:`UTTERANCE_KINDS`."""
        if kind not in UTTERANCE_KINDS:
            raise ValueError(f"unknown feature kind {kind!r}; expected one of {UTTERANCE_KINDS}")
        return self.root / kind

    def path(self, kind: str, utterance_id: str) -> Path:
        """``<root>/<kind>/<id>.npy``."""
        return self.folder(kind) / f"{utterance_id}.npy"

    def mel(self, utterance_id: str) -> Path:
        return self.path(MELS, utterance_id)

    def pitch(self, utterance_id: str) -> Path:
        return self.path(PITCH, utterance_id)

    def symbols(self, utterance_id: str) -> Path:
        return self.path(SYMBOLS, utterance_id)

    def durations(self, utterance_id: str) -> Path:
        return self.path(DURATIONS, utterance_id)

    def symbol_pitch(self, utterance_id: str) -> Path:
        return self.path(SYMBOL_PITCH, utterance_id)

    @property
    def pitch_stats(self) -> Path:
        return self.root / PITCH_STATS_NAME

    @property
    def features_index(self) -> Path:
        return self.root / FEATURES_INDEX_NAME

    @property
    def durations_index(self) -> Path:
        return self.root / DURATIONS_INDEX_NAME

    @property
    def extraction_state(self) -> Path:
        return self.root / EXTRACTION_STATE_NAME

    @property
    def plots(self) -> Path:
        return self.root / PLOTS_DIR
