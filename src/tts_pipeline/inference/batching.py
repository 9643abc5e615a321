"""Batches for inference: utterances sorted by length, then padded together (reference 5.3, step 1).

Sorting by decreasing token count puts utterances of similar length in one batch, so little of each
batch is padding. The order is deterministic (ties keep the input order), so the same phrase file
always gives the same batches.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch


def plan_batches(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Indices into ``lengths``, longest first (ties in input order), cut into batches of ``batch_size``.

    The last batch may be smaller. ``plan_batches([3, 9, 5], 2) == [[1, 2], [0]]``.
    """
    if batch_size < 1:
        raise ValueError(f"batch size: expected >= 1, got {batch_size}")
    order = sorted(range(len(lengths)), key=lambda index: (-int(lengths[index]), index))
    return [order[start : start + batch_size] for start in range(0, len(order), batch_size)]


def pad_tokens(
    sequences: Sequence[Sequence[int]], device: torch.device | str = "cpu"
) -> tuple[torch.Tensor, torch.Tensor]:
    """Symbol-id sequences -> ``(B, L_max)`` int64 ids zero-padded on the right, and ``(B,)`` int64 lengths."""
    if not sequences:
        raise ValueError("pad_tokens: expected at least one sequence")
    lengths = torch.tensor([len(sequence) for sequence in sequences], dtype=torch.int64)
    tokens = torch.zeros(len(sequences), int(lengths.max()), dtype=torch.int64)
    for row, sequence in enumerate(sequences):
        tokens[row, : len(sequence)] = torch.as_tensor(list(sequence), dtype=torch.int64)
    return tokens.to(device), lengths.to(device)


def pad_mels(mels: Sequence[torch.Tensor], fill: float) -> tuple[torch.Tensor, torch.Tensor]:
    """``(n_mels, T_b)`` mels -> ``(B, n_mels, T_max)`` padded on the right with ``fill``, and ``(B,)`` int64 lengths.

    The result is on the first mel's device and dtype.
    """
    if not mels:
        raise ValueError("pad_mels: expected at least one mel")
    first = mels[0]
    lengths = torch.tensor([mel.shape[-1] for mel in mels], dtype=torch.int64)
    batch = torch.full((len(mels), first.shape[0], int(lengths.max())), fill, dtype=first.dtype, device=first.device)
    for row, mel in enumerate(mels):
        batch[row, :, : mel.shape[-1]] = mel
    return batch, lengths
