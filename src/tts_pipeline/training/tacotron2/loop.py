"""Tacotron 2's training entry, :func:`fit`, and its epoch loop (state, step and the epoch's annealed rate
on the teacher-forced loop it shares with FastPitch,
:class:`tts_pipeline.training.teacher_forced.TeacherForcedLoop`)."""

from __future__ import annotations

import functools
from typing import Any

from tts_pipeline.config import Tacotron2SectionConfig
from tts_pipeline.models.tacotron2 import Tacotron2
from tts_pipeline.models.tacotron2.data import Tacotron2Dataset, collate
from tts_pipeline.training.engine import learning_rate
from tts_pipeline.training.loop import LoopIO, TrainingResult
from tts_pipeline.training.tacotron2.state import (
    Tacotron2State,
    annealed_rate,
    attention_prior_weight,
    build_state,
    guided_attention_weight,
    mean_frames_per_symbol,
)
from tts_pipeline.training.tacotron2.step import LOSS_NAMES, Runtime, train_step
from tts_pipeline.training.teacher_forced import TeacherForcedLoop


def fit(
    cfg: Tacotron2SectionConfig,
    train_set: Tacotron2Dataset,
    val_set: Tacotron2Dataset | None,
    io: LoopIO,
    *,
    n_symbols: int,
    n_mels: int,
) -> TrainingResult[Tacotron2]:
    """Train (or continue) Tacotron 2 until ``cfg.epochs`` epochs or ``cfg.max_steps`` steps.

    Args:
        cfg: The ``tacotron2`` section.
        train_set, val_set: Utterances; ``val_set`` may be None or empty.
        io: Processes, checkpoints (and the one to resume from), tracking: its sink (rank 0) gets
            train figures every ``log_every`` steps and validation losses.
        n_symbols: Size of the symbol table (the embedding's rows).
        n_mels: Mel channels.
    """
    return _Loop(cfg, train_set, val_set, n_symbols, n_mels, io).train(io.checkpoint)


class _Loop(TeacherForcedLoop):
    """Tacotron 2's state, step and annealed rate on the teacher-forced epoch loop; :func:`fit` is the entry."""

    state: Tacotron2State
    names = LOSS_NAMES

    def __init__(
        self,
        cfg: Tacotron2SectionConfig,
        train_set: Tacotron2Dataset,
        val_set: Tacotron2Dataset | None,
        n_symbols: int,
        n_mels: int,
        io: LoopIO,
    ) -> None:
        collate_fn = functools.partial(collate, frames_per_step=cfg.n_frames_per_step)
        super().__init__(cfg, "tacotron2", train_set, val_set, io, collate_fn=collate_fn)
        context = self.context
        self.tacotron2 = cfg
        self.n_symbols = n_symbols
        frames_per_symbol = (
            mean_frames_per_symbol(train_set.texts, train_set.mel_lengths) if cfg.attention_prior_at_inference else 0.0
        )
        self.state = build_state(cfg, n_symbols, n_mels, self.precision, frames_per_symbol)
        self.runtime = Runtime(
            context=context,
            precision=self.precision,
            model=context.wrap(self.state.model),
            grad_clip=cfg.grad_clip,
            attention_weight=cfg.guided_attention_weight,
            attention_sigma=cfg.guided_attention_sigma,
        )

    def optimiser_step(self, micro_batches: list[Any]) -> dict[str, float]:
        # This module's train_step, looked up at call time (tests replace it).
        return train_step(self.state, self.runtime, micro_batches, checkpoints=self.manager.paths())

    # -- hooks of the epoch loop -------------------------------------------------------------------

    def begin_epoch(self, epoch: int) -> None:
        self.state.model.train()
        rate = annealed_rate(self.tacotron2, epoch)
        for group in self.state.optimizer.param_groups:
            group["lr"] = rate
        # The loss's weight, like the rate, is a function of the epoch alone: resuming needs no state.
        self.runtime.attention_weight = guided_attention_weight(self.tacotron2, epoch)
        if self.tacotron2.attention_prior_scaling > 0:
            self.state.model.set_attention_prior_weight(attention_prior_weight(self.tacotron2, epoch))

    def window_figures(self) -> dict[str, float]:
        return {
            "lr": learning_rate(self.state.optimizer),
            "guided_attention_weight": self.runtime.attention_weight,
            "attention_prior_weight": self.state.model.cfg.attention_prior_weight
            if self.state.model.uses_prior()
            else 0.0,
        }

    # -- the end -----------------------------------------------------------------------------------

    def result(self) -> TrainingResult[Tacotron2]:
        """Final checkpoint and validation (unless just done), and the run's figures."""
        state, cfg = self.state, self.tacotron2
        run = self.finish()
        rate = learning_rate(state.optimizer)
        metrics: dict[str, Any] = {
            **run.metrics,
            "amp": self.precision.amp,
            "n_params": self.parameter_count(),
            "n_symbols": self.n_symbols,
            "n_val": len(self.val_set) if self.val_set is not None else 0,
            "learning_rate": rate,
            "anneal_epochs": list(cfg.anneal_epochs),
            **self.loss_figures(run),
            "history": state.history,
        }
        state.model.eval()
        return TrainingResult(model=state.model, step=state.step, epoch=run.epoch, learning_rate=rate, metrics=metrics)
