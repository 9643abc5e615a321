"""Resumable training checkpoints, for every trainer.

A checkpoint (``R/work/<stage>/step-<N>.pt``) holds named state dicts (models, optimisers, scalers,
schedulers), the step and epoch, the RNG states of torch, numpy and Python, the hash of the config
that made it and the MLflow run id, so a killed job continues where it stopped and in the same run.

- Writes are atomic (temporary name, then rename); the newest ``keep`` checkpoints are kept.
- :meth:`CheckpointManager.latest` returns the newest checkpoint that loads: a truncated newest
  file is skipped with a warning.
- Checkpoints made by another config are never resumed: they are moved to
  ``superseded/<UTC time>-<old hash>/`` (kept for inspection, not deleted) and training starts fresh.
- Everything is stored as tensors and plain Python types, so ``torch.load(weights_only=True)`` reads
  it and loading a checkpoint cannot run code.

The final model file (``R/<stage>/model.pt``) is another format, owned by the models:
:mod:`tts_pipeline.models.model_file`.
"""

from __future__ import annotations

import json
import logging
import random
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import torch

from tts_pipeline.files import atomic_path, write_json

log = logging.getLogger(__name__)

CHECKPOINT_FORMAT = 1
_NAME = re.compile(r"^step-(\d+)\.pt$")
_MARKER = "config.json"
_SUPERSEDED = "superseded"


# --------------------------------------------------------------------------------------------------
# RNG states as weights_only-safe values
# --------------------------------------------------------------------------------------------------


