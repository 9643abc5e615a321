"""FastPitch training (reference 3.4-3.8): teacher-forced steps with gradient accumulation, DDP, AMP,
the Noam schedule, validation with plots and resumable checkpoints (the model file is
:mod:`tts_pipeline.models.fastpitch.model_file`).

One optimiser step covers ``global_batch_size`` utterances: ``k = global / (processes x batch_size)``
micro-batches per process (:func:`tts_pipeline.training.engine.accumulation_steps`), each
backpropagating ``loss / k``; under DDP only the last micro-batch's backward all-reduces (``no_sync``
before it), so 1 GPU x k micro-batches and k GPUs x 1 give the same update.

Per step: learning rate ``fastpitch.learning_rate x noam_scale(step)`` (step from 1: 3.16e-6 at step 1
and the 3.16e-3 peak at step 1000 for the recipe's 0.1 and 1000 warm-up steps; NVIDIA skips the counter
on the last batch of each epoch, reference 9.13, which is not reproduced here), the losses reduced over
processes and checked for NaN/Inf *before* the update (a diverged step never reaches the weights or a
checkpoint), gradients unscaled (fp16) and clipped to the global norm ``fastpitch.grad_clip``, then the
optimiser (:mod:`tts_pipeline.training.optimizers`: LAMB set up as apex's FusedLAMB, or AdamW).

Validation (teacher-forced, eval mode: dropout off) runs before training, every
``validation_every_n_epochs`` epochs, at the last epoch and when training stops; its losses are means
over the validation utterances, and the first ``n_plots`` utterances are plotted to MLflow (mel, per-token
pitch in Hz and durations, predicted against target). Throughput is real mel frames per second (padding
excluded) summed over processes, as NVIDIA's ``train_frames/s``.

Batches are random, as NVIDIA's; with ``length_bucketing`` each global batch holds utterances of
similar mel length (:class:`tts_pipeline.training.distributed.LengthBuckets`, pools of ``bucket_pool``
global batches sorted by length), which pads less, so more real frames train per second. The mel loss
is a mean over each micro-batch's frames, so bucketing also weighs a frame of a short-utterance batch
more than one of a long-utterance batch.

Checkpoints (every ``checkpoint_every_n_epochs`` epochs and when training stops) hold the model,
optimiser and scaler, the counters, the history and the RNG states; a resumed run continues at the
next batch of the same epoch order, in the same MLflow run. The step, the validation losses and the
epoch loop are the ones Tacotron 2 shares (:mod:`tts_pipeline.training.teacher_forced`, on the shared
:class:`tts_pipeline.training.loop.EpochLoop`).

Warm start (``fastpitch.init_from``): a new run whose weights start from a trained model's file (checked
against the config), with a fresh optimiser and step counter, ``fastpitch.freeze`` parts left as the file
has them, and the pitch buffers set to this corpus's statistics.

Modules: :mod:`.loop` (:func:`fit`, the entry, and the epoch hooks), :mod:`.state` (model, optimiser,
Noam rate, resume hash), :mod:`.step` (one optimiser step, its loss terms), :mod:`.validation` (plots),
:mod:`.warm_start` (the file a warm start begins from: read, checked, loaded).
"""

from tts_pipeline.training.fastpitch.loop import fit
from tts_pipeline.training.fastpitch.state import (
    RESUME_NEUTRAL_KEYS,
    FastPitchState,
    build_state,
    resume_hash,
    set_step_learning_rate,
)
from tts_pipeline.training.fastpitch.step import Runtime, loss_names, train_step
from tts_pipeline.training.fastpitch.validation import log_plots

__all__ = [
    "RESUME_NEUTRAL_KEYS",
    "FastPitchState",
    "Runtime",
    "build_state",
    "fit",
    "log_plots",
    "loss_names",
    "resume_hash",
    "set_step_learning_rate",
    "train_step",
]
