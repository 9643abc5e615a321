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
"""

from __future__ import annotations

import contextlib
import logging
import tempfile
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset, Subset

from tts_pipeline.audio import MelSpectrogram, load_wav
from tts_pipeline.config import AudioConfig, HiFiGANConfig, config_hash
from tts_pipeline.errors import UserError
from tts_pipeline.models.hifigan import (
    Discriminators,
    Generator,
    MultiPeriodDiscriminator,
    MultiScaleDiscriminator,
    discriminator_loss,
    generator_losses,
    mel_loss,
    multi_resolution_stft_loss,
    split_output,
)
from tts_pipeline.models.model_file import load_model_file
from tts_pipeline.precision import Precision, resolve_precision
from tts_pipeline.training.checkpoint import (
    CHECKPOINT_FORMAT,
    Checkpoint,
    CheckpointManager,
    load_checkpoint,
    restore_rng_state,
)
from tts_pipeline.training.distributed import DistributedContext
from tts_pipeline.training.engine import (
    ArtifactSink,
    check_finite,
    learning_rate,
    make_loader,
    nvidia_frames_per_s,
    scale_learning_rate,
)
from tts_pipeline.training.loop import LOOP_RESUME_NEUTRAL_KEYS, EpochLoop, StepReport

log = logging.getLogger(__name__)

STAGE = "train_hifigan"
# What besides the loop's settings leaves the weights' trajectory alone: validation and samples.
RESUME_NEUTRAL_KEYS = (*LOOP_RESUME_NEUTRAL_KEYS, "validation_repeats", "samples_every_n_epochs", "n_samples")
DIVERGED_HINT = "Try a lower hifigan.learning_rate, or amp: off / bf16 instead of fp16."
LOSS_NAMES = ("loss_discrim", "loss_gen", "loss_mel", "loss_adv", "loss_fm", "loss_stft")


def resume_hash(
    hifigan: Mapping[str, Any],
    audio: Mapping[str, Any],
    *,
    init_from: str | Path | None = None,
    mels_dir: str | Path | None = None,
) -> str:
    """Hash of everything that shapes the weights' trajectory; checkpoints of another hash are not resumed."""
    trajectory = {key: value for key, value in hifigan.items() if key not in RESUME_NEUTRAL_KEYS}
    payload = {
        "hifigan": trajectory,
        "audio": dict(audio),
        "init_from": str(init_from) if init_from is not None else None,
        "mels_dir": str(mels_dir) if mels_dir is not None else None,
    }
    return config_hash(payload)


# --------------------------------------------------------------------------------------------------
# models and state
# --------------------------------------------------------------------------------------------------


def build_models(cfg: HiFiGANConfig, n_mels: int, device: torch.device) -> tuple[Generator, Discriminators]:
    """Fresh generator and discriminators, initialised from ``cfg.seed`` (the same on every rank)."""
    torch.manual_seed(cfg.seed)
    generator = Generator(cfg, n_mels).to(device)
    discriminators = Discriminators(
        MultiPeriodDiscriminator(cfg.mpd_periods, cfg.discriminator_channels_scale),
        MultiScaleDiscriminator(cfg.discriminator_channels_scale),
    ).to(device)
    return generator, discriminators


@dataclass
class HiFiGANState:
    """Everything a step changes, and what a checkpoint stores.

    Attributes:
        step: Optimiser steps done.
        epoch: Current epoch, from 1.
        batch_in_epoch: Optimiser steps of ``epoch`` already done.
        history: One dict per finished epoch (and one for the validation before training, epoch 0).
    """

    generator: Generator
    discriminators: Discriminators
    optim_g: torch.optim.AdamW
    optim_d: torch.optim.AdamW
    scaler_g: torch.amp.GradScaler
    scaler_d: torch.amp.GradScaler
    sched_g: torch.optim.lr_scheduler.ExponentialLR | None = None
    sched_d: torch.optim.lr_scheduler.ExponentialLR | None = None
    step: int = 0
    epoch: int = 1
    batch_in_epoch: int = 0
    history: list[dict[str, float]] = field(default_factory=list)

    def make_schedulers(self, gamma: float) -> None:
        """(Re)create the per-epoch ExponentialLR schedulers from the optimisers' current lr."""
        self.sched_g = torch.optim.lr_scheduler.ExponentialLR(self.optim_g, gamma=gamma)
        self.sched_d = torch.optim.lr_scheduler.ExponentialLR(self.optim_d, gamma=gamma)

    def states(self) -> dict[str, Any]:
        """Named objects for :meth:`CheckpointManager.save`."""
        assert self.sched_g is not None and self.sched_d is not None
        return {
            "generator": self.generator,
            "mpd": self.discriminators.mpd,
            "msd": self.discriminators.msd,
            "optim_g": self.optim_g,
            "optim_d": self.optim_d,
            "scaler_g": self.scaler_g,
            "scaler_d": self.scaler_d,
            "sched_g": self.sched_g,
            "sched_d": self.sched_d,
        }


