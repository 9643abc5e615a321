"""The inputs an export is checked on: the validation texts one at a time (batch 1, their own lengths),
in padded batches (the texts sorted by length, ``batch_size`` at a time), and one batch again with
other controls than the defaults. Plain lists: the eager models and each exported file get the same
numbers, each in its own tensor type.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

# The controls of the extra case: slower, higher, a livelier contour; far enough from the defaults that
# a control input wired wrongly shows.
OTHER_CONTROLS = {"pace": 0.8, "pitch_shift_hz": 25.0, "pitch_scale": 1.5}


@dataclass(frozen=True)
class Controls:
    """What the acoustic graph takes besides the symbols, one value for every item of a case.

    Attributes:
        pace: Speaking rate (> 0; durations are divided by it).
        pitch_shift_hz: Added to the pitch, in Hz.
        pitch_scale: Multiplies the normalised pitch contour: NVIDIA's flatten (0), invert (-1) and
            amplify (A) transforms as one factor.
    """

    pace: float = 1.0
    pitch_shift_hz: float = 0.0
    pitch_scale: float = 1.0

    @classmethod
    def from_inference(cls, section: Mapping[str, Any]) -> Controls:
        """The ``inference`` section's pace and pitch transforms (``pitch_flatten``, ``pitch_invert``,
        ``pitch_amplify``, ``pitch_shift_hz``) as controls: what ``synthesize`` speaks with."""
        scale = float(section.get("pitch_amplify", 1.0))
        if section.get("pitch_invert", False):
            scale = -scale
        if section.get("pitch_flatten", False):
            scale = 0.0
        return cls(float(section.get("pace", 1.0)), float(section.get("pitch_shift_hz", 0.0)), scale)

    def arrays(self, batch: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(B,)`` float32 pace, pitch shift and pitch scale, in the graph's input order."""
        return tuple(np.full(batch, value, dtype=np.float32) for value in self.values())  # type: ignore[return-value]

    def values(self) -> tuple[float, float, float]:
        return (self.pace, self.pitch_shift_hz, self.pitch_scale)


@dataclass(frozen=True)
class Case:
    """One input of the check.

    Attributes:
        name: How the figures and errors name it: the utterance id, or ``batch of N: <first>..<last>``.
        ids: The utterance ids of its items.
        symbols: Their symbol ids, one sequence per item.
        controls: The controls every item gets.
    """

    name: str
    ids: tuple[str, ...]
    symbols: tuple[tuple[int, ...], ...]
    controls: Controls

    @property
    def batch(self) -> int:
        return len(self.symbols)

    def tokens(self) -> tuple[np.ndarray, np.ndarray]:
        """``(B, N)`` int64 ids zero-padded on the right, ``(B,)`` int64 lengths."""
        lengths = np.array([len(items) for items in self.symbols], dtype=np.int64)
        tokens = np.zeros((self.batch, int(lengths.max())), dtype=np.int64)
        for row, items in enumerate(self.symbols):
            tokens[row, : len(items)] = items
        return tokens, lengths

    def describe(self) -> dict[str, Any]:
        """For ``verification.json``: name, batch, symbols per item, controls."""
        return {
            "input": self.name,
            "batch": self.batch,
            "n_symbols": [len(items) for items in self.symbols],
            "controls": dict(zip(("pace", "pitch_shift_hz", "pitch_scale"), self.controls.values(), strict=True)),
        }


def build_cases(
    texts: Sequence[tuple[str, Sequence[int]]], *, batch_size: int, controls: Controls = Controls()
) -> list[Case]:
    """Every text alone, then padded batches of up to ``batch_size`` (sorted by length, longest first,
    so each batch pads the way synthesis pads), then the first batch with :data:`OTHER_CONTROLS`.

    Args:
        texts: ``(utterance id, symbol ids)`` pairs, each with at least one symbol.
        batch_size: Items per padded batch (>= 2).
        controls: The controls of every case but the last (the voice's defaults).
    """
    if not texts:
        raise ValueError("export check: no texts to check the exports on")
    if batch_size < 2:
        raise ValueError(f"export check: batch_size must be >= 2 to check padded batches, got {batch_size}")
    cases = [Case(name, (name,), (tuple(symbols),), controls) for name, symbols in texts]
    order = sorted(texts, key=lambda item: -len(item[1]))
    if len(order) == 1:  # one text: batched with its own first half, so that the batch still pads
        name, symbols = order[0]
        order.append((f"{name}[:{(len(symbols) + 1) // 2}]", symbols[: (len(symbols) + 1) // 2]))
    batches = [order[start : start + batch_size] for start in range(0, len(order), batch_size)]
    for group in (group for group in batches if len(group) > 1):
        ids = tuple(name for name, _ in group)
        name = f"batch of {len(group)}: {ids[0]}..{ids[-1]}"
        cases.append(Case(name, ids, tuple(tuple(symbols) for _, symbols in group), controls))
    first = cases[len(texts)]
    cases.append(Case(f"{first.name}, other controls", first.ids, first.symbols, Controls(**OTHER_CONTROLS)))
    return cases
