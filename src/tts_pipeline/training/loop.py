"""The epoch loop every trainer shares (the aligner, HiFi-GAN, FastPitch, Tacotron 2, WaveGlow): where an
epoch starts and stops, resuming mid-epoch, checkpoints, validation cadence, log windows, throughput and
the figures that every ``metrics.json`` reports. A trainer subclasses :class:`EpochLoop` and supplies
the step, the validation, the checkpoint contents and its own figures; its ``fit(...)`` builds the loop
(and with it the state) from the section, the datasets and a :class:`LoopIO`, then calls
:meth:`EpochLoop.train`, which restores the checkpoint to resume from (or leaves a trainer's own
initialisation to start fresh), runs and returns the trainer's result. The settings it reads are a
:class:`tts_pipeline.config.LoopSettings` every model section inherits.

Batches come from a :class:`tts_pipeline.training.batches.BatchSource`; by default one optimiser step
takes ``k`` micro-batches of ``batch_size`` items per process
(:func:`tts_pipeline.training.engine.accumulation_steps`); an epoch is ``steps_per_epoch`` such steps
over this rank's share of a :class:`tts_pipeline.training.distributed.ResumableSampler` permutation
(optionally grouped by length), so a run resumed at step ``s`` of an epoch continues with the batches an
uninterrupted run would have seen.
Checkpoints are taken every ``checkpoint_every_n_epochs`` epochs (or at another :class:`Cadence`) and
when training stops; validation runs before training (fresh runs, unless turned off), every
``validation_every_n_epochs`` epochs, at the last epoch and when training stops. A user's stop
(SIGTERM, Ctrl-C or the workflow's stop file, :mod:`tts_pipeline.stop_request`) is heard before each
step: the loop checkpoints there and raises :class:`~tts_pipeline.stop_request.StopRequested`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from torch.utils.data import Dataset

from tts_pipeline import stop_request
from tts_pipeline.config import LoopSettings
from tts_pipeline.training.batches import BatchSource, SampledBatches
from tts_pipeline.training.checkpoint import Checkpoint, CheckpointManager
from tts_pipeline.training.distributed import DistributedContext, LengthBuckets
from tts_pipeline.training.engine import MetricsSink, RunningMeans, ThroughputMeter, seed_everything
from tts_pipeline.training.model_state import TrainingState
from tts_pipeline.training.progress import ProgressLine

log = logging.getLogger(__name__)

# Loop settings that change how long, where or how often-observed training runs, not the weights'
# trajectory (batch_size and gpus only split the fixed global batch differently): a checkpoint made
# under other values of these is still resumed. Trainers add their own to this list.
LOOP_RESUME_NEUTRAL_KEYS = (
    "epochs",
    "max_steps",
    "checkpoint_every_n_epochs",
    "keep_checkpoints",
    "num_workers",
    "gpus",
    "batch_size",
    "validation_every_n_epochs",
)


@dataclass(frozen=True)
class LoopIO:
    """What a training run runs on, where it resumes from and where its outputs go: every trainer's
    ``fit`` takes one (a training stage builds it, :mod:`tts_pipeline.stages.training_stage`).

    Attributes:
        manager: Checkpoints (written by rank 0).
        context: Processes and device; default a single process on the CPU.
        checkpoint: Resume from it (:func:`tts_pipeline.training.engine.find_resume_checkpoint`), or None
            to start fresh.
        sink: Tracking run; kept on rank 0 only.
        run_id: Stored in checkpoints, so that a resumed job reopens the same tracking run.
        log_every: Training figures every this many steps.
        on_checkpoint: Called with the state after every checkpoint (tests use it to interrupt).
    """

    manager: CheckpointManager
    context: DistributedContext = field(default_factory=DistributedContext)
    checkpoint: Checkpoint | None = None
    sink: MetricsSink | None = None
    run_id: str | None = None
    log_every: int = 50
    on_checkpoint: Callable[[Any], None] | None = None


@dataclass(frozen=True)
class Cadence:
    """Checkpoint every ``every`` epochs (after the epoch's validation) or every ``every`` optimiser steps
    (a step that ends an epoch is checkpointed after the epoch's validation, so that the checkpoint
    resumes at the start of the next epoch)."""

    every: int
    unit: Literal["epochs", "steps"] = "epochs"


@dataclass
class StepReport:
    """What one optimiser step reports: its figures (reduced over processes) and the real mel frames
    and items it trained on in this process."""

    figures: dict[str, float]
    frames: int
    items: int


class EpochLoop:
    """Epoch bookkeeping around a trainer's step (module docstring).

    Subclasses set :attr:`state` and implement :meth:`train_step`, :meth:`validate`,
    :meth:`save_checkpoint` and :meth:`result`; the other hooks are optional. :meth:`train` restores a
    checkpoint into the state (:meth:`resume`) before :meth:`run`.

    Args:
        cfg: The trainer's config section: its :class:`~tts_pipeline.config.LoopSettings`, and those of an
            :class:`~tts_pipeline.config.EpochLoopSettings` unless ``batches``, ``checkpoint_every`` and
            ``validation_every_n_epochs`` say otherwise (the aligner's).
        section: Its name, for messages (``"hifigan"``).
        train_set: Training items.
        io: Processes, checkpoints, tracking (:class:`LoopIO`; its ``checkpoint`` goes to :meth:`train`).
        batches: Where the steps' batches come from; default :class:`SampledBatches` over ``train_set``
            with ``cfg``'s batch sizes, ``buckets`` and ``loader_options``.
        checkpoint_every: Checkpoint cadence; default every ``cfg.checkpoint_every_n_epochs`` epochs.
        validation_every_n_epochs: Validation cadence; default ``cfg.validation_every_n_epochs``.
        validate_before_training: Validate once before the first step of a fresh run (a history entry
            of epoch 0).
        items_per_s: Also report the items/s of :class:`StepReport` under this name, next to
            ``frames_per_s`` in log windows and epoch entries (None: not reported).
        buckets: Group the training items by length (global batches of similar lengths); None = random
            batches. Default batch source only.
        loader_options: More DataLoader options (``collate_fn``). Default batch source only.
    """

    #: A history entry holding this key is a finished epoch; one holding ``val_key`` a validation.
    train_key = "train_loss"
    val_key = "val_loss"
    state: TrainingState

    def __init__(
        self,
        cfg: LoopSettings,
        section: str,
        train_set: Dataset[Any],
        io: LoopIO,
        *,
        batches: BatchSource | None = None,
        checkpoint_every: Cadence | None = None,
        validation_every_n_epochs: int | None = None,
        validate_before_training: bool = True,
        items_per_s: str | None = None,
        buckets: LengthBuckets | None = None,
        **loader_options: Any,
    ) -> None:
        self.cfg, self.section, self.train_set = cfg, section, train_set
        context = io.context
        self.context, self.manager = context, io.manager
        self.sink = io.sink if context.is_main else None  # only rank 0 logs
        self.run_id, self.log_every, self.on_checkpoint = io.run_id, io.log_every, io.on_checkpoint
        if batches is None:
            batches = SampledBatches(cfg, section, train_set, context, buckets=buckets, **loader_options)
        elif buckets is not None or loader_options:
            raise ValueError("buckets and loader options are for the default batch source only")
        self.batches = batches
        self.k = batches.accumulation
        self.steps_per_epoch = batches.steps_per_epoch
        self.checkpoint_every = checkpoint_every or Cadence(cfg.checkpoint_every_n_epochs, "epochs")
        self.validation_every_n_epochs = validation_every_n_epochs or cfg.validation_every_n_epochs
        self.validate_before_training = validate_before_training
        self.items_per_s = items_per_s
        self.resumed_from = 0
        self.saved_step = -1
        self.started = time.perf_counter()
        self.steps_run = 0
        self.frames_run = 0.0
        self.train_seconds = 0.0
        self.last_train: dict[str, float] = {}
        self.window = RunningMeans()
        self.window_meter = ThroughputMeter(context)
        self.progress = ProgressLine(section, cfg.epochs) if context.is_main else None

    # -- hooks -------------------------------------------------------------------------------------

    def train_step(self, batches: Sequence[Any]) -> StepReport:
        """One optimiser step over ``k`` loader batches (before the counters advance)."""
        raise NotImplementedError

    def validate(self, epoch: int) -> dict[str, float]:
        """Validation figures (``val_...``), logged to the sink; ``{}`` without a validation set."""
        raise NotImplementedError

    def save_checkpoint(self) -> None:
        """Write the state with :attr:`manager` (called on rank 0 only)."""
        raise NotImplementedError

    def begin_epoch(self, epoch: int) -> None:
        """Called before the steps of an epoch (train mode, the dataset's epoch)."""

    def window_figures(self) -> dict[str, float]:
        """More figures for each log window (e.g. learning rates)."""
        return {}

    def epoch_figures(self, epoch: int, figures: dict[str, float]) -> None:
        """Add to an epoch's history entry after its validation (e.g. audio samples); may log."""

    def end_epoch(self) -> None:
        """Called after an epoch's history entry is written (e.g. a per-epoch lr decay)."""

    def describe(self, figures: Mapping[str, float]) -> str:
        """The text of an epoch's log line after ``epoch E (step S): ``."""
        shown = [f"{key} {figures[key]:.4f}" for key in (self.train_key, self.val_key) if key in figures]
        if "frames_per_s" in figures:
            shown.append(f"{figures['frames_per_s']:.0f} frames/s")
        return ", ".join(shown)

    # -- the loop ----------------------------------------------------------------------------------

    def done(self) -> bool:
        state, cfg = self.state, self.cfg
        return state.epoch > cfg.epochs or (cfg.max_steps is not None and state.step >= cfg.max_steps)

    def start(self, checkpoint: Checkpoint | None) -> None:
        """Continue from ``checkpoint`` (already restored into the state, RNG states on rank 0 only), or
        start fresh (and validate once before training if asked to)."""
        state, cfg, context = self.state, self.cfg, self.context
        if checkpoint is not None:
            # Rank 0 continues its saved RNG stream exactly; the other ranks reseed from (seed, rank, step).
            if not context.is_main:
                seed_everything(cfg.seed + 1000 * checkpoint.step, context.rank)
            self.resumed_from = self.saved_step = checkpoint.step
            log.info("resuming from %s (step %s, epoch %s)", checkpoint.path, checkpoint.step, checkpoint.epoch)
        else:
            seed_everything(cfg.seed, context.rank)
            if self.validate_before_training:
                first = self.validate(0)
                state.history.append({"epoch": 0.0, "step": 0.0, **first})
                if first:
                    log.info("before training: %s", self.describe(first))
        self.started = time.perf_counter()

    def run(self, checkpoint: Checkpoint | None) -> None:
        """Start (or continue from ``checkpoint``, already restored) and train until :meth:`done`, or
        until a user's stop (:mod:`tts_pipeline.stop_request`) makes :meth:`run_epoch` checkpoint and
        raise :class:`~tts_pipeline.stop_request.StopRequested`."""
        self.start(checkpoint)
        with stop_request.listening():
            while not self.done() and self.run_epoch():
                pass

    def train(self, checkpoint: Checkpoint | None) -> Any:
        """What a trainer's ``fit`` does once its loop is built: restore ``checkpoint`` (:meth:`resume`)
        unless starting fresh, :meth:`run`, and return :meth:`result`."""
        if checkpoint is not None:
            self.resume(checkpoint)
        self.run(checkpoint)
        return self.result()

    def resume(self, checkpoint: Checkpoint) -> None:
        """Load ``checkpoint`` into the state before training continues."""
        # Rank 0 continues its saved RNG streams; start() reseeds the other ranks.
        self.state.restore(checkpoint, restore_rng=self.context.is_main)

    def result(self) -> Any:
        """The trainer's result once training is done: its final checkpoint and validation
        (:meth:`finish`) and what its ``fit`` returns."""
        raise NotImplementedError

    def checkpoint(self) -> None:
        if self.context.is_main:
            self.save_checkpoint()
        self.context.barrier()
        self.saved_step = self.state.step
        if self.on_checkpoint is not None:
            self.on_checkpoint(self.state)

    def run_epoch(self) -> bool:
        """Train the rest of the current epoch (or up to ``max_steps``); True if the epoch finished."""
        state, cadence = self.state, self.checkpoint_every
        epoch = state.epoch
        self.batches.set_position(epoch, state.batch_in_epoch)
        self.begin_epoch(epoch)
        epoch_means = RunningMeans()
        epoch_meter = ThroughputMeter(self.context)
        self.window_meter.reset()  # validation and checkpoint time are not training throughput
        groups = self.batches.steps()
        while state.batch_in_epoch < self.steps_per_epoch and not self.done():
            # before a step, never after an epoch's last one: its validation and checkpoint come first
            self._stop_if_asked()
            report = self.train_step(next(groups))
            state.step += 1
            state.batch_in_epoch += 1
            for meter in (self.window_meter, epoch_meter):
                meter.add(report.frames, report.items)
            self.window.add(report.figures)
            epoch_means.add(report.figures)
            self.steps_run += 1
            if state.step % self.log_every == 0:
                self._log_window(epoch)
            # A step that ends the epoch is checkpointed after the epoch's validation, below.
            mid_epoch = state.batch_in_epoch < self.steps_per_epoch
            if mid_epoch and cadence.unit == "steps" and state.step % cadence.every == 0:
                self.checkpoint()
        del groups
        seconds = epoch_meter.elapsed()
        frames, items = self.context.sum_floats([epoch_meter.frames, epoch_meter.items])
        self.train_seconds += seconds
        self.frames_run += frames
        if epoch_means.count:
            self.last_train = epoch_means.means("train_")
        if state.batch_in_epoch < self.steps_per_epoch:
            return False  # max_steps reached mid-epoch
        self._end_epoch(epoch_means, frames / seconds, items / seconds)
        if (epoch if cadence.unit == "epochs" else state.step) % cadence.every == 0:
            self.checkpoint()
        return True

    def _stop_if_asked(self) -> None:
        """On a user's stop: checkpoint here (unless this step's is written) and raise StopRequested.
        Every process must stop at the same step, so with several the request is summed over them."""
        why = stop_request.requested()
        if self.context.world_size > 1:
            anyone = self.context.sum_floats([1.0 if why else 0.0])[0] > 0
            why = (why or "another process's stop request") if anyone else None
        if why is None:
            return
        if self.saved_step != self.state.step:
            self.checkpoint()
        raise stop_request.StopRequested(
            f"stopped on request ({why}) at step {self.state.step}, epoch {self.state.epoch}, after saving a checkpoint"
        )

    def _log_window(self, epoch: int) -> None:
        frames_per_s, items_per_s = self.window_meter.rate()  # a collective: every rank calls it
        if self.sink is not None:
            figures = {
                **self.window.means("train_"),
                **self.window_figures(),
                **self._rates(frames_per_s, items_per_s),
            }
            self.sink.log_metrics({**figures, "epoch": epoch}, step=self.state.step)
        self.window.reset()
        self.window_meter.reset()

    def _rates(self, frames_per_s: float, items_per_s: float) -> dict[str, float]:
        rates = {"frames_per_s": frames_per_s}
        if self.items_per_s is not None:
            rates[self.items_per_s] = items_per_s
        return rates

    def _end_epoch(self, means: RunningMeans, frames_per_s: float, items_per_s: float) -> None:
        """Validation when due, the epoch's history entry and log line, then the next epoch."""
        state, cfg = self.state, self.cfg
        epoch = state.epoch
        figures: dict[str, float] = {
            "epoch": float(epoch),
            "step": float(state.step),
            **means.means("train_"),
            **self.window_figures(),
            **self._rates(frames_per_s, items_per_s),
        }
        if epoch % self.validation_every_n_epochs == 0 or epoch == cfg.epochs:
            figures.update(self.validate(epoch))
        self.epoch_figures(epoch, figures)
        state.history.append(figures)
        log.info("epoch %s (step %s): %s", epoch, state.step, self.describe(figures))
        if self.progress is not None:
            self.progress.epoch_done(epoch, state.step, figures)
        self.end_epoch()
        state.epoch += 1
        state.batch_in_epoch = 0

    def final_checkpoint(self) -> None:
        """Checkpoint the state unless its last step is saved already."""
        if self.saved_step != self.state.step:
            self.checkpoint()

    def finish(self) -> FinishedRun:
        """The final checkpoint and validation (unless just done), and the figures every trainer reports."""
        state = self.state
        self.final_checkpoint()
        # The epoch of the last step done (the counters point at the next one).
        final_epoch = state.epoch - 1 if state.batch_in_epoch == 0 else state.epoch
        if self.window.count:  # the steps since the last logged window: a short run's curve has a point
            self._log_window(final_epoch)
        last_val = next((entry for entry in reversed(state.history) if self.val_key in entry), None)
        if last_val is None or int(last_val["step"]) != state.step:
            final = self.validate(final_epoch)
            if final:
                state.history.append({"epoch": float(final_epoch), "step": float(state.step), **final})
        else:
            final = {key: value for key, value in last_val.items() if key.startswith("val_")}
        first_val = next((entry for entry in state.history if self.val_key in entry), {})
        last_train = self.last_train or next(
            (
                {key: value for key, value in entry.items() if key.startswith("train_")}
                for entry in reversed(state.history)
                if self.train_key in entry
            ),
            {},
        )
        trained = self.steps_run > 0 and self.train_seconds > 0
        common = {
            "step": state.step,
            "epoch": final_epoch,
            "epochs_completed": sum(1 for entry in state.history if self.train_key in entry),
            "steps_per_epoch": self.steps_per_epoch,
            "resumed_from_step": self.resumed_from,
            "device": str(self.context.device),
            "world_size": self.context.world_size,
            "accumulation": self.k,
            "global_batch_size": self.batches.global_batch_size,
            "n_train": len(self.train_set),  # type: ignore[arg-type]
            "steps_this_run": self.steps_run,
            "seconds_this_run": time.perf_counter() - self.started,
            "train_seconds_this_run": self.train_seconds,
            "steps_per_s": self.steps_run / self.train_seconds if trained else None,
            "frames_per_s": self.frames_run / self.train_seconds if trained else None,
        }
        return FinishedRun(epoch=final_epoch, final_val=final, first_val=first_val, last_train=last_train,
                           metrics=common)  # fmt: skip


@dataclass
class FinishedRun:
    """What :meth:`EpochLoop.finish` found.

    Attributes:
        epoch: The epoch of the last step done.
        final_val: The final validation figures (``val_...``; empty without a validation set).
        first_val: The history entry of the first validation (before training), or ``{}``.
        last_train: Means of the training figures over the last epoch run (``train_...``).
        metrics: The figures every trainer's ``metrics.json`` reports (step, epoch, throughput, ...).
    """

    epoch: int
    final_val: dict[str, float]
    first_val: dict[str, float]
    last_train: dict[str, float]
    metrics: dict[str, Any]


Model = TypeVar("Model")


@dataclass
class TrainingResult(Generic[Model]):
    """What a trainer's ``fit`` returns.

    Attributes:
        model: The trained model in eval mode (HiFi-GAN's generator; WaveGlow's with weight norm kept).
        step, epoch: The last step done and its epoch.
        metrics: The figures that go into ``metrics.json``.
        learning_rate: The final learning rate, for a trainer whose model file records it; else None.
    """

    model: Model
    step: int
    epoch: int
    metrics: dict[str, Any]
    learning_rate: float | None = None