def build_state(cfg: HiFiGANConfig, n_mels: int, precision: Precision) -> HiFiGANState:
    """Fresh models, one AdamW for G and one for MPD + MSD together, two gradient scalers, schedulers."""
    generator, discriminators = build_models(cfg, n_mels, precision.device)
    options = {"lr": cfg.learning_rate, "betas": tuple(cfg.adam_betas), "weight_decay": cfg.weight_decay}
    state = HiFiGANState(
        generator=generator,
        discriminators=discriminators,
        optim_g=torch.optim.AdamW(generator.parameters(), **options),
        optim_d=torch.optim.AdamW(discriminators.parameters(), **options),
        scaler_g=precision.grad_scaler(),
        scaler_d=precision.grad_scaler(),
    )
    state.make_schedulers(cfg.lr_decay)
    return state


def restore_state(state: HiFiGANState, checkpoint: Checkpoint, *, restore_rng: bool = True) -> None:
    """Load a checkpoint of this trainer into ``state`` (weights, optimisers, scalers, schedulers, counters)."""
    states = checkpoint.states
    state.generator.load_state_dict(states["generator"])
    state.discriminators.mpd.load_state_dict(states["mpd"])
    state.discriminators.msd.load_state_dict(states["msd"])
    state.optim_g.load_state_dict(states["optim_g"])
    state.optim_d.load_state_dict(states["optim_d"])
    for name in ("scaler_g", "scaler_d"):
        if states.get(name):  # a disabled scaler saves an empty dict
            getattr(state, name).load_state_dict(states[name])
    assert state.sched_g is not None and state.sched_d is not None
    state.sched_g.load_state_dict(states["sched_g"])
    state.sched_d.load_state_dict(states["sched_d"])
    state.step = checkpoint.step
    state.epoch = checkpoint.epoch
    state.batch_in_epoch = int(checkpoint.extra.get("batch_in_epoch", 0))
    state.history = list(checkpoint.extra.get("history", []))
    if restore_rng:
        restore_rng_state(checkpoint.rng)


def save_state(
    manager: CheckpointManager, state: HiFiGANState, run_id: str | None, extra: Mapping[str, Any] | None = None
) -> Path:
    return manager.save(
        state.step,
        state.epoch,
        state.states(),
        run_id=run_id,
        extra={
            "batch_in_epoch": state.batch_in_epoch,
            "history": state.history,
            "generator_config": state.generator.model_config(),
            **(extra or {}),
        },
    )


# --------------------------------------------------------------------------------------------------
# fine-tuning initialisation
# --------------------------------------------------------------------------------------------------


@dataclass
class InitWeights:
    """Weights to start fine-tuning from (a checkpoint of this trainer, or a model file).

    Attributes:
        path: The file they came from.
        generator: Generator state dict.
        generator_config: Its ``model_config()``, when the file records it.
        mpd, msd: Discriminator state dicts (checkpoints only).
        optim_g, optim_d: Optimiser states (checkpoints only; their lr is the source's current lr).
        learning_rate: The source's generator lr, when known without optimiser states.
        step: The source's step.
    """

    path: Path
    generator: dict[str, torch.Tensor]
    generator_config: dict[str, Any] | None = None
    mpd: dict[str, Any] | None = None
    msd: dict[str, Any] | None = None
    optim_g: dict[str, Any] | None = None
    optim_d: dict[str, Any] | None = None
    learning_rate: float | None = None
    step: int = 0


def load_init(path: str | Path) -> InitWeights:
    """Read what fine-tuning starts from: a checkpoint file, a checkpoint folder (its newest loadable
    ``step-*.pt``) or a model file (generator only). Raises UserError naming the path."""
    path = Path(path)
    if path.is_dir():
        candidates = sorted(path.glob("step-*.pt"))
        for candidate in reversed(candidates):
            try:
                return _init_from_checkpoint(load_checkpoint(candidate))
            except Exception as error:
                log.warning("checkpoint %s does not load (%s); trying the previous one", candidate, error)
        raise UserError(f"--init-from {path}: no loadable checkpoint (step-*.pt) in the folder")
    if not path.is_file():
        raise UserError(f"--init-from {path}: no such file or folder")
    payload = torch.load(path, map_location="cpu", weights_only=True)
    if isinstance(payload, dict) and payload.get("format") == CHECKPOINT_FORMAT and "states" in payload:
        return _init_from_checkpoint(load_checkpoint(path))
    model = load_model_file(path)
    return InitWeights(
        path=path,
        generator=model.state_dict,
        generator_config=model.model_config,
        learning_rate=model.extra.get("learning_rate"),
        step=model.step,
    )


