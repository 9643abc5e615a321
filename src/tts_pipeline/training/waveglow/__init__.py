"""WaveGlow training (NVIDIA's ``train.py -m WaveGlow``): maximum likelihood on audio segments, Adam at a
constant learning rate, DDP, AMP and resumable checkpoints on the shared epoch loop.

One optimiser step covers ``global_batch_size`` segments: ``k = global / (processes x batch_size)``
micro-batches per process, each backpropagating ``loss / k`` (only the last one all-reduces under DDP),
so 1 GPU x k and k GPUs x 1 give the same update. The input mel of a segment is computed on the device
from its audio by the one mel function (:class:`tts_pipeline.audio.MelSpectrogram`), in float32.

Modules: :mod:`.state` (model, optimiser, scaler, resume hash), :mod:`.step` (the loss, one optimiser
step, validation), :mod:`.loop` (:func:`fit`, the entry, and the epoch hooks).
"""

from tts_pipeline.training.waveglow.loop import fit
from tts_pipeline.training.waveglow.state import RESUME_NEUTRAL_KEYS, WaveGlowState, build_state, resume_hash
from tts_pipeline.training.waveglow.step import Runtime, evaluate, negative_log_likelihood, train_step

__all__ = [
    "RESUME_NEUTRAL_KEYS",
    "Runtime",
    "WaveGlowState",
    "build_state",
    "evaluate",
    "fit",
    "negative_log_likelihood",
    "resume_hash",
    "train_step",
]
