"""Metric names as the MLflow UI groups them.

MLflow's run page files each metric chart under the part of its name before the first ``/``. The
training loops name their figures ``train_<x>`` / ``val_<x>`` (the names of ``metrics.json``, the
progress lines and the logs); in MLflow they become ``train/<x>`` and ``val/<x>``, so a run's loss
curves fall into a "train" and a "val" section. Throughput and learning rates are training figures
too (the UI orders sections by name: a "speed" section would come before the losses).
"""

from __future__ import annotations

SECTION_PREFIXES = {"train_": "train/", "val_": "val/"}
SPEED_FIGURES = frozenset({"frames_per_s", "steps_per_s", "utterances_per_s", "samples_per_s"})
TRAINING_FIGURES = frozenset({"kl_weight", "grad_norm", "loss_scale"})


def dashboard_name(key: str) -> str:
    """``train_loss_mel`` -> ``train/loss_mel``, ``val_loss`` -> ``val/loss``, ``frames_per_s`` ->
    ``train/frames_per_s``, ``lr_gen`` -> ``train/lr_gen``; other names (``epoch``, ``n_valid``) unchanged."""
    for prefix, section in SECTION_PREFIXES.items():
        if key.startswith(prefix) and len(key) > len(prefix):
            return section + key[len(prefix) :]
    if key in SPEED_FIGURES or key.startswith("lr") or key in TRAINING_FIGURES:
        return f"train/{key}"
    return key
