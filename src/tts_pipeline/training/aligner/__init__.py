"""Training of the standalone aligner: forward-sum + ramped binarisation loss, resumable, on the shared
:class:`tts_pipeline.training.loop.EpochLoop`; :func:`fit` is the entry.

Steps are plain functions over explicit state (:class:`AlignerState`). One step trains on one batch of
similar-length utterances (:class:`LengthBucketBatchSampler`: batch sizes vary, the last of an epoch
may be smaller), in one process. The loop checkpoints every ``checkpoint_every_n_steps`` steps and at
the end, and validates after every epoch (never before training); a resumed run restores weights,
optimiser, AMP scaler and RNG states, and continues the interrupted epoch at the next batch of the same
``(seed, epoch)``-determined batch order, so it reaches the same step count and epoch.

Modules: :mod:`.state` (model, optimiser, precision, resume hash), :mod:`.step` (the losses, one
optimiser step, validation), :mod:`.loop` (:func:`fit`, the batches and the epoch hooks).
"""

from tts_pipeline.training.aligner.loop import BucketedBatches, fit
from tts_pipeline.training.aligner.state import (
    RESUME_NEUTRAL_KEYS,
    AlignerState,
    build_state,
    resolve_aligner_precision,
    resume_hash,
)
from tts_pipeline.training.aligner.step import (
    AlignerLosses,
    attention_sharpness,
    compute_losses,
    evaluate,
    train_step,
)

__all__ = [
    "RESUME_NEUTRAL_KEYS",
    "AlignerLosses",
    "AlignerState",
    "BucketedBatches",
    "attention_sharpness",
    "build_state",
    "compute_losses",
    "evaluate",
    "fit",
    "resolve_aligner_precision",
    "resume_hash",
    "train_step",
]
