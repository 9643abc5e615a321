"""Training progress a person can follow in the terminal: one short line per epoch, at most every
``every_s`` seconds (and always for the last epoch), with the losses and an estimate of the time left.

The lines go to standard output. The workflow's rules send a stage's standard error (its log) to the
job's log file and leave standard output to the terminal of ``snakemake`` / ``make demo``, so these
lines are what a user watching a long training sees; the same figures are in the log and in MLflow.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping
from typing import TextIO

MAX_LINE = 300
"""No progress line is longer than this (characters): losses are dropped from the end to fit."""

SHOWN_PREFIXES = ("train_loss", "val_loss")
"""Figures a line shows first (the headline losses), before the other ``train_*`` / ``val_*`` ones."""


def format_duration(seconds: float) -> str:
    """``42 s``, ``3 min 05 s``, ``1 h 02 min``: a time left as a person reads it."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


class ProgressLine:
    """Prints ``<name>: epoch E/N (step S): <losses>; <s>/epoch, about <t> left``.

    Args:
        name: What trains (``"hifigan"``), the line's prefix.
        total_epochs: The run's last epoch (``cfg.epochs``).
        every_s: Least seconds between two lines (the last epoch always prints).
        stream: Where lines go (standard output by default).
        clock: Seconds, monotonic (a parameter for tests).
    """

    def __init__(
        self,
        name: str,
        total_epochs: int,
        every_s: float = 15.0,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.name, self.total_epochs, self.every_s = name, total_epochs, every_s
        self.stream = stream
        self.clock = clock
        self.started = clock()
        self.first_epoch: int | None = None
        self.last_printed = -float("inf")

    def epoch_done(self, epoch: int, step: int, figures: Mapping[str, float]) -> str | None:
        """Note that ``epoch`` finished at ``step`` with ``figures``; returns the line if one was printed."""
        now = self.clock()
        if self.first_epoch is None:
            self.first_epoch = epoch
        if epoch < self.total_epochs and now - self.last_printed < self.every_s:
            return None
        self.last_printed = now
        line = self.line(epoch, step, figures, now)
        stream = self.stream if self.stream is not None else sys.stdout
        print(line, file=stream, flush=True)
        return line

    def line(self, epoch: int, step: int, figures: Mapping[str, float], now: float) -> str:
        """The progress line (at most :data:`MAX_LINE` characters)."""
        assert self.first_epoch is not None
        done = epoch - self.first_epoch + 1  # epochs finished by this run (a resumed run starts later)
        per_epoch = (now - self.started) / done
        left = max(0, self.total_epochs - epoch) * per_epoch
        timing = f"; {per_epoch:.1f} s/epoch" + (f", about {format_duration(left)} left" if left else ", done")
        head = f"{self.name}: epoch {epoch}/{self.total_epochs} (step {step})"
        losses = [f"{key} {value:.4g}" for key, value in _ordered_losses(figures)]
        while losses and len(head) + len(": " + ", ".join(losses)) + len(timing) > MAX_LINE:
            losses.pop()
        return head + (": " + ", ".join(losses) if losses else "") + timing


def _ordered_losses(figures: Mapping[str, float]) -> list[tuple[str, float]]:
    """The ``train_*`` and ``val_*`` figures, headline losses first."""
    losses = [(k, v) for k, v in figures.items() if k.startswith(("train_", "val_")) and isinstance(v, float | int)]
    return sorted(losses, key=lambda item: (not item[0].startswith(SHOWN_PREFIXES), item[0].startswith("val_")))
