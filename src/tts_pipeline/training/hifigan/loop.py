"""HiFi-GAN's training entry, :func:`fit`, and its epoch loop (step, validation, samples, checkpoints on
the vocoder loop it shares with WaveGlow, :class:`tts_pipeline.training.vocoder_loop.VocoderLoop`)."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from torch.utils.data import DataLoader, Dataset

from tts_pipeline.audio import MelSpectrogram
from tts_pipeline.config import AudioConfig, HiFiGANConfig
from tts_pipeline.models.hifigan import Generator
from tts_pipeline.training.checkpoint import Checkpoint
from tts_pipeline.training.engine import check_finite, learning_rate, nvidia_frames_per_s
from tts_pipeline.training.hifigan.finetune import InitWeights, apply_init
from tts_pipeline.training.hifigan.samples import SampleClip, log_samples
from tts_pipeline.training.hifigan.state import HiFiGANState, build_state
from tts_pipeline.training.hifigan.step import Runtime, train_step
from tts_pipeline.training.hifigan.validation import evaluate
from tts_pipeline.training.hifigan.warm_start import apply_warm_start
from tts_pipeline.training.loop import LoopIO, StepReport, TrainingResult
from tts_pipeline.training.vocoder_loop import VocoderLoop

STAGE = "train_hifigan"
DIVERGED_HINT = "Try a lower hifigan.learning_rate, or amp: off / bf16 instead of fp16."


def fit(
    cfg: HiFiGANConfig,
    audio_cfg: AudioConfig,
    train_set: Dataset[Any],
    val_set: Dataset[Any] | None,
    io: LoopIO,
    *,
    init: InitWeights | None = None,
    warm_start: InitWeights | None = None,
    sample_clips: Sequence[SampleClip] = (),
) -> TrainingResult[Generator]:
    """Train (or continue) HiFi-GAN until ``cfg.epochs`` epochs or ``cfg.max_steps`` steps.

    Args:
        cfg, audio_cfg: The ``hifigan`` and ``audio`` sections.
        train_set: Items ``{"audio": (segment_size,)}`` (base) or with ``"mel"`` too (fine-tuning).
        val_set: Fixed validation segments, same item kind; validated before training (fresh runs),
            every ``validation_every_n_epochs`` epochs and at the end.
        io: Processes, checkpoints (and the one to resume from), tracking: its sink (an artifact sink,
            rank 0) gets train losses every ``log_every`` steps, validation losses, audio samples of
            ``sample_clips`` every ``samples_every_n_epochs`` epochs.
        init: Fine-tune from these weights (ignored when resuming: the run's own checkpoint wins).
        warm_start: Base training starts from these weights (``hifigan.init_from``) with fresh optimisers,
            schedulers and counters (ignored when resuming); not with ``init``.

    Where the section's settings go: the loop's (epochs, batches, cadences, seed) to
    :class:`tts_pipeline.training.loop.EpochLoop`; the model, optimiser and ``lr_decay`` settings to
    :func:`build_state`; ``amp`` to the precision, ``stft_loss_scale`` to the step's :class:`Runtime`,
    ``discriminator_start_step`` to :attr:`_Loop.adversarial`; ``fine_tune_lr_factor`` (with
    ``learning_rate`` and ``lr_decay``) to :func:`apply_init` (:meth:`_Loop.train`); the sample settings to
    :meth:`_Loop.epoch_figures`.

    Returns:
        :class:`TrainingResult`; ``metrics`` holds what ``metrics.json`` reports (step, epoch, start
        and final validation losses, throughput, per-epoch history).
    """
    if init is not None and warm_start is not None:
        raise ValueError("fit: init (fine-tuning) and warm_start (base training) exclude each other")
    loop = _Loop(cfg, audio_cfg, train_set, val_set, io, init=init, warm_start=warm_start, sample_clips=sample_clips)
    return loop.train(io.checkpoint)


class _Loop(VocoderLoop):
    """HiFi-GAN's step, validation, samples and checkpoints on the vocoder epoch loop;
    :func:`fit` is the public entry."""

    train_key = "train_loss_gen"
    val_key = "val_loss_mel"
    state: HiFiGANState

    def __init__(
        self,
        cfg: HiFiGANConfig,
        audio_cfg: AudioConfig,
        train_set: Dataset[Any],
        val_set: Dataset[Any] | None,
        io: LoopIO,
        *,
        init: InitWeights | None,
        warm_start: InitWeights | None,
        sample_clips: Sequence[SampleClip],
    ) -> None:
        super().__init__(cfg, "hifigan", audio_cfg, train_set, val_set, io)
        context = self.context
        self.hifigan = cfg
        self.init, self.warm_start, self.sample_clips = init, warm_start, sample_clips
        self.state = build_state(cfg, audio_cfg.n_mel_channels, self.precision, sampling_rate=audio_cfg.sampling_rate)
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
        # The weights fine-tuning started from (train sets it, from the init or the resumed checkpoint).
        self.fine_tuned_from: str | None = None
        # The weights a warm start of base training began from (likewise).
        self.warm_started_from: str | None = None

    def train(self, checkpoint: Checkpoint | None) -> TrainingResult[Generator]:
        """Resume from ``checkpoint``, or start from the fine-tuning or warm-start weights (if any), and train."""
        cfg, init = self.hifigan, self.init
        if checkpoint is None and init is not None:
            apply_init(
                self.state, init, default_lr=cfg.learning_rate, lr_factor=cfg.fine_tune_lr_factor, lr_decay=cfg.lr_decay
            )
            self.fine_tuned_from = str(init.path)
        elif checkpoint is None and self.warm_start is not None:
            apply_warm_start(self.state, self.warm_start)
            self.warm_started_from = str(self.warm_start.path)
        return super().train(checkpoint)

    def resume(self, checkpoint: Checkpoint) -> None:
        super().resume(checkpoint)
        self.fine_tuned_from = checkpoint.extra.get("fine_tuned_from")
        self.warm_started_from = checkpoint.extra.get("warm_started_from")

    def evaluate(self, loader: DataLoader) -> dict[str, float]:
        return evaluate(self.state, self.runtime, loader)

    # -- hooks of the epoch loop -------------------------------------------------------------------

    def save_checkpoint(self) -> None:
        extra = {
            "world_size": self.context.world_size,
            "accumulation": self.k,
            "fine_tuned_from": self.fine_tuned_from,
            "warm_started_from": self.warm_started_from,
        }
        self.state.save(self.manager, self.run_id, extra)

    def begin_epoch(self, epoch: int) -> None:
        super().begin_epoch(epoch)
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
        """Whether the next step trains the discriminators too: from ``discriminator_start_step`` on in base
        training, from ``fine_tune_spectral_steps`` on in fine-tuning (whose steps count from 0); the
        generator learns alone on its spectral losses before."""
        cfg = self.hifigan
        first = cfg.fine_tune_spectral_steps if self.fine_tuned_from is not None else cfg.discriminator_start_step
        return self.state.step >= first

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

    def result(self) -> TrainingResult[Generator]:
        """Final checkpoint and validation (unless just done), and the run's figures."""
        state = self.state
        run = self.finish()
        frames_per_s = run.metrics["frames_per_s"]
        rate = learning_rate(state.optim_g)
        metrics = {
            **run.metrics,
            "fine_tuned_from": self.fine_tuned_from,
            "warm_started_from": self.warm_started_from,
            "amp": self.precision.amp,
            "n_val": len(self.val_set) if self.val_set is not None else 0,
            "frames_per_s_nvidia_units": (
                nvidia_frames_per_s(frames_per_s, self.audio_cfg.n_mel_channels, self.frames_per_item)
                if frames_per_s is not None
                else None
            ),
            "learning_rate": rate,
            "val_loss_mel_start": run.first_val.get("val_loss_mel"),
            **run.final_val,
            "history": state.history,
        }
        state.generator.eval()
        return TrainingResult(
            model=state.generator, step=state.step, epoch=run.epoch, learning_rate=rate, metrics=metrics
        )