def _init_from_checkpoint(checkpoint: Checkpoint) -> InitWeights:
    states = checkpoint.states
    if "generator" not in states:
        raise UserError(f"{checkpoint.path}: not a HiFi-GAN checkpoint (no generator)")
    return InitWeights(
        path=checkpoint.path,
        generator=states["generator"],
        generator_config=checkpoint.extra.get("generator_config"),
        mpd=states.get("mpd"),
        msd=states.get("msd"),
        optim_g=states.get("optim_g"),
        optim_d=states.get("optim_d"),
        step=checkpoint.step,
    )


def apply_init(state: HiFiGANState, init: InitWeights, cfg: HiFiGANConfig) -> None:
    """Start fine-tuning from ``init``: its weights (discriminators when present, fresh otherwise),
    its optimiser states when present, and the learning rate multiplied once by ``fine_tune_lr_factor``.

    Without optimiser states the starting lr is the source's (model-file record) or ``learning_rate``,
    times the factor.
    """
    expected = state.generator.model_config()
    if init.generator_config is not None and dict(init.generator_config) != expected:
        raise UserError(
            f"--init-from {init.path}: its generator config {init.generator_config} differs from the hifigan "
            f"section's {expected}"
        )
    try:
        state.generator.load_state_dict(init.generator)
    except RuntimeError as error:
        raise UserError(f"--init-from {init.path}: generator weights do not fit ({error})") from None
    with_discriminators = init.mpd is not None and init.msd is not None
    if with_discriminators:
        try:
            state.discriminators.mpd.load_state_dict(init.mpd)
            state.discriminators.msd.load_state_dict(init.msd)
        except RuntimeError as error:
            raise UserError(f"--init-from {init.path}: discriminator weights do not fit ({error})") from None
    else:
        log.warning("--init-from %s has no discriminators; they start from scratch", init.path)
    base_lr = init.learning_rate if init.learning_rate is not None else cfg.learning_rate
    if init.optim_g is not None:
        state.optim_g.load_state_dict(init.optim_g)
    else:
        _set_learning_rate(state.optim_g, base_lr)
    if with_discriminators and init.optim_d is not None:
        state.optim_d.load_state_dict(init.optim_d)
    else:
        _set_learning_rate(state.optim_d, learning_rate(state.optim_g))
    scale_learning_rate(state.optim_g, cfg.fine_tune_lr_factor)
    scale_learning_rate(state.optim_d, cfg.fine_tune_lr_factor)
    state.make_schedulers(cfg.lr_decay)
    log.info(
        "fine-tuning from %s (step %s): lr %.3g (x%g)",
        init.path,
        init.step,
        learning_rate(state.optim_g),
        cfg.fine_tune_lr_factor,
    )


def _set_learning_rate(optimizer: torch.optim.Optimizer, value: float) -> None:
    for group in optimizer.param_groups:
        group["lr"] = value


# --------------------------------------------------------------------------------------------------
# one optimiser step
# --------------------------------------------------------------------------------------------------


@dataclass
class MicroBatch:
    """One micro-batch on the device.

    Attributes:
        audio: ``(B, segment_size)`` real audio.
        mel: ``(B, n_mels, segment_size / hop)`` generator input.
        loss_mel: ``(B, n_mels, segment_size / hop)`` loss mel of the real audio (fp32).
    """

    audio: torch.Tensor
    mel: torch.Tensor
    loss_mel: torch.Tensor

    @property
    def size(self) -> int:
        return int(self.audio.shape[0])


@dataclass
class Runtime:
    """What a step needs besides the state: wrapped models, precision, mel functions, processes."""

    context: DistributedContext
    precision: Precision
    generator: nn.Module  # the generator, inside DDP when several processes train
    discriminators: nn.Module
    input_mel: MelSpectrogram
    loss_mel: MelSpectrogram
    accumulation: int
    stft_loss_scale: float = 0.0

    def prepare(self, batch: Mapping[str, Any]) -> MicroBatch:
        """A collated batch (``audio`` and, when fine-tuning, ``mel``) moved to the device, with its mels."""
        device = self.context.device
        audio = batch["audio"].to(device, non_blocking=True).float()
        with torch.no_grad():
            mel = batch["mel"].to(device, non_blocking=True).float() if "mel" in batch else self.input_mel(audio)
            loss_mel = self.loss_mel(audio)
        return MicroBatch(audio=audio, mel=mel, loss_mel=loss_mel)


