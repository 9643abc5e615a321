"""What the two vocoder trainers (HiFi-GAN, WaveGlow) share on the epoch loop (:class:`VocoderLoop`):
they train on fixed-size audio segments, each standing for ``segment_size / hop_length`` mel frames,
and validate on fixed segments, every rank scoring its share of them."""

from __future__ import annotations

from typing import Any

import torch
from torch.utils.data import DataLoader, Dataset, Subset

from tts_pipeline.config import AudioConfig, HiFiGANConfig, WaveGlowSection
from tts_pipeline.precision import resolve_precision
from tts_pipeline.training.engine import make_loader
from tts_pipeline.training.loop import EpochLoop, LoopIO


class VocoderLoop(EpochLoop):
    """The epoch loop of a vocoder trained on audio segments: its precision, the frames an item stands
    for, the validation loader, and the epoch and validation hooks around the trainer's own figures.

    A subclass builds its state and step runtime after this constructor, and implements
    :meth:`evaluate` besides the step and checkpoint hooks.

    Args:
        cfg: The trainer's section (``amp``, ``segment_size``, ``batch_size``, ``num_workers`` and the loop's).
        section: Its name (``"hifigan"``), for messages and the ``amp`` key.
        audio_cfg: The ``audio`` section (``hop_length``).
        train_set: Training segments; one with ``set_epoch`` is told each epoch (its random crops).
        val_set: Fixed validation segments, or None.
        io: Processes, checkpoints, tracking.
    """

    def __init__(
        self,
        cfg: HiFiGANConfig | WaveGlowSection,
        section: str,
        audio_cfg: AudioConfig,
        train_set: Dataset[Any],
        val_set: Dataset[Any] | None,
        io: LoopIO,
    ) -> None:
        super().__init__(cfg, section, train_set, io)
        context = self.context
        device = context.device
        self.audio_cfg, self.val_set = audio_cfg, val_set
        self.precision = resolve_precision(cfg.amp, device, key=f"{section}.amp")
        if device.type == "cuda":
            torch.backends.cudnn.benchmark = True  # fixed segment shapes: let cuDNN pick its fastest kernels
        self.frames_per_item = cfg.segment_size // audio_cfg.hop_length
        self.val_loader: DataLoader | None = None
        if val_set is not None and len(val_set):  # type: ignore[arg-type]
            # Its own generator: iterating it must not draw from the global RNG that training crops use.
            shard = Subset(val_set, context.shard(len(val_set)))  # type: ignore[arg-type]
            self.val_loader = make_loader(
                shard, cfg.batch_size, min(cfg.num_workers, 1), device, generator=torch.Generator()
            )

    def evaluate(self, loader: DataLoader) -> dict[str, float]:
        """The trainer's validation figures (``val_...``) over this rank's ``loader``, reduced over ranks."""
        raise NotImplementedError

    # -- hooks of the epoch loop -------------------------------------------------------------------

    def begin_epoch(self, epoch: int) -> None:
        """Tell the training segments the epoch (subclasses then put their models in train mode)."""
        if hasattr(self.train_set, "set_epoch"):
            self.train_set.set_epoch(epoch)

    def validate(self, epoch: int) -> dict[str, float]:
        """:meth:`evaluate` on the validation segments, logged to the tracking run; ``{}`` without them."""
        if self.val_loader is None:
            return {}
        figures = self.evaluate(self.val_loader)
        if figures and self.sink is not None:
            self.sink.log_metrics(figures, step=self.state.step)
        return figures
