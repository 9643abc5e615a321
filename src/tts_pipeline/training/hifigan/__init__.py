"""HiFi-GAN training (NVIDIA's recipe, reference 2.5-2.10): GAN step with gradient accumulation, DDP,
AMP, validation, audio samples, resumable checkpoints, and fine-tuning from an earlier model.

One optimiser step covers ``global_batch_size`` items: ``k = global / (processes x batch_size)``
micro-batches per process (:func:`tts_pipeline.training.engine.accumulation_steps`).

1. Discriminators: for each micro-batch, the generator's output (autograd on only for the last
   micro-batch, whose output the generator phase reuses) goes through MPD + MSD, detached, in one
   batch with the real audio; ``loss_D / k`` is backpropagated; one optimiser step after the k-th.
2. Generator: discriminator parameters frozen (``requires_grad`` off), micro-batches in reverse
   order: the last one reuses its output, the others recompute it (the generator is deterministic,
   so the recomputed output is the one the discriminators saw). ``(adv + fm + 45 mel) / k`` is
   backpropagated per micro-batch; one optimiser step.

Warm-up (``discriminator_start_step`` > 0, base training only): before that step, each optimiser step
is the generator alone on ``45 x mel L1 + stft_loss_scale x multi-resolution STFT loss``, with no
discriminator call and no discriminator update; from that step on, the two phases above. Fine-tuning
is adversarial from its first step. ``stft_loss_scale`` also adds the STFT loss to the adversarial
generator objective; both keys at 0 give NVIDIA's objective exactly.

Under DDP only the final backward of each phase all-reduces (``no_sync`` before it), so k
micro-batches on one GPU and k GPUs with one micro-batch each give the same update. For the same
reason MSD's spectral norm runs its power iteration once per optimiser step (on the first
discriminator call; SN-GAN's rule) rather than once per call, a count that grows with k.

The loss mels are computed in fp32 whatever the AMP mode (:class:`tts_pipeline.audio.MelSpectrogram`
turns autocast off). The input mel is computed on the device from the audio segment in base
training, and read from the mels folder (FastPitch's teacher-forced mels) when fine-tuning.

Learning rate: one ExponentialLR per optimiser, stepped once per epoch, so epoch ``e`` (from 1) runs
at ``lr x lr_decay^(e-1)`` as in the recipe. NVIDIA saves a checkpoint *before* that step and
steps on resume; here the epoch-end checkpoint is taken just after it and records the start of the
next epoch (``epoch + 1``, batch 0), which gives the same trajectory with no special case on resume.
Checkpoints are taken every ``checkpoint_every_n_epochs`` epochs and when training stops (possibly
mid-epoch, with ``max_steps``); a resumed run continues at the next batch of the same epoch order.

Modules: :mod:`.loop` (:func:`fit`, the entry, and the epoch hooks), :mod:`.state` (models, optimisers,
checkpoint contents, resume hash), :mod:`.step` (one optimiser step), :mod:`.finetune` (fine-tuning's
starting weights), :mod:`.warm_start` (base training from a trained generator, ``hifigan.init_from``),
:mod:`.validation` and :mod:`.samples` (validation losses, listening samples).
"""

from tts_pipeline.training.hifigan.finetune import InitWeights, apply_init, load_init
from tts_pipeline.training.hifigan.loop import fit
from tts_pipeline.training.hifigan.samples import SampleClip, load_sample_clips, log_samples
from tts_pipeline.training.hifigan.state import (
    RESUME_NEUTRAL_KEYS,
    HiFiGANState,
    build_models,
    build_state,
    resume_hash,
)
from tts_pipeline.training.hifigan.step import LOSS_NAMES, MicroBatch, Runtime, train_step
from tts_pipeline.training.hifigan.validation import evaluate

__all__ = [
    "LOSS_NAMES",
    "RESUME_NEUTRAL_KEYS",
    "HiFiGANState",
    "InitWeights",
    "MicroBatch",
    "Runtime",
    "SampleClip",
    "apply_init",
    "build_models",
    "build_state",
    "evaluate",
    "fit",
    "load_init",
    "load_sample_clips",
    "log_samples",
    "resume_hash",
    "train_step",
]