def _no_sync(module: nn.Module, skip_sync: bool) -> contextlib.AbstractContextManager[Any]:
    """DDP's ``no_sync`` when asked and the module is wrapped; nothing otherwise."""
    if skip_sync and hasattr(module, "no_sync"):
        return module.no_sync()
    return contextlib.nullcontext()


def _set_requires_grad(module: nn.Module, flag: bool) -> None:
    for parameter in module.parameters():
        parameter.requires_grad_(flag)


def train_step(
    state: HiFiGANState, runtime: Runtime, micro_batches: Sequence[MicroBatch], *, adversarial: bool = True
) -> dict[str, float]:
    """One optimiser step of D then G over ``micro_batches`` (see the module docstring); with
    ``adversarial`` off (the warm-up before ``discriminator_start_step``), G alone on its spectral losses.

    Returns the step's losses averaged over micro-batches and processes (``LOSS_NAMES``; the
    discriminator terms are 0 in the warm-up); the caller checks them with the NaN guard (every rank
    gets the same values, so every rank stops alike).
    """
    k = len(micro_batches)
    if k == 0:
        raise ValueError("train_step: no micro-batches")
    sums = torch.zeros(len(LOSS_NAMES), dtype=torch.float64, device=runtime.context.device)

    if not adversarial:
        _spectral_phase(state, runtime, micro_batches, sums)
    else:
        with contextlib.ExitStack() as power_iteration:
            kept = _discriminator_phase(state, runtime, micro_batches, sums, power_iteration)
            _generator_phase(state, runtime, micro_batches, sums, kept)

    totals = runtime.context.all_reduce_sum(sums).tolist()
    scale = 1.0 / (k * runtime.context.world_size)
    return {name: value * scale for name, value in zip(LOSS_NAMES, totals, strict=True)}


def _discriminator_phase(
    state: HiFiGANState,
    runtime: Runtime,
    micro_batches: Sequence[MicroBatch],
    sums: torch.Tensor,
    power_iteration: contextlib.ExitStack,
) -> torch.Tensor:
    """D's update; returns the generator's output of the last micro-batch, with autograd."""
    k = len(micro_batches)
    autocast = runtime.precision.autocast
    g_ddp, d_ddp = runtime.generator, runtime.discriminators
    state.optim_d.zero_grad(set_to_none=True)
    kept: torch.Tensor | None = None
    for index, batch in enumerate(micro_batches):
        last = index == k - 1
        if last:
            # Kept with autograd for the generator phase. With k > 1 its backward must not all-reduce:
            # the generator phase's final backward (of micro-batch 0) does that for all of them.
            with _no_sync(g_ddp, k > 1), autocast():
                fake = g_ddp(batch.mel)
            kept = fake
        else:
            with torch.no_grad(), autocast():
                fake = state.generator(batch.mel)
        with _no_sync(d_ddp, not last), autocast():
            verdict = d_ddp(torch.cat([batch.audio.unsqueeze(1), fake.detach().to(batch.audio.dtype)], dim=0))
            loss_d = torch.zeros((), device=batch.audio.device)
            for family in verdict:
                real, generated = split_output(family, batch.size)
                loss_d = loss_d + discriminator_loss(real, generated)
        if index == 0:
            # One power iteration per optimiser step (SN-GAN's rule), on the first call only: the
            # number of discriminator calls grows with k, and the update must not depend on k.
            power_iteration.enter_context(_spectral_norm_frozen(state.discriminators))
        state.scaler_d.scale(loss_d / k).backward()
        sums[0] += loss_d.detach().double()
    state.scaler_d.step(state.optim_d)
    state.scaler_d.update()
    assert kept is not None
    return kept


