"""Tacotron 2 training (NVIDIA's ``train.py`` recipe) on the shared epoch loop; the model file is
:mod:`tts_pipeline.models.tacotron2.model_file`.

One optimiser step covers ``global_batch_size`` utterances: ``k = global / (processes x batch_size)``
micro-batches per process, each backpropagating ``loss / k`` (under DDP only the last one
all-reduces), so 1 GPU x k micro-batches and k GPUs x 1 give the same update. Per step: the losses
(decoder mel MSE + postnet mel MSE + gate BCE, :func:`tts_pipeline.models.tacotron2.tacotron2_loss`)
are reduced over processes and checked for NaN/Inf before the update, gradients are unscaled (fp16)
and clipped to the global norm ``tacotron2.grad_clip``, then Adam (``weight_decay`` as L2, as
``torch.optim.Adam``) steps.

The learning rate is a function of the epoch alone (:func:`annealed_rate`), as NVIDIA's
``adjust_learning_rate``, so a resumed run needs no scheduler state; so are the guided-attention
weight (:func:`guided_attention_weight`) and the alignment prior's (:func:`attention_prior_weight`).
Validation (teacher-forced, eval mode; the prenet keeps its dropout, as NVIDIA's) runs before training, every
``validation_every_n_epochs`` epochs, at the last epoch and when training stops. Checkpoints hold
model, optimiser, scaler, counters, history and RNG states (:class:`tts_pipeline.training.loop.EpochLoop`).

Batches are random, as NVIDIA's; with ``length_bucketing`` each global batch holds utterances of
similar mel length (:class:`tts_pipeline.training.distributed.LengthBuckets`), which matters more than
for FastPitch: the decoder runs one step per frame of the batch's longest mel.

Modules: :mod:`.state` (model, optimiser, schedule, resume hash), :mod:`.step` (one optimiser step and
its loss terms), :mod:`.loop` (:func:`fit`, the entry, and the epoch hooks). The step, the validation and
the epoch loop are the ones FastPitch shares, :mod:`tts_pipeline.training.teacher_forced`.
"""

from tts_pipeline.training.tacotron2.loop import fit
from tts_pipeline.training.tacotron2.state import (
    RESUME_NEUTRAL_KEYS,
    Tacotron2State,
    annealed_rate,
    attention_prior_weight,
    build_state,
    guided_attention_weight,
    mean_frames_per_symbol,
    model_config,
    resume_hash,
)
from tts_pipeline.training.tacotron2.step import LOSS_NAMES, Runtime, train_step

__all__ = [
    "LOSS_NAMES",
    "RESUME_NEUTRAL_KEYS",
    "Runtime",
    "Tacotron2State",
    "annealed_rate",
    "attention_prior_weight",
    "build_state",
    "fit",
    "guided_attention_weight",
    "mean_frames_per_symbol",
    "model_config",
    "resume_hash",
    "train_step",
]
