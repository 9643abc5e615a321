"""WaveGlow training (NVIDIA's ``train.py -m WaveGlow``): maximum likelihood on audio segments, Adam at a
constant learning rate, DDP, AMP and resumable checkpoints on the shared epoch loop.

One optimiser step covers ``global_batch_size`` segments: ``k = global / (processes x batch_size)``
micro-batches per process, each backpropagating ``loss / k`` (only the last one all-reduces under DDP),
so 1 GPU x k and k GPUs x 1 give the same update. The input mel of a segment is computed on the device
from its audio by the one mel function (:class:`tts_pipeline.audio.MelSpectrogram`), in float32.

Modules: :mod:`.state` (model, optimiser, scaler, checkpoint contents, resume hash), :mod:`.loop`
(:func:`fit`, the step and validation).
"""

from tts_pipeline.training.waveglow.loop import TrainingResult, fit
from tts_pipeline.training.waveglow.state import (
    RESUME_NEUTRAL_KEYS,
    WaveGlowState,
    build_state,
    restore_state,
    resume_hash,
    save_state,
)

__all__ = [
    "RESUME_NEUTRAL_KEYS",
    "TrainingResult",
    "WaveGlowState",
    "build_state",
    "fit",
    "restore_state",
    "resume_hash",
    "save_state",
]
