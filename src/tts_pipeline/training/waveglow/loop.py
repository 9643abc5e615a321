"""WaveGlow's training entry, :func:`fit`, and its epoch loop (step, validation and checkpoints on the
vocoder loop it shares with HiFi-GAN, :class:`tts_pipeline.training.vocoder_loop.VocoderLoop`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from torch.utils.data import DataLoader, Dataset

from tts_pipeline.audio import MelSpectrogram
from tts_pipeline.config import AudioConfig, WaveGlowSection
from tts_pipeline.models.waveglow import WaveGlow
from tts_pipeline.training.engine import learning_rate
from tts_pipeline.training.loop import LoopIO, StepReport, TrainingResult
from tts_pipeline.training.vocoder_loop import VocoderLoop
from tts_pipeline.training.waveglow.state import WaveGlowState, build_state
from tts_pipeline.training.waveglow.step import Runtime, evaluate, train_step


def fit(
    cfg: WaveGlowSection,
    audio_cfg: AudioConfig,
    train_set: Dataset[Any],
    val_set: Dataset[Any] | None,
    io: LoopIO,
) -> TrainingResult[WaveGlow]:
    """Train (or continue) WaveGlow until ``cfg.epochs`` epochs or ``cfg.max_steps`` steps.

    Args:
        cfg, audio_cfg: The ``waveglow`` and ``audio`` sections.
        train_set: Items ``{"audio": (segment_size,)}`` (:class:`tts_pipeline.models.hifigan.data.AudioSegments`).
        val_set: Fixed validation segments of the same kind; validated before training (fresh runs),
            every ``validation_every_n_epochs`` epochs and at the end.
        io: Processes, checkpoints (and the one to resume from), tracking: its sink (rank 0) gets the
            train loss every ``log_every`` steps and the validation loss.

    Returns:
        :class:`TrainingResult`; ``metrics`` holds step, epoch, start and final validation loss,
        throughput and the per-epoch history.
    """
    return _Loop(cfg, audio_cfg, train_set, val_set, io).train(io.checkpoint)


class _Loop(VocoderLoop):
    """WaveGlow's step, validation and checkpoints on the vocoder epoch loop; :func:`fit` is the entry."""

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
        super().__init__(cfg, "waveglow", audio_cfg, train_set, val_set, io)
        context = self.context
        self.waveglow = cfg
        self.state = build_state(cfg, audio_cfg.n_mel_channels, self.precision)
        self.runtime = Runtime(
            context=context,
            precision=self.precision,
            model=context.wrap(self.state.model),
            mel_fn=MelSpectrogram(audio_cfg).to(context.device),
            sigma=cfg.sigma,
            grad_clip=cfg.grad_clip,
        )

    def evaluate(self, loader: DataLoader) -> dict[str, float]:
        return evaluate(self.state, self.runtime, loader)

    # -- hooks of the epoch loop -------------------------------------------------------------------

    def begin_epoch(self, epoch: int) -> None:
        super().begin_epoch(epoch)
        self.state.model.train()

    def train_step(self, batches: Sequence[Any]) -> StepReport:
        figures = train_step(self.state, self.runtime, batches, checkpoints=self.manager.paths())
        items = sum(int(batch["audio"].shape[0]) for batch in batches)
        return StepReport(figures=figures, frames=items * self.frames_per_item, items=items)

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

    def result(self) -> TrainingResult[WaveGlow]:
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
