"""The aligner's training entry, :func:`fit`, its batches (one bucket of similar-length utterances per
step) and its epoch loop (step, validation and checkpoints on the shared
:class:`tts_pipeline.training.loop.EpochLoop`)."""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence

import torch
from torch.utils.data import DataLoader

from tts_pipeline.config import AlignerConfig
from tts_pipeline.models.aligner.data import AlignerBatch, AlignerCollate, AlignerDataset, LengthBucketBatchSampler
from tts_pipeline.models.aligner.loss import binarization_weight
from tts_pipeline.models.aligner.model import Aligner
from tts_pipeline.training.aligner.state import AlignerState, build_state, resolve_aligner_precision
from tts_pipeline.training.aligner.step import evaluate, train_step
from tts_pipeline.training.aligner.warm_start import AlignerInit, apply_warm_start
from tts_pipeline.training.loop import Cadence, EpochLoop, LoopIO, StepReport, TrainingResult


def _loader(dataset: AlignerDataset, sampler: LengthBucketBatchSampler, cfg: AlignerConfig, device: torch.device):
    return DataLoader(
        dataset,
        batch_sampler=sampler,
        collate_fn=AlignerCollate(cfg.prior_scaling),
        num_workers=cfg.num_workers,
        pin_memory=device.type == "cuda",
    )


class BucketedBatches:
    """The aligner's :class:`tts_pipeline.training.batches.BatchSource`: one batch of similar-length
    utterances per step, a resumed epoch skipping the batches already done.

    Args:
        dataset: Training utterances.
        cfg: The ``aligner`` section (``batch_size``, ``seed``, ``num_workers``, ``prior_scaling``).
        device: Where training runs (pinned memory for CUDA).
    """

    accumulation = 1
    global_batch_size = None  # batch sizes vary

    def __init__(self, dataset: AlignerDataset, cfg: AlignerConfig, device: torch.device) -> None:
        self.sampler = LengthBucketBatchSampler(dataset.mel_lengths, cfg.batch_size, seed=cfg.seed)
        self.loader = _loader(dataset, self.sampler, cfg, device)
        self.steps_per_epoch = len(self.sampler)

    def set_position(self, epoch: int, steps_done: int) -> None:
        self.sampler.set_epoch(epoch, skip=steps_done)

    def steps(self) -> Iterator[list[AlignerBatch]]:
        return ([batch] for batch in self.loader)


def fit(
    cfg: AlignerConfig,
    train_set: AlignerDataset,
    val_set: AlignerDataset | None,
    io: LoopIO,
    *,
    n_symbols: int,
    n_mels: int,
    init: AlignerInit | None = None,
) -> TrainingResult[Aligner]:
    """Train (or continue training) the aligner until ``cfg.epochs`` epochs or ``cfg.max_steps`` steps.

    Args:
        cfg: The ``aligner`` config section.
        train_set, val_set: Datasets; validation runs after every epoch and at the end.
        io: The one process (the aligner trains in one) and its device, checkpoints (and the one to
            resume from), tracking: its sink gets train figures every ``log_every`` steps and
            validation figures per epoch.
        n_symbols: Size of the symbol table.
        n_mels: Mel channels.
        init: Warm start from this file's weights (``aligner.init_from``, checked against the section by
            :func:`~tts_pipeline.training.aligner.warm_start.mismatches`); ignored when resuming (the
            checkpoint's weights win).

    Where the section's settings go: ``amp`` to the precision (:func:`resolve_aligner_precision`), which
    :func:`build_state` (the scaler), :func:`train_step` and validation use; the model's sizes,
    ``learning_rate`` and ``weight_decay`` to :func:`build_state`; ``batch_size``, ``seed``,
    ``num_workers`` and ``prior_scaling`` to the batches (:class:`BucketedBatches`); ``binarization_*``
    to each epoch's binarisation weight; ``grad_clip`` to :func:`train_step`; ``epochs``, ``max_steps``, ``seed`` and
    ``checkpoint_every_n_steps`` to the epoch loop.

    Returns:
        :class:`TrainingResult`; ``metrics`` holds the final validation figures, throughput and the
        per-epoch history.
    """
    loop = _Loop(cfg, train_set, val_set, n_symbols, n_mels, io)
    if init is not None and io.checkpoint is None:
        apply_warm_start(loop.state, init)
    return loop.train(io.checkpoint)


