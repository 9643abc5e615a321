"""WaveGlow's training entry, :func:`fit`, its optimiser step and validation on the shared
:class:`tts_pipeline.training.loop.EpochLoop`."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch.utils.data import DataLoader, Dataset, Subset

from tts_pipeline.audio import MelSpectrogram
from tts_pipeline.config import AudioConfig, WaveGlowSection
from tts_pipeline.models.waveglow import WaveGlow, waveglow_loss
from tts_pipeline.precision import Precision, resolve_precision
from tts_pipeline.training.checkpoint import Checkpoint, CheckpointManager
from tts_pipeline.training.distributed import DistributedContext, no_sync
from tts_pipeline.training.engine import (
    MetricsSink,
    TrainingDiverged,
    check_finite,
    last_checkpoint_text,
    learning_rate,
    make_loader,
)
from tts_pipeline.training.loop import EpochLoop, LoopIO, StepReport
from tts_pipeline.training.waveglow.state import WaveGlowState, build_state, restore_state, save_state

STAGE = "train_waveglow"
DIVERGED_HINT = "Try a lower waveglow.learning_rate, a waveglow.grad_clip, or amp: off / bf16 instead of fp16."


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
        restore_state(loop.state, checkpoint, restore_rng=loop.context.is_main)
    loop.run(checkpoint)
    return loop.result()


def negative_log_likelihood(
    model: torch.nn.Module, mel_fn: MelSpectrogram, audio: torch.Tensor, sigma: float, precision: Precision
) -> torch.Tensor:
    """WaveGlow's loss for a ``(B, L)`` float32 audio batch: its mel in float32 (no gradients), the flows
    under ``precision``'s autocast, the likelihood in float32. ``model`` may be DDP-wrapped."""
    with torch.no_grad():
        mel = mel_fn(audio)
    with precision.autocast():
        output = model(mel, audio)
    return waveglow_loss(output, sigma)


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
        self.ddp_model = context.wrap(self.state.model)
        self.mel_fn = MelSpectrogram(audio_cfg).to(device)
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
        state, k = self.state, len(batches)
        state.optimizer.zero_grad(set_to_none=True)
        total = torch.zeros((), dtype=torch.float64, device=self.context.device)
        items = 0
        for index, batch in enumerate(batches):
            audio = batch["audio"].to(self.context.device, non_blocking=True).float()
            with no_sync(self.ddp_model, index < k - 1):
                loss = negative_log_likelihood(self.ddp_model, self.mel_fn, audio, self.waveglow.sigma, self.precision)
                state.scaler.scale(loss / k).backward()
            total += loss.detach().double()
            items += audio.shape[0]
        (mean_loss,) = self.context.mean_floats([float(total) / k])
        check_finite(
            {"loss": mean_loss},
            stage=STAGE,
            step=state.step + 1,
            epoch=state.epoch,
            checkpoints=self.manager.paths(),
            hint=DIVERGED_HINT,
        )
        if self.waveglow.grad_clip is not None:
            state.scaler.unscale_(state.optimizer)
            norm = torch.nn.utils.clip_grad_norm_(state.model.parameters(), self.waveglow.grad_clip)
            if not torch.isfinite(norm) and not state.scaler.is_enabled():
                raise TrainingDiverged(
                    f"{STAGE}: non-finite gradient norm at step {state.step + 1} (epoch {state.epoch}); "
                    f"{last_checkpoint_text(self.manager.paths())}. {DIVERGED_HINT}"
                )
        state.scaler.step(state.optimizer)
        state.scaler.update()
        return StepReport(figures={"loss": mean_loss}, frames=items * self.frames_per_item, items=items)

    @torch.no_grad()
    def validate(self, epoch: int) -> dict[str, float]:
        if self.val_loader is None:
            return {}
        model = self.state.model
        was_training = model.training
        model.eval()
        total, count = 0.0, 0.0
        for batch in self.val_loader:
            audio = batch["audio"].to(self.context.device).float()
            loss = negative_log_likelihood(model, self.mel_fn, audio, self.waveglow.sigma, self.precision)
            total += float(loss) * audio.shape[0]
            count += audio.shape[0]
        total, count = self.context.sum_floats([total, count])
        model.train(was_training)
        if count == 0:
            return {}
        figures = {"val_loss": total / count}
        if self.sink is not None:
            self.sink.log_metrics(figures, step=self.state.step)
        return figures

    def save_checkpoint(self) -> None:
        extra = {"world_size": self.context.world_size, "accumulation": self.k}
        save_state(self.manager, self.state, self.run_id, extra)

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