def capture_rng_state() -> dict[str, Any]:
    """The global RNG states of Python, numpy and torch (CPU and every CUDA device), as tensors and
    plain types."""
    version, internal, gauss = random.getstate()
    kind, keys, position, has_gauss, cached = np.random.get_state(legacy=True)
    state: dict[str, Any] = {
        "python": {"version": version, "state": torch.tensor(internal, dtype=torch.int64), "gauss": gauss},
        "numpy": {
            "kind": kind,
            "keys": torch.from_numpy(keys.astype(np.int64)),
            "position": int(position),
            "has_gauss": int(has_gauss),
            "cached_gaussian": float(cached),
        },
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def restore_rng_state(state: Mapping[str, Any]) -> None:
    """Inverse of :func:`capture_rng_state`; CUDA states are restored when the device count matches."""
    python = state["python"]
    random.setstate((python["version"], tuple(python["state"].tolist()), python["gauss"]))
    numpy_state = state["numpy"]
    np.random.set_state(
        (
            numpy_state["kind"],
            numpy_state["keys"].numpy().astype(np.uint32),
            numpy_state["position"],
            numpy_state["has_gauss"],
            numpy_state["cached_gaussian"],
        )
    )
    torch.set_rng_state(state["torch"])
    cuda = state.get("cuda")
    if cuda is not None and torch.cuda.is_available() and len(cuda) == torch.cuda.device_count():
        torch.cuda.set_rng_state_all(cuda)


# --------------------------------------------------------------------------------------------------
# resumable checkpoints
# --------------------------------------------------------------------------------------------------


@dataclass
class Checkpoint:
    """A loaded checkpoint.

    Attributes:
        path: The file it came from.
        step: Optimiser steps done.
        epoch: Epoch (from 1) the step belongs to.
        states: Named state dicts, e.g. ``{"model": ..., "optimizer": ...}``.
        rng: RNG states (see :func:`restore_rng_state`).
        config_hash: Hash of the config that made it.
        run_id: MLflow run to continue, if any.
        extra: Trainer-specific plain values (e.g. batches done in the epoch).
    """

    path: Path
    step: int
    epoch: int
    states: dict[str, Any]
    rng: dict[str, Any]
    config_hash: str
    run_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _state_dict(value: Any) -> Any:
    """A module / optimiser / scaler's state dict, or the value itself if it is already one."""
    return value.state_dict() if hasattr(value, "state_dict") else value


class CheckpointManager:
    """Checkpoints of one training stage in one folder.

    Args:
        directory: ``R/work/<stage>/``.
        config_hash: Hash of the config that determines the training trajectory.
        keep: How many of the newest checkpoints to keep (>= 1).
    """

    def __init__(self, directory: str | Path, config_hash: str, keep: int = 3) -> None:
        if keep < 1:
            raise ValueError(f"keep: expected >= 1, got {keep}")
        self.directory = Path(directory)
        self.config_hash = config_hash
        self.keep = keep

    def paths(self) -> list[Path]:
        """Checkpoint files in the folder, oldest (lowest step) first."""
        if not self.directory.is_dir():
            return []
        found = [(int(m[1]), p) for p in self.directory.iterdir() if (m := _NAME.match(p.name)) and p.is_file()]
        return [path for _, path in sorted(found)]

    def save(
        self,
        step: int,
        epoch: int,
        states: Mapping[str, Any],
        *,
        run_id: str | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> Path:
        """Write ``step-<step>.pt`` atomically, then delete all but the newest ``keep``.

        Args:
            step: Optimiser steps done.
            epoch: Current epoch (from 1).
            states: Named objects with ``state_dict()`` (or state dicts themselves).
            run_id: MLflow run id to reopen on resume.
            extra: Plain values the trainer needs to resume (ints, floats, strings, lists, dicts).
        """
        self._write_marker()
        payload = {
            "format": CHECKPOINT_FORMAT,
            "step": int(step),
            "epoch": int(epoch),
            "config_hash": self.config_hash,
            "run_id": run_id,
            "states": {name: _state_dict(value) for name, value in states.items()},
            "rng": capture_rng_state(),
            "extra": dict(extra or {}),
        }
        path = self.directory / f"step-{int(step):08d}.pt"
        with atomic_path(path) as tmp:
            torch.save(payload, tmp)
        for old in self.paths()[: -self.keep]:
            old.unlink(missing_ok=True)
        return path

    def latest(self) -> Checkpoint | None:
        """The newest checkpoint that loads and was made by this config, or None to start fresh.

        Unreadable files are skipped with a warning. If the folder's checkpoints come from another
        config, they are moved aside first (:meth:`move_aside`) and None is returned.
        """
        marker = self._read_marker()
        if marker is not None and marker != self.config_hash:
            self.move_aside(marker)
            return None
        for path in reversed(self.paths()):
            try:
                checkpoint = load_checkpoint(path)
            except Exception as error:  # a truncated or garbled file: fall back to the previous one
                log.warning("checkpoint %s does not load (%s); trying the previous one", path, error)
                continue
            if checkpoint.config_hash != self.config_hash:
                self.move_aside(checkpoint.config_hash)
                return None
            return checkpoint
        return None

    def move_aside(self, old_hash: str | None = None) -> Path | None:
        """Move every checkpoint (and the config marker) into ``superseded/<time>-<old hash>/``."""
        files = self.paths() + [p for p in (self.directory / _MARKER,) if p.is_file()]
        if not files:
            return None
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        target = self.directory / _SUPERSEDED / f"{stamp}-{old_hash or 'unknown'}"
        target.mkdir(parents=True)
        for path in files:
            shutil.move(str(path), target / path.name)
        log.warning(
            "checkpoints in %s were made by another config (hash %s, now %s); moved to %s, starting fresh",
            self.directory,
            old_hash,
            self.config_hash,
            target,
        )
        return target

    def _read_marker(self) -> str | None:
        path = self.directory / _MARKER
        try:
            return json.loads(path.read_text(encoding="utf-8"))["config_hash"]
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError) as error:
            log.warning("unreadable %s (%s); checking the checkpoints themselves", path, error)
            return None

    def _write_marker(self) -> None:
        if self._read_marker() != self.config_hash:
            write_json(self.directory / _MARKER, {"config_hash": self.config_hash})


def load_checkpoint(path: str | Path) -> Checkpoint:
    """Load one checkpoint file (``weights_only=True``); raises on a damaged or foreign file."""
    path = Path(path)
    payload = torch.load(path, map_location="cpu", weights_only=True)
    if not isinstance(payload, dict) or payload.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"{path}: not a checkpoint of format {CHECKPOINT_FORMAT}")
    return Checkpoint(
        path=path,
        step=int(payload["step"]),
        epoch=int(payload["epoch"]),
        states=payload["states"],
        rng=payload["rng"],
        config_hash=payload["config_hash"],
        run_id=payload.get("run_id"),
        extra=payload.get("extra") or {},
    )
