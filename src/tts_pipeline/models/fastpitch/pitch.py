"""Pitch transforms at inference (reference section 5.2).

They act on normalised per-token pitch, ``(hz - mean) / std``, in NVIDIA's order: flatten (x 0),
invert (x -1), amplify (x A), shift (+ Hz / std). Flattening gives every token the speaker's mean
pitch; inverting mirrors the contour around it; amplifying widens (A > 1) or narrows it; shifting
moves the whole contour by a number of Hz.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class PitchTransform:
    """A transform of normalised pitch.

    Attributes:
        flatten: Multiply by 0 (a monotone voice at the mean pitch).
        invert: Multiply by -1 (mirror around the mean).
        amplify: Multiply by this factor.
        shift_hz: Add ``shift_hz / pitch_std`` (a shift of this many Hz).
    """

    flatten: bool = False
    invert: bool = False
    amplify: float = 1.0
    shift_hz: float = 0.0

    def __call__(self, pitch: torch.Tensor, token_mask: torch.Tensor, pitch_std: float) -> torch.Tensor:
        """``(B, L)`` normalised pitch and ``(B, L)`` bool mask -> ``(B, L)`` transformed, 0 on padding.

        ``pitch_std`` is the std in Hz used to normalise the pitch (the model's ``pitch_std`` buffer).
        """
        if pitch_std <= 0:
            raise ValueError(f"pitch_std: expected > 0 to convert a shift in Hz, got {pitch_std}")
        if self.flatten:
            pitch = pitch * 0.0
        if self.invert:
            pitch = pitch * -1.0
        pitch = pitch * self.amplify
        pitch = pitch + self.shift_hz / pitch_std
        return pitch * token_mask.to(pitch.dtype)

    @property
    def is_identity(self) -> bool:
        """True when the transform leaves pitch unchanged."""
        return not self.flatten and not self.invert and self.amplify == 1.0 and self.shift_hz == 0.0