class _Loop(EpochLoop):
    """The aligner's step, validation and checkpoints on the shared epoch loop; :func:`fit` is the entry.

    Unlike the other trainers it takes variable-size batches, checkpoints every
    ``checkpoint_every_n_steps`` steps, validates after every epoch but not before training, reports
    ``steps_per_s`` and the epoch's binarisation weight, and logs ``train_epoch_loss`` per epoch.
    """

    state: AlignerState

    def __init__(
        self,
        cfg: AlignerConfig,
        train_set: AlignerDataset,
        val_set: AlignerDataset | None,
        n_symbols: int,
        n_mels: int,
        io: LoopIO,
    ) -> None:
        device = io.context.device
        super().__init__(
            cfg,
            "aligner",
            train_set,
            io,
            batches=BucketedBatches(train_set, cfg, device),
            checkpoint_every=Cadence(cfg.checkpoint_every_n_steps, "steps"),
            validation_every_n_epochs=1,
            validate_before_training=False,
            items_per_s="steps_per_s",  # each step reports one item
        )
        self.aligner, self.val_set = cfg, val_set
        self.precision = resolve_aligner_precision(cfg, device)
        self.state = build_state(cfg, n_symbols, n_mels, self.precision)
        self.val_loader = None
        if val_set is not None and len(val_set):
            val_sampler = LengthBucketBatchSampler(val_set.mel_lengths, cfg.batch_size, shuffle=False)
            self.val_loader = _loader(val_set, val_sampler, cfg, device)
        # The binarisation weight of the epoch being trained: begin_epoch sets it before the epoch's
        # first step (a resumed run's included), and only steps and their log windows read it.
        self.kl_weight = self._kl_weight(self.state.epoch)

    def _kl_weight(self, epoch: int) -> float:
        cfg = self.aligner
        return binarization_weight(epoch, cfg.binarization_start_epoch, cfg.binarization_warmup_epochs)

    # -- hooks of the epoch loop -------------------------------------------------------------------

    def begin_epoch(self, epoch: int) -> None:
        self.kl_weight = self._kl_weight(epoch)
        self.state.model.train()

    def train_step(self, batches: Sequence[AlignerBatch]) -> StepReport:
        (batch,) = batches
        batch = batch.to(self.context.device)
        # This module's train_step, looked up at call time (tests replace it).
        losses = train_step(self.state, batch, self.kl_weight, self.aligner, self.manager, self.precision)
        return StepReport(figures=losses.figures(), frames=int(batch.mel_lengths.sum()), items=1)

    def validate(self, epoch: int) -> dict[str, float]:
        """Validation figures under ``epoch``'s binarisation weight; logged by :meth:`epoch_figures`."""
        if self.val_loader is None:
            return {}
        return evaluate(self.state.model, self.val_loader, self._kl_weight(epoch), self.context.device, self.precision)

    def save_checkpoint(self) -> None:
        self.state.save(self.manager, self.run_id)

    def window_figures(self) -> dict[str, float]:
        return {"kl_weight": self.kl_weight}

    def epoch_figures(self, epoch: int, figures: dict[str, float]) -> None:
        if self.sink is not None:
            val = {key: value for key, value in figures.items() if key.startswith("val_")}
            self.sink.log_metrics({"train_epoch_loss": figures["train_loss"], **val}, step=self.state.step)

    def describe(self, figures: Mapping[str, float]) -> str:
        text = f"train loss {figures['train_loss']:.4f}"
        if "val_loss" in figures:
            text += f", val loss {figures['val_loss']:.4f}, attn max {figures['val_attn_max']:.3f}"
        return text

    # -- the end -----------------------------------------------------------------------------------

    def result(self) -> TrainingResult[Aligner]:
        """The final checkpoint (unless just done), a final validation and the run's figures.

        The final validation always runs, under the binarisation weight of the last epoch trained (at
        most ``epochs``), and is not added to the history.
        """
        state, cfg = self.state, self.aligner
        self.final_checkpoint()
        elapsed = time.perf_counter() - self.started
        final_epoch = min(state.epoch, cfg.epochs)
        final = self.validate(final_epoch)
        metrics = {
            "step": state.step,
            "epoch": final_epoch,
            "epochs_completed": len(state.history),
            "resumed_from_step": self.resumed_from,
            "device": str(self.context.device),
            "n_train": len(self.train_set),
            "n_val": len(self.val_set) if self.val_set is not None else 0,
            "steps_this_run": self.steps_run,
            "seconds_this_run": elapsed,
            # Over the whole run, validation and checkpoints included.
            "steps_per_s": self.steps_run / elapsed if self.steps_run else None,
            "frames_per_s": self.frames_run / elapsed if self.steps_run else None,
            **final,
            "history": state.history,
        }
        state.model.eval()
        return TrainingResult(model=state.model, step=state.step, epoch=final_epoch, metrics=metrics)