def _generator_phase(
    state: HiFiGANState, runtime: Runtime, micro_batches: Sequence[MicroBatch], sums: torch.Tensor, kept: torch.Tensor
) -> None:
    """G's update, discriminators frozen, micro-batches in reverse (the last reuses its output)."""
    k = len(micro_batches)
    autocast = runtime.precision.autocast
    g_ddp, discriminators = runtime.generator, state.discriminators
    state.optim_g.zero_grad(set_to_none=True)
    _set_requires_grad(discriminators, False)
    try:
        for order, index in enumerate(reversed(range(k))):
            batch = micro_batches[index]
            final = order == k - 1
            with _no_sync(g_ddp, not final):
                if index == k - 1:
                    fake = kept
                else:
                    with autocast():
                        fake = g_ddp(batch.mel)
                fake_mel = runtime.loss_mel(fake.squeeze(1).float())
                with autocast():
                    fake_verdict = discriminators(fake)
                    with torch.no_grad():
                        real_verdict = discriminators(batch.audio.unsqueeze(1))
                    losses = generator_losses(list(real_verdict), list(fake_verdict), batch.loss_mel, fake_mel)
                stft = _stft_term(runtime, batch, fake)
                total = losses.total + runtime.stft_loss_scale * stft
                state.scaler_g.scale(total / k).backward()
            sums[1] += total.detach().double()
            sums[2] += losses.mel.detach().double()
            sums[3] += losses.adversarial.detach().double()
            sums[4] += losses.feature_matching.detach().double()
            sums[5] += stft.detach().double()
    finally:
        _set_requires_grad(discriminators, True)
    state.scaler_g.step(state.optim_g)
    state.scaler_g.update()


def _stft_term(runtime: Runtime, batch: MicroBatch, fake: torch.Tensor) -> torch.Tensor:
    """The multi-resolution STFT loss of ``(B, 1, N)`` ``fake`` (unscaled); 0 without cost when its scale is 0."""
    if runtime.stft_loss_scale == 0:
        return fake.new_zeros((), dtype=torch.float)
    return multi_resolution_stft_loss(batch.audio, fake.squeeze(1))


def _spectral_phase(
    state: HiFiGANState, runtime: Runtime, micro_batches: Sequence[MicroBatch], sums: torch.Tensor
) -> None:
    """G's warm-up update: ``45 x mel L1 + stft_loss_scale x STFT loss`` per micro-batch, no discriminator
    call at all (so a warm-up step costs the generator's forward and backward only)."""
    k = len(micro_batches)
    autocast = runtime.precision.autocast
    g_ddp = runtime.generator
    state.optim_g.zero_grad(set_to_none=True)
    for index, batch in enumerate(micro_batches):
        with _no_sync(g_ddp, index < k - 1):
            with autocast():
                fake = g_ddp(batch.mel)
            mel = mel_loss(batch.loss_mel, runtime.loss_mel(fake.squeeze(1).float()))
            stft = _stft_term(runtime, batch, fake)
            total = mel + runtime.stft_loss_scale * stft
            state.scaler_g.scale(total / k).backward()
        sums[1] += total.detach().double()
        sums[2] += mel.detach().double()
        sums[5] += stft.detach().double()
    state.scaler_g.step(state.optim_g)
    state.scaler_g.update()


@contextlib.contextmanager
def _spectral_norm_frozen(module: nn.Module) -> Iterator[None]:
    """Spectral norms of ``module`` use their stored singular vectors (no power iteration) in the block."""
    norms = [m for m in module.modules() if hasattr(m, "n_power_iterations") and hasattr(m, "_u")]
    modes = [m.training for m in norms]
    for norm in norms:
        norm.train(False)
    try:
        yield
    finally:
        for norm, mode in zip(norms, modes, strict=True):
            norm.train(mode)


# --------------------------------------------------------------------------------------------------
# validation and samples
# --------------------------------------------------------------------------------------------------


@torch.no_grad()
def evaluate(state: HiFiGANState, runtime: Runtime, loader: DataLoader) -> dict[str, float]:
    """Validation losses on the fixed segments (each rank its shard, averaged over all items):
    ``val_loss_mel`` (45 x L1), ``val_loss_discrim``, ``val_loss_gen``. Models in eval mode, so the
    spectral norm's power iteration does not move and validation leaves training untouched."""
    generator, discriminators = state.generator, state.discriminators
    modes = generator.training, discriminators.training
    generator.eval()
    discriminators.eval()
    sums = [0.0, 0.0, 0.0, 0.0]  # mel, discrim, gen, items
    autocast = runtime.precision.autocast
    for raw in loader:
        batch = runtime.prepare(raw)
        with autocast():
            fake = generator(batch.mel)
        fake_mel = runtime.loss_mel(fake.squeeze(1).float())
        with autocast():
            verdict = discriminators(torch.cat([batch.audio.unsqueeze(1), fake.to(batch.audio.dtype)], dim=0))
            pairs = [split_output(family, batch.size) for family in verdict]
            loss_d = sum(float(discriminator_loss(real, generated)) for real, generated in pairs)
            losses = generator_losses([r for r, _ in pairs], [g for _, g in pairs], batch.loss_mel, fake_mel)
        sums[0] += float(losses.mel) * batch.size
        sums[1] += loss_d * batch.size
        sums[2] += float(losses.total) * batch.size
        sums[3] += batch.size
    generator.train(modes[0])
    discriminators.train(modes[1])
    mel, discrim, gen, items = runtime.context.sum_floats(sums)
    if not items:
        return {}
    return {"val_loss_mel": mel / items, "val_loss_discrim": discrim / items, "val_loss_gen": gen / items}


