"""The aligner's warm start (``aligner.init_from``): training starts from a trained aligner's weights
instead of a random init, with a fresh optimiser and step counter.

Why it matters for adaptation: on a few minutes of a new voice, an aligner trained from scratch places
the symbols poorly (its word boundaries on the demo's 3-minute adaptation corpus were about 110 ms off,
against 30 ms on the demo's own hour), and FastPitch learns its durations from those places. Which
symbol sounds like what barely depends on the speaker, so the demo's aligner is already close on a new
voice, and a few epochs on the new recordings bring it closer.

What must agree: the file is an aligner model file of this pipeline (:func:`load_aligner`); its text
encoding (symbol mode, symbol set and table: the embedding's rows are symbol ids), its mel channels and
its network sizes (``embedding_dim``, ``attention_dim``) are the section's. ``temperature`` may differ
(it scales the scores, not the weights' shapes), and so may the prior: they shape what training does
next. The aligner's file does not record the audio settings its mels had; mels of another hop or
sampling rate still load, and training adapts them like any other new data.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from tts_pipeline.config import AlignerConfig
from tts_pipeline.models.aligner.model import Aligner
from tts_pipeline.models.aligner.model_file import AlignerInfo, load_aligner
from tts_pipeline.training.aligner.state import AlignerState

log = logging.getLogger(__name__)

KEY = "aligner.init_from"

# The section's keys that fix the weights' shapes, as the model's config names them.
SHAPE_KEYS = ("embedding_dim", "attention_dim")


@dataclass
class AlignerInit:
    """An aligner to start training from.

    Attributes:
        path: Its file.
        model: The model rebuilt from it (eval mode, on the CPU).
        info: What the file says besides the weights (step, text encoding, prior scaling).
    """

    path: Path
    model: Aligner
    info: AlignerInfo


def read_init(path: str | Path) -> AlignerInit:
    """Read the aligner model file ``aligner.init_from`` names; UserError naming the file when it is
    missing or not a model file."""
    model, info = load_aligner(path)
    return AlignerInit(Path(path), model, info)


def mismatches(
    init: AlignerInit, *, section: AlignerConfig, n_mels: int, symbol_set: str, symbol_table: list[str]
) -> list[str]:
    """How the file differs from what training with ``section`` on this corpus builds, one sentence each
    naming the file and the config key; ``[]`` when it fits.

    Args:
        init: The file read.
        section: The ``aligner`` section (its ``symbols`` mode and network sizes).
        n_mels: ``audio.n_mel_channels``.
        symbol_set: ``text.symbol_set``; ``symbol_table`` its symbols in id order.
    """
    path, info, theirs = init.path, init.info, init.model.model_config()
    found = []
    if info.symbols != section.symbols:
        found.append(
            f"{path} encodes text as {info.symbols!r}, but aligner.symbols is {section.symbols!r}; expected the "
            "same symbol mode (the embedding's rows are symbol ids)"
        )
    if info.symbol_set and info.symbol_set != symbol_set:
        found.append(
            f"{path} was trained on symbol set {info.symbol_set!r}, but text.symbol_set is {symbol_set!r}; "
            "expected the same set (the embedding's rows are symbol ids)"
        )
    elif info.symbol_table and info.symbol_table != list(symbol_table):
        found.append(
            f"{path} has a symbol table of {len(info.symbol_table)} symbols that differs from text.symbol_set "
            f"{symbol_set!r}'s {len(symbol_table)}; expected the same table, in the same order"
        )
    if theirs.get("n_mels") != n_mels:
        found.append(
            f"{path} reads {theirs.get('n_mels')} mel channels, but audio.n_mel_channels is {n_mels}; expected "
            "the same number"
        )
    for key in SHAPE_KEYS:
        if theirs.get(key) != getattr(section, key):
            found.append(
                f"{path} has {key} {theirs.get(key)!r}, but aligner.{key} is {getattr(section, key)!r}; expected "
                "the file's value (it fixes the weights' shapes)"
            )
    return found


def apply_warm_start(state: AlignerState, init: AlignerInit) -> None:
    """Load ``init``'s weights into a fresh ``state``; its optimiser and counters stay as built (the
    section's learning rate, step 0). The section's ``temperature`` holds, not the file's."""
    state.model.load_state_dict(init.model.state_dict())
    log.info(
        "warm start from %s (step %s of its training); optimiser fresh at the section's learning rate",
        init.path,
        init.info.step,
    )
