"""Durations from TextGrids: one interval tier's labels become the symbols, its intervals the durations.

``<textgrid_dir>/<id>.TextGrid`` per utterance; the symbol table is built from the training
TextGrids (:class:`tts_pipeline.features.durations.SymbolTable`). See :func:`durations_from_textgrids`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tts_pipeline.data.feature_layout import FeatureLayout
from tts_pipeline.errors import UserError
from tts_pipeline.features.durations import PAUSE_SYMBOL, UNKNOWN_SYMBOL, SymbolTable, read_textgrid_durations
from tts_pipeline.features.symbol_files import SplitCounts, Utterance, mel_frames, write_symbol_files

log = logging.getLogger(__name__)


def textgrid_path(textgrid_dir: Path, utterance_id: str) -> Path:
    """``<textgrid_dir>/<id>.TextGrid``; a UserError when there is none."""
    path = textgrid_dir / f"{utterance_id}.TextGrid"
    if not path.is_file():
        raise UserError(f"{utterance_id}: no TextGrid {path} (durations.textgrid_dir)")
    return path


def durations_from_textgrids(
    utterances: Sequence[Utterance],
    layout: FeatureLayout,
    textgrid_dir: Path,
    tier: str,
    hop_length: int,
    sampling_rate: int,
    counts: dict[str, SplitCounts],
) -> dict[str, Any]:
    """Read every utterance's tier, build the symbol table from train, write the files.

    Returns the index's symbol fields.
    """
    frame_s = hop_length / sampling_rate
    read = []
    for utterance in utterances:
        n_frames = mel_frames(layout, utterance.id)
        path = textgrid_path(textgrid_dir, utterance.id)
        tier_durations = read_textgrid_durations(path, tier, n_frames, hop_length, sampling_rate)
        # A TextGrid of another recording (or of the audio before trimming) would still "fit" after
        # clamping; its length tells.
        end = tier_durations.intervals[-1].end
        if abs(end - n_frames * frame_s) > 2 * frame_s:
            raise UserError(
                f"{utterance.id}: {path} ends at {end:.3f} s but the audio has {n_frames} frames "
                f"({n_frames * frame_s:.3f} s); is it the TextGrid of this recording?"
            )
        read.append((utterance, tier_durations, n_frames))

    table = SymbolTable.from_labels(
        label for utterance, td, _ in read if utterance.split == "train" for label in td.labels
    )
    for utterance, tier_durations, n_frames in read:
        symbol_ids, unknown = table.ids(tier_durations.labels)
        write_symbol_files(layout, utterance.id, tier_durations.durations, symbol_ids, n_frames)
        counts[utterance.split].add(tier_durations.durations, n_frames, unknown)
    for name, split in counts.items():
        if split.n_unknown_symbols:
            log.warning(
                "%s: %d phones never seen in the training TextGrids mapped to %s: %s",
                name,
                split.n_unknown_symbols,
                UNKNOWN_SYMBOL,
                dict(split.unknown_labels),
            )
    return {
        "symbols_kind": "textgrid",
        "symbol_set": None,
        "symbols": list(table.symbols),
        "pause_symbol": PAUSE_SYMBOL,
        "unknown_symbol": UNKNOWN_SYMBOL,
        "textgrid_dir": str(textgrid_dir),
        "textgrid_tier": tier,
    }