@dataclass
class SampleClip:
    """A whole validation utterance for listening: ``audio`` float32 ``(N,)``, ``mel`` ``(n_mels, N // hop)``."""

    id: str
    audio: np.ndarray
    mel: torch.Tensor


def load_sample_clips(
    records: Sequence[Mapping[str, Any]], audio_cfg: AudioConfig, count: int, mels_dir: Path | None = None
) -> list[SampleClip]:
    """The first ``count`` utterances of ``records`` with their generator input mels (computed by the
    one mel function, or read from ``mels_dir`` when fine-tuning)."""
    mel_fn = MelSpectrogram(audio_cfg)
    clips = []
    for record in list(records)[:count]:
        audio = load_wav(record["wav"], audio_cfg.sampling_rate, audio_cfg.max_wav_value)
        if mels_dir is not None:
            mel = torch.from_numpy(np.load(Path(mels_dir) / f"{record['id']}.npy").astype(np.float32))
        else:
            mel = mel_fn(torch.from_numpy(audio))
        clips.append(SampleClip(id=str(record["id"]), audio=audio, mel=mel))
    return clips


@torch.no_grad()
def log_samples(
    generator: Generator,
    clips: Sequence[SampleClip],
    audio_cfg: AudioConfig,
    sink: ArtifactSink,
    epoch: int,
    *,
    with_ground_truth: bool,
) -> None:
    """Synthesise each clip whole (batch 1, eval mode) and log the WAV and a mel-spectrogram PNG
    (generated over ground truth) under ``samples/epoch_<E>/``; the ground-truth WAVs once under
    ``samples/ground_truth/``."""
    import soundfile as sf

    from tts_pipeline import plots

    device = next(generator.parameters()).device
    mel_fn = MelSpectrogram(audio_cfg)
    was_training = generator.training
    generator.eval()
    frame_period = audio_cfg.hop_length / audio_cfg.sampling_rate
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for clip in clips:
            audio = generator(clip.mel.unsqueeze(0).to(device)).squeeze().float().cpu()
            wav = folder / f"{clip.id}.wav"
            sf.write(wav, audio.numpy(), audio_cfg.sampling_rate, subtype="PCM_16")
            sink.log_artifact(wav, f"samples/epoch_{epoch:05d}")
            figure = plots.mel_comparison(
                clip.mel.numpy(), mel_fn(audio).numpy(), frame_period, title=f"{clip.id}, epoch {epoch}"
            )
            sink.log_artifact(plots.save_figure(figure, folder / f"{clip.id}.png"), f"samples/epoch_{epoch:05d}")
            if with_ground_truth:
                truth = folder / "ground_truth" / f"{clip.id}.wav"
                truth.parent.mkdir(exist_ok=True)
                sf.write(truth, clip.audio, audio_cfg.sampling_rate, subtype="PCM_16")
                sink.log_artifact(truth, "samples/ground_truth")
    generator.train(was_training)


# --------------------------------------------------------------------------------------------------
# the loop
# --------------------------------------------------------------------------------------------------


@dataclass
class TrainingResult:
    """The trained generator and the figures that go into ``metrics.json``."""

    generator: Generator
    step: int
    epoch: int
    learning_rate: float
    metrics: dict[str, Any]


