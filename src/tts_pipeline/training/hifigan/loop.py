"""HiFi-GAN's training entry, :func:`fit`, and its epoch loop (step, validation, samples, checkpoints on
the shared :class:`tts_pipeline.training.loop.EpochLoop`)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch.utils.data import Dataset, Subset

from tts_pipeline.audio import MelSpectrogram
from tts_pipeline.config import AudioConfig, HiFiGANConfig
from tts_pipeline.models.hifigan import Generator
from tts_pipeline.precision import resolve_precision
from tts_pipeline.training.checkpoint import Checkpoint, CheckpointManager
from tts_pipeline.training.distributed import DistributedContext
from tts_pipeline.training.engine import ArtifactSink, check_finite, learning_rate, make_loader, nvidia_frames_per_s
from tts_pipeline.training.hifigan.finetune import InitWeights, apply_init
from tts_pipeline.training.hifigan.samples import SampleClip, log_samples
from tts_pipeline.training.hifigan.state import HiFiGANState, build_state
from tts_pipeline.training.hifigan.step import Runtime, train_step
from tts_pipeline.training.hifigan.validation import evaluate
from tts_pipeline.training.loop import EpochLoop, LoopIO, StepReport

STAGE = "train_hifigan"
DIVERGED_HINT = "Try a lower hifigan.learning_rate, or amp: off / bf16 instead of fp16."


@dataclass
class TrainingResult:
    """The trained generator and the figures that go into ``metrics.json``."""

    generator: Generator
    step: int
    epoch: int
    learning_rate: float
    metrics: dict[str, Any]


def fit(
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

    Where the section's settings go: the loop's (epochs, batches, cadences, seed) to
    :class:`tts_pipeline.training.loop.EpochLoop`; the model, optimiser and ``lr_decay`` settings to
    :func:`build_state`; ``amp`` to the precision, ``stft_loss_scale`` to the step's :class:`Runtime`,
    ``discriminator_start_step`` to :attr:`_Loop.adversarial`; ``fine_tune_lr_factor`` (with
    ``learning_rate`` and ``lr_decay``) to :func:`apply_init`, here; the sample settings to
    :meth:`_Loop.epoch_figures`.

    Returns:
        :class:`TrainingResult`; ``metrics`` holds what ``metrics.json`` reports (step, epoch, start
        and final validation losses, throughput, per-epoch history).
    """
    loop = _Loop(
        cfg,
        audio_cfg,
        train_set,
        val_set,
        LoopIO(context or DistributedContext(), manager, sink, run_id, log_every, on_checkpoint),
        sample_clips=sample_clips,
    )
    if checkpoint is not None:
        # Rank 0 continues its saved RNG streams; the loop reseeds the other ranks.
        loop.state.restore(checkpoint, restore_rng=loop.context.is_main)
        loop.fine_tuned_from = checkpoint.extra.get("fine_tuned_from")
    elif init is not None:
        apply_init(
            loop.state, init, default_lr=cfg.learning_rate, lr_factor=cfg.fine_tune_lr_factor, lr_decay=cfg.lr_decay
        )
        loop.fine_tuned_from = str(init.path)
    loop.run(checkpoint)
    return loop.result()


class _Loop(EpochLoop):
    """HiFi-GAN's step, validation, samples and checkpoints on the shared epoch loop;
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
        sample_clips: Sequence[SampleClip],
    ) -> None:
        super().__init__(cfg, "hifigan", train_set, io)
        context = self.context
        self.hifigan, self.audio_cfg, self.val_set = cfg, audio_cfg, val_set
        self.sample_clips = sample_clips
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
        # The weights fine-tuning started from (fit sets it, from the init or the resumed checkpoint).
        self.fine_tuned_from: str | None = None

    # -- hooks of the epoch loop -------------------------------------------------------------------

    def validate(self, epoch: int) -> dict[str, float]:
        if self.val_loader is None:
            return {}
        figures = evaluate(self.state, self.runtime, self.val_loader)
        if figures and self.sink is not None:
            self.sink.log_metrics(figures, step=self.state.step)
        return figures

    def save_checkpoint(self) -> None:
        extra = {"world_size": self.context.world_size, "accumulation": self.k, "fine_tuned_from": self.fine_tuned_from}
        self.state.save(self.manager, self.run_id, extra)

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
