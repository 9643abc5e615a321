"""WaveGlow's training entry, :func:`fit`, and its epoch loop (step, validation and checkpoints on the
shared :class:`tts_pipeline.training.loop.EpochLoop`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch.utils.data import DataLoader, Dataset, Subset

from tts_pipeline.audio import MelSpectrogram
from tts_pipeline.config import AudioConfig, WaveGlowSection
from tts_pipeline.models.waveglow import WaveGlow
from tts_pipeline.precision import resolve_precision
from tts_pipeline.training.checkpoint import Checkpoint, CheckpointManager
from tts_pipeline.training.distributed import DistributedContext
from tts_pipeline.training.engine import MetricsSink, learning_rate, make_loader
from tts_pipeline.training.loop import EpochLoop, LoopIO, StepReport
from tts_pipeline.training.waveglow.state import WaveGlowState, build_state
from tts_pipeline.training.waveglow.step import Runtime, evaluate, train_step


@dataclass
class TrainingResult:
    """The trained WaveGlow (weight norm kept) and the figures that go into ``metrics.json``."""

    model: WaveGlow
    step: int
    epoch: int
    metrics: dict[str, Any]


def fit(
    cfg: WaveGlowSection,
    audio_cfg: AudioConfig,
    train_set: Dataset[Any],
    val_set: Dataset[Any] | None,
    *,
    manager: CheckpointManager,
    context: DistributedContext | None = None,
    checkpoint: Checkpoint | None = None,
    sink: MetricsSink | None = None,
    run_id: str | None = None,
    log_every: int = 50,
    on_checkpoint: Callable[[WaveGlowState], None] | None = None,
) -> TrainingResult:
    """Train (or continue) WaveGlow until ``cfg.epochs`` epochs or ``cfg.max_steps`` steps.

    Args:
        cfg, audio_cfg: The ``waveglow`` and ``audio`` sections.
        train_set: Items ``{"audio": (segment_size,)}`` (:class:`tts_pipeline.models.hifigan.data.AudioSegments`).
        val_set: Fixed validation segments of the same kind; validated before training (fresh runs),
            every ``validation_every_n_epochs`` epochs and at the end.
        manager: Where checkpoints go (written by rank 0).
        context: Processes and device; default a single process on the CPU.
        checkpoint: Resume from it (``manager.latest()``), or None.
        sink: Tracking run (rank 0): train loss every ``log_every`` steps, validation loss.
        run_id: MLflow run id stored in checkpoints, so that a resumed job reopens the same run.
        on_checkpoint: Called after every checkpoint is written (tests use it to interrupt).

    Returns:
        :class:`TrainingResult`; ``metrics`` holds step, epoch, start and final validation loss,
        throughput and the per-epoch history.
    """
    loop = _Loop(cfg, audio_cfg, train_set, val_set, LoopIO(context or DistributedContext(), manager, sink, run_id,
                                                            log_every, on_checkpoint))  # fmt: skip
    if checkpoint is not None:
        # Rank 0 continues its saved RNG streams; the loop reseeds the other ranks.
        loop.state.restore(checkpoint, restore_rng=loop.context.is_main)
    loop.run(checkpoint)
    return loop.result()


class _Loop(EpochLoop):
    """WaveGlow's step, validation and checkpoints on the shared epoch loop; :func:`fit` is the entry."""

    train_key = "train_loss"
    val_key = "val_loss"
    state: WaveGlowState

    def __init__(
        self,
        cfg: WaveGlowSection,
        audio_cfg: AudioConfig,
        train_set: Dataset[Any],
        val_set: Dataset[Any] | None,
        io: LoopIO,
    ) -> None:
        super().__init__(cfg, "waveglow", train_set, io)
        context = self.context
        self.waveglow, self.audio_cfg, self.val_set = cfg, audio_cfg, val_set
        device = context.device
        self.precision = resolve_precision(cfg.amp, device, key="waveglow.amp")
        if device.type == "cuda":
            torch.backends.cudnn.benchmark = True  # fixed segment shapes
        self.state = build_state(cfg, audio_cfg.n_mel_channels, self.precision)
        self.runtime = Runtime(
            context=context,
            precision=self.precision,
            model=context.wrap(self.state.model),
            mel_fn=MelSpectrogram(audio_cfg).to(device),
            sigma=cfg.sigma,
            grad_clip=cfg.grad_clip,
        )
        self.frames_per_item = cfg.segment_size // audio_cfg.hop_length
        self.val_loader: DataLoader | None = None
        if val_set is not None and len(val_set):  # type: ignore[arg-type]
            # Its own generator: iterating it must not draw from the global RNG that training crops use.
            shard = Subset(val_set, context.shard(len(val_set)))  # type: ignore[arg-type]
            self.val_loader = make_loader(
                shard, cfg.batch_size, min(cfg.num_workers, 1), device, generator=torch.Generator()
            )

    # -- hooks of the epoch loop -------------------------------------------------------------------

    def begin_epoch(self, epoch: int) -> None:
        if hasattr(self.train_set, "set_epoch"):
            self.train_set.set_epoch(epoch)
        self.state.model.train()

    def train_step(self, batches: Sequence[Any]) -> StepReport:
        figures = train_step(self.state, self.runtime, batches, checkpoints=self.manager.paths())
        items = sum(int(batch["audio"].shape[0]) for batch in batches)
        return StepReport(figures=figures, frames=items * self.frames_per_item, items=items)

    def validate(self, epoch: int) -> dict[str, float]:
        if self.val_loader is None:
            return {}
        figures = evaluate(self.state, self.runtime, self.val_loader)
        if figures and self.sink is not None:
            self.sink.log_metrics(figures, step=self.state.step)
        return figures

    def save_checkpoint(self) -> None:
        self.state.save(self.manager, self.run_id, {"world_size": self.context.world_size, "accumulation": self.k})

    def window_figures(self) -> dict[str, float]:
        return {"lr": learning_rate(self.state.optimizer)}

    def describe(self, figures: Mapping[str, float]) -> str:
        shown = [f"{name} {figures[key]:.4f}" for key, name in (("train_loss", "loss"), ("val_loss", "val loss"))
                 if key in figures]  # fmt: skip
        if "frames_per_s" in figures:
            shown.append(f"{figures['frames_per_s']:.0f} frames/s")
        return ", ".join(shown)

    # -- the end -----------------------------------------------------------------------------------

    def result(self) -> TrainingResult:
        """Final checkpoint and validation (unless just done), and the run's figures."""
        state = self.state
        run = self.finish()
        frames_per_s = run.metrics["frames_per_s"]
        metrics = {
            **run.metrics,
            "amp": self.precision.amp,
            "sigma": self.waveglow.sigma,
            "n_val": len(self.val_set) if self.val_set is not None else 0,  # type: ignore[arg-type]
            # NVIDIA's WaveGlow throughput unit: audio samples per second
            "samples_per_s": frames_per_s * self.audio_cfg.hop_length if frames_per_s is not None else None,
            "learning_rate": learning_rate(state.optimizer),
            "val_loss_start": run.first_val.get("val_loss"),
            **run.last_train,
            **run.final_val,
            "history": state.history,
        }
        state.model.eval()
        return TrainingResult(model=state.model, step=state.step, epoch=run.epoch, metrics=metrics)