def train_hifigan(
    cfg: HiFiGANConfig,
    audio_cfg: AudioConfig,
    train_set: Dataset[Any],
    val_set: Dataset[Any] | None,
    *,
    manager: CheckpointManager,
    context: DistributedContext | None = None,
    checkpoint: Checkpoint | None = None,
    init: InitWeights | None = None,
    sink: ArtifactSink | None = None,
    run_id: str | None = None,
    log_every: int = 50,
    sample_clips: Sequence[SampleClip] = (),
    on_checkpoint: Callable[[HiFiGANState], None] | None = None,
) -> TrainingResult:
    """Train (or continue) HiFi-GAN until ``cfg.epochs`` epochs or ``cfg.max_steps`` steps.

    Args:
        cfg, audio_cfg: The ``hifigan`` and ``audio`` sections.
        train_set: Items ``{"audio": (segment_size,)}`` (base) or with ``"mel"`` too (fine-tuning).
        val_set: Fixed validation segments, same item kind; validated before training (fresh runs),
            every ``validation_every_n_epochs`` epochs and at the end.
        manager: Where checkpoints go (written by rank 0).
        context: Processes and device; default a single process on the CPU.
        checkpoint: Resume from it (``manager.latest()``), or None.
        init: Fine-tune from these weights (ignored when resuming: the run's own checkpoint wins).
        sink: Tracking run (rank 0): train losses every ``log_every`` steps, validation losses,
            audio samples of ``sample_clips`` every ``samples_every_n_epochs`` epochs.
        run_id: MLflow run id stored in checkpoints, so that a resumed job reopens the same run.
        on_checkpoint: Called after every checkpoint is written (tests use it to interrupt).

    Returns:
        :class:`TrainingResult`; ``metrics`` holds what ``metrics.json`` reports (step, epoch, start
        and final validation losses, throughput, per-epoch history).
    """
    loop = _Loop(
        cfg,
        audio_cfg,
        train_set,
        val_set,
        manager=manager,
        context=context or DistributedContext(),
        sink=sink,
        run_id=run_id,
        log_every=log_every,
        sample_clips=sample_clips,
        init=init,
        on_checkpoint=on_checkpoint,
    )
    loop.run(checkpoint)
    return loop.result()


