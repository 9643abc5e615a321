"""One piece's mel vocoded in chunks, so that its first audio leaves long before its last is made.

FastPitch is not autoregressive: it gives a piece's whole mel at once, in tens of milliseconds. The
vocoder is most of the time (a 10 s piece is about 200 ms of HiFi-GAN on two CPU cores), so a stream
vocodes the mel chunk by chunk: the first chunk is short (``first_frames``), later ones double up to
``max_frames``. A vocoder is a stack of convolutions whose output near a sample depends on a dozen or
so mel frames around it, so each chunk is vocoded with ``context_frames`` of the mel on either side and
cropped; with enough context the joined chunks equal the piece vocoded whole (the denoiser's STFT
window, 4 frames, is inside the same context). The fade-out of the piece's last frames is applied
to whichever chunks hold them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

Vocode = Callable[[np.ndarray], np.ndarray]  # (n_mels, T) log-mel -> (T * hop,) float32 audio


@dataclass(frozen=True)
class ChunkPlan:
    """How a piece's mel is cut.

    Attributes:
        first_frames: Frames of the first chunk (about 0.37 s of audio at hop 256, 22.05 kHz).
        max_frames: The largest chunk; chunks double from the first up to it.
        context_frames: Mel frames vocoded on either side of a chunk and cropped away.
    """

    first_frames: int = 32
    max_frames: int = 512
    context_frames: int = 24

    def __post_init__(self) -> None:
        if not 1 <= self.first_frames <= self.max_frames or self.context_frames < 0:
            raise ValueError("chunk plan: expected 1 <= first_frames <= max_frames and context_frames >= 0")

    def spans(self, n_frames: int) -> list[tuple[int, int]]:
        """``[start, end)`` frame spans covering ``n_frames`` in order (a short tail joins its chunk)."""
        spans, start, size = [], 0, self.first_frames
        while start < n_frames:
            end = min(n_frames, start + size)
            if 0 < n_frames - end < self.first_frames:  # no tiny last chunk: one more call for little audio
                end = n_frames
            spans.append((start, end))
            start, size = end, min(2 * size, self.max_frames)
        return spans


def vocode_chunks(
    mel: np.ndarray,
    vocode: Vocode,
    hop: int,
    plan: ChunkPlan,
    finish: Callable[[np.ndarray], np.ndarray] = lambda audio: audio,
    fade_samples: int = 0,
    from_start: bool = False,
) -> Iterator[np.ndarray]:
    """Yield the audio of ``mel`` ``(n_mels, T)`` chunk by chunk: ``(samples,)`` float32 pieces whose
    concatenation is ``T * hop`` samples.

    ``from_start``: every chunk is vocoded from the piece's first frame (its left context is all that
    came before), for a vocoder whose output depends on every earlier frame (a harmonic source's running
    phase and noise position). The first chunk's latency is unchanged; a long piece costs up to twice
    the vocoder's time of the whole, since chunks double in length.

    ``finish`` post-processes a chunk's audio *with* its context (the denoiser) before it is cropped;
    the last ``fade_samples`` samples of the whole are faded out linearly (as
    :func:`tts_pipeline.inference.postprocess.fade_out`).
    """
    n_frames = mel.shape[1]
    total = n_frames * hop
    fade = min(fade_samples, total)
    ramp = np.linspace(1.0, 0.0, fade, dtype=np.float32) if fade > 0 else None
    for start, end in plan.spans(n_frames):
        left = 0 if from_start else max(0, start - plan.context_frames)
        right = min(n_frames, end + plan.context_frames)
        audio = finish(vocode(np.ascontiguousarray(mel[:, left:right])))
        chunk = np.array(audio[(start - left) * hop : (end - left) * hop], dtype=np.float32)
        if ramp is not None and end * hop > total - fade:
            first = max(start * hop, total - fade)
            chunk[first - start * hop :] *= ramp[first - (total - fade) : end * hop - (total - fade)]
        yield chunk
