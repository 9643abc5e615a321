"""FastPitch's training entry, :func:`fit`, and its epoch loop (state, step and validation plots on the
teacher-forced loop it shares with Tacotron 2,
:class:`tts_pipeline.training.teacher_forced.TeacherForcedLoop`)."""

from __future__ import annotations

from typing import Any

from tts_pipeline.config import FastPitchConfig
from tts_pipeline.models.fastpitch import FastPitch
from tts_pipeline.models.fastpitch.data import FastPitchDataset, PitchStats, Speakers, TextSettings, collate
from tts_pipeline.training.checkpoint import Checkpoint
from tts_pipeline.training.engine import learning_rate
from tts_pipeline.training.fastpitch.state import FastPitchState, build_state
from tts_pipeline.training.fastpitch.step import Runtime, loss_names, train_step
from tts_pipeline.training.fastpitch.validation import log_plots
from tts_pipeline.training.fastpitch.warm_start import FastPitchInit, apply_warm_start
from tts_pipeline.training.loop import LoopIO, TrainingResult
from tts_pipeline.training.teacher_forced import TeacherForcedLoop


def fit(
    cfg: FastPitchConfig,
    train_set: FastPitchDataset,
    val_set: FastPitchDataset | None,
    io: LoopIO,
    *,
    text: TextSettings,
    pitch: PitchStats,
    frame_period_s: float,
    init: FastPitchInit | None = None,
    speakers: Speakers | None = None,
) -> TrainingResult[FastPitch]:
    """Train (or continue) FastPitch until ``cfg.epochs`` epochs or ``cfg.max_steps`` steps.

    Args:
        cfg: The ``fastpitch`` section.
        train_set, val_set: Utterances (:class:`FastPitchDataset`); ``val_set`` may be None or empty.
        io: Processes, checkpoints (and the one to resume from), tracking: its sink (an artifact sink,
            rank 0) gets train figures every ``log_every`` steps, validation losses and plots.
        text: The symbol table (its size is the model's ``n_symbols``) and its origin (plot labels).
        pitch: Pitch statistics of the whole corpus (stored in the model's buffers; plots convert to Hz
            with them unless the utterance's speaker has its own).
        frame_period_s: ``hop / sampling_rate``, for plot axes.
        init: Warm start from this file's weights (``fastpitch.init_from``; ignored when resuming: the
            run's own checkpoint wins); the pitch buffers keep ``pitch``. The optimiser and the step
            counter start fresh either way.
        speakers: The named speakers of a multi-speaker corpus (the datasets' items carry their ids and
            were normalised with their statistics); the plots convert each utterance's pitch with its
            own speaker's. Training itself needs nothing more: each batch carries ``speaker``, which the
            model's forward (and so the validation losses) conditions on.

    Where the section's settings go: the loop's (epochs, batches, cadences, seed) and
    ``length_bucketing`` / ``bucket_pool`` to :class:`tts_pipeline.training.loop.EpochLoop`; the model,
    optimiser, ``freeze`` and ``learning_rate`` / ``warmup_steps`` to :func:`build_state` and the step's Noam rate;
    ``amp`` to the precision; the loss scales and ``grad_clip`` to :func:`train_step` (via
    :class:`Runtime`); ``n_plots`` to :meth:`_Loop.validate`.
    """
    loop = _Loop(cfg, train_set, val_set, text, pitch, frame_period_s, io, init=init, speakers=speakers)
    return loop.train(io.checkpoint)


class _Loop(TeacherForcedLoop):
    """FastPitch's state, step and validation plots on the teacher-forced epoch loop;
    :func:`fit` is the public entry."""

    state: FastPitchState

    def __init__(
        self,
        cfg: FastPitchConfig,
        train_set: FastPitchDataset,
        val_set: FastPitchDataset | None,
        text: TextSettings,
        pitch: PitchStats,
        frame_period_s: float,
        io: LoopIO,
        *,
        init: FastPitchInit | None = None,
        speakers: Speakers | None = None,
    ) -> None:
        super().__init__(cfg, "fastpitch", train_set, val_set, io, collate_fn=collate)
        context = self.context
        self.fastpitch = cfg
        self.text, self.pitch, self.frame_period_s = text, pitch, frame_period_s
        self.speakers = speakers
        self.state = build_state(cfg, len(text.symbols), train_set.n_mels, pitch, self.precision)
        self.names = loss_names(self.state.model.energy_conditioning)
        self.runtime = Runtime(
            context=context,
            precision=self.precision,
            model=context.wrap(self.state.model),
            cfg=cfg,
            accumulation=self.k,
        )
        self.init = init
        # The file a warm start began from (train sets it, from the init or the resumed checkpoint).
        self.warm_started_from: str | None = None

    def train(self, checkpoint: Checkpoint | None) -> TrainingResult[FastPitch]:
        """Resume from ``checkpoint``, or start from the warm-start weights (if any), and train."""
        if checkpoint is None and self.init is not None:
            apply_warm_start(self.state.model, self.init)
            self.warm_started_from = str(self.init.path)
        return super().train(checkpoint)

    def resume(self, checkpoint: Checkpoint) -> None:
        super().resume(checkpoint)
        self.warm_started_from = checkpoint.extra.get("warm_started_from")

    def checkpoint_extra(self) -> dict[str, Any]:
        return {**super().checkpoint_extra(), "warm_started_from": self.warm_started_from}

    def optimiser_step(self, micro_batches: list[Any]) -> dict[str, float]:
        # This module's train_step, looked up at call time (tests replace it).
        return train_step(self.state, self.runtime, micro_batches, checkpoints=self.manager.paths())

    # -- hooks of the epoch loop -------------------------------------------------------------------

    def validate(self, epoch: int) -> dict[str, float]:
        """Validation losses (logged), and plots of the first ``n_plots`` utterances when tracking."""
        figures = super().validate(epoch)
        if self.val_set is not None and getattr(self.sink, "active", False) and self.fastpitch.n_plots > 0:
            count = min(self.fastpitch.n_plots, len(self.val_set))
            batch = collate([self.val_set[index] for index in range(count)])
            log_plots(
                self.state.model, batch, self.text, self.pitch, self.frame_period_s, self.sink, epoch, self.speakers
            )
        return figures

    def begin_epoch(self, epoch: int) -> None:
        self.state.model.train()

    # -- the end -----------------------------------------------------------------------------------

    def result(self) -> TrainingResult[FastPitch]:
        """Final checkpoint and validation (unless just done), and the run's figures."""
        state, cfg = self.state, self.fastpitch
        run = self.finish()
        rate = learning_rate(state.optimizer)
        metrics: dict[str, Any] = {
            **run.metrics,
            "amp": self.precision.amp,
            "optimizer": cfg.optimizer,
            "n_params": self.parameter_count(),
            "n_frozen_params": sum(p.numel() for p in state.model.parameters() if not p.requires_grad),
            "warm_started_from": self.warm_started_from,
            "n_symbols": len(self.text.symbols),
            "n_speakers": len(self.speakers) if self.speakers is not None else 1,
            "n_val": len(self.val_set) if self.val_set is not None else 0,
            "learning_rate": rate,
            **self.loss_figures(run),
            "history": state.history,
        }
        state.model.eval()
        return TrainingResult(model=state.model, step=state.step, epoch=run.epoch, learning_rate=rate, metrics=metrics)