class _Loop(EpochLoop):
    """HiFi-GAN's step, validation, samples and checkpoints on the shared epoch loop;
    :func:`train_hifigan` is the public entry."""

    train_key = "train_loss_gen"
    val_key = "val_loss_mel"
    state: HiFiGANState

    def __init__(
        self,
        cfg: HiFiGANConfig,
        audio_cfg: AudioConfig,
        train_set: Dataset[Any],
        val_set: Dataset[Any] | None,
        *,
        manager: CheckpointManager,
        context: DistributedContext,
        sink: ArtifactSink | None,
        run_id: str | None,
        log_every: int,
        sample_clips: Sequence[SampleClip],
        init: InitWeights | None,
        on_checkpoint: Callable[[HiFiGANState], None] | None,
    ) -> None:
        super().__init__(
            cfg,
            "hifigan",
            train_set,
            context=context,
            manager=manager,
            sink=sink,
            run_id=run_id,
            log_every=log_every,
            on_checkpoint=on_checkpoint,
        )
        self.hifigan, self.audio_cfg, self.val_set = cfg, audio_cfg, val_set
        self.sample_clips, self.init = sample_clips, init
        device = context.device
        self.precision = resolve_precision(cfg.amp, device, key="hifigan.amp")
        if device.type == "cuda":
            torch.backends.cudnn.benchmark = True  # fixed segment shapes: let cuDNN pick its fastest kernels
        self.state = build_state(cfg, audio_cfg.n_mel_channels, self.precision)
        # Wrapping before a checkpoint or fine-tuning weights are loaded is fine: every rank loads
        # the same file into the wrapped modules.
        self.runtime = Runtime(
            context=context,
            precision=self.precision,
            generator=context.wrap(self.state.generator),
            discriminators=context.wrap(self.state.discriminators),
            input_mel=MelSpectrogram(audio_cfg),
            loss_mel=MelSpectrogram.for_loss(audio_cfg),
            accumulation=self.k,
            stft_loss_scale=cfg.stft_loss_scale,
        )
        self.frames_per_item = cfg.segment_size // audio_cfg.hop_length
        self.val_loader = None
        if val_set is not None and len(val_set):
            # Its own generator: iterating it must not draw from the global RNG that training crops use.
            shard = Subset(val_set, context.shard(len(val_set)))
            self.val_loader = make_loader(
                shard, cfg.batch_size, min(cfg.num_workers, 1), device, generator=torch.Generator()
            )
        self.fine_tuned_from: str | None = None

    # -- hooks of the epoch loop -------------------------------------------------------------------

    def restore(self, checkpoint: Checkpoint) -> None:
        restore_state(self.state, checkpoint, restore_rng=self.context.is_main)
        self.fine_tuned_from = checkpoint.extra.get("fine_tuned_from")

    def on_fresh_start(self) -> None:
        if self.init is not None:
            apply_init(self.state, self.init, self.hifigan)
            self.fine_tuned_from = str(self.init.path)

    def validate(self, epoch: int) -> dict[str, float]:
        if self.val_loader is None:
            return {}
        figures = evaluate(self.state, self.runtime, self.val_loader)
        if figures and self.sink is not None:
            self.sink.log_metrics(figures, step=self.state.step)
        return figures

    def save_checkpoint(self) -> None:
        extra = {"world_size": self.context.world_size, "accumulation": self.k, "fine_tuned_from": self.fine_tuned_from}
        save_state(self.manager, self.state, self.run_id, extra)

    def begin_epoch(self, epoch: int) -> None:
        if hasattr(self.train_set, "set_epoch"):
            self.train_set.set_epoch(epoch)
        self.state.generator.train()
        self.state.discriminators.train()

    def train_step(self, batches: Sequence[Any]) -> StepReport:
        state = self.state
        micro_batches = [self.runtime.prepare(batch) for batch in batches]
        losses = train_step(state, self.runtime, micro_batches, adversarial=self.adversarial)
        check_finite(
            losses,
            stage=STAGE,
            step=state.step + 1,
            epoch=state.epoch,
            checkpoints=self.manager.paths(),
            hint=DIVERGED_HINT,
        )
        items = sum(batch.size for batch in micro_batches)
        return StepReport(figures=losses, frames=items * self.frames_per_item, items=items)

    @property
    def adversarial(self) -> bool:
        """Whether the next step trains the discriminators too: always when fine-tuning, in base
        training from ``discriminator_start_step`` on (the generator's warm-up comes first)."""
        return self.fine_tuned_from is not None or self.state.step >= self.hifigan.discriminator_start_step

    def window_figures(self) -> dict[str, float]:
        return {"lr_gen": learning_rate(self.state.optim_g), "lr_discrim": learning_rate(self.state.optim_d)}

    def epoch_figures(self, epoch: int, figures: dict[str, float]) -> None:
        if self._samples_due(epoch):
            first_time = not any(entry.get("samples") for entry in self.state.history)
            assert self.sink is not None
            log_samples(
                self.state.generator,
                self.sample_clips,
                self.audio_cfg,
                self.sink,  # type: ignore[arg-type]
                epoch,
                with_ground_truth=first_time,
            )
            figures["samples"] = 1.0

    def end_epoch(self) -> None:
        assert self.state.sched_g is not None and self.state.sched_d is not None
        self.state.sched_g.step()
        with warnings.catch_warnings():
            # In the generator's warm-up the discriminators' optimiser has not stepped yet; decaying its
            # lr anyway keeps both rates equal when they join, which is what torch warns about here.
            warnings.filterwarnings("ignore", message="Detected call of `lr_scheduler", category=UserWarning)
            self.state.sched_d.step()

    def describe(self, figures: Mapping[str, float]) -> str:
        if "train_loss_gen" not in figures:
            return f"val mel loss {figures['val_loss_mel']:.3f}"
        val_text = f", val mel loss {figures['val_loss_mel']:.3f}" if "val_loss_mel" in figures else ""
        return (
            f"d loss {figures.get('train_loss_discrim', float('nan')):.3f}, "
            f"g loss {figures['train_loss_gen']:.3f}, mel loss {figures.get('train_loss_mel', float('nan')):.3f}, "
            f"{figures.get('frames_per_s', 0.0):.0f} frames/s{val_text}"
        )

    def _samples_due(self, epoch: int) -> bool:
        cfg = self.hifigan
        return (
            self.sink is not None
            and getattr(self.sink, "active", False)
            and bool(self.sample_clips)
            and cfg.n_samples > 0
            and epoch % cfg.samples_every_n_epochs == 0
        )

    # -- the end -----------------------------------------------------------------------------------

    def result(self) -> TrainingResult:
        """Final checkpoint and validation (unless just done), and the run's figures."""
        state = self.state
        run = self.finish()
        frames_per_s = run.metrics["frames_per_s"]
        metrics = {
            **run.metrics,
            "fine_tuned_from": self.fine_tuned_from,
            "amp": self.precision.amp,
            "n_val": len(self.val_set) if self.val_set is not None else 0,
            "frames_per_s_nvidia_units": (
                nvidia_frames_per_s(frames_per_s, self.audio_cfg.n_mel_channels, self.frames_per_item)
                if frames_per_s is not None
                else None
            ),
            "learning_rate": learning_rate(state.optim_g),
            "val_loss_mel_start": run.first_val.get("val_loss_mel"),
            **run.final_val,
            "history": state.history,
        }
        state.generator.eval()
        return TrainingResult(
            generator=state.generator,
            step=state.step,
            epoch=run.epoch,
            learning_rate=learning_rate(state.optim_g),
            metrics=metrics,
        )
