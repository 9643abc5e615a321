"""What every padded batch of mel targets reports to the training loop: its utterances and real frames.

The FastPitch and Tacotron 2 batches both carry ``ids`` (``B`` utterance ids) and ``mel_lengths``
(``(B,)`` int64 frames per item before padding); throughput is counted in real frames, so padding
never inflates it.
"""

from __future__ import annotations

import torch

__all__ = ["MelBatchCounts"]


class MelBatchCounts:
    """``size`` and ``frames`` of a batch dataclass with ``ids`` and ``mel_lengths`` fields.

    A plain base (not a dataclass): the batch's own dataclass fields stay exactly its own.
    """

    ids: list[str]
    mel_lengths: torch.Tensor

    @property
    def size(self) -> int:
        """Utterances in the batch."""
        return len(self.ids)

    @property
    def frames(self) -> int:
        """Real (unpadded) mel frames in the batch: the unit of throughput."""
        return int(self.mel_lengths.sum())
