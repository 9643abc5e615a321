"""FastPitch's validation: teacher-forced losses over the validation set, and plots of a few utterances
(mel, per-token pitch and durations, predicted against target) for the tracking run."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import torch
from torch.utils.data import DataLoader

from tts_pipeline.models.fastpitch import FastPitch
from tts_pipeline.models.fastpitch.data import FastPitchBatch, PitchStats, TextSettings
from tts_pipeline.training.engine import ArtifactSink
from tts_pipeline.training.fastpitch.state import FastPitchState
from tts_pipeline.training.fastpitch.step import Runtime, loss_names, loss_values


@torch.no_grad()
def evaluate(state: FastPitchState, runtime: Runtime, loader: DataLoader) -> dict[str, float]:
    """Teacher-forced validation losses (``val_`` + :func:`loss_names`), means over utterances; each
    rank evaluates its shard, and the sums are reduced. The model is in eval mode (no dropout)."""
    model = state.model
    was_training = model.training
    model.eval()
    names = loss_names(model.energy_conditioning)
    sums = [0.0] * (len(names) + 1)
    for raw in loader:
        batch = raw.to(runtime.context.device, non_blocking=True)
        _, terms = runtime.forward(model, batch)
        for index, value in enumerate(loss_values(terms)):
            sums[index] += float(value) * batch.size
        sums[-1] += batch.size
    model.train(was_training)
    totals = runtime.context.sum_floats(sums)
    items = totals[-1]
    if not items:
        return {}
    return {f"val_{name}": total / items for name, total in zip(names, totals[:-1], strict=True)}


@torch.no_grad()
def log_plots(
    model: FastPitch,
    batch: FastPitchBatch,
    text: TextSettings,
    pitch: PitchStats,
    frame_period_s: float,
    sink: ArtifactSink,
    epoch: int,
) -> None:
    """Plot each utterance of ``batch`` (teacher-forced, eval mode) under ``plots/epoch_<E>/``: the
    predicted mel over the target, and per token the predicted and target pitch (Hz; unvoiced targets
    left out) and durations (frames)."""
    from tts_pipeline import plots

    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    batch = batch.to(device)
    output = model(batch.inputs(), mel_max_len=int(batch.mels.shape[-1]))
    predicted_durations = (torch.exp(output.log_duration.float()) - 1.0).clamp_min(0.0).cpu().numpy()
    folder_name = f"plots/epoch_{epoch:05d}"
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for row, utterance_id in enumerate(batch.ids):
            n_frames, n_tokens = int(batch.mel_lengths[row]), int(batch.token_lengths[row])
            target_mel = batch.mels[row, :, :n_frames].float().cpu().numpy()
            predicted_mel = output.mel[row, :, :n_frames].float().cpu().numpy()
            title = f"{utterance_id}, epoch {epoch} (teacher-forced)"
            figure = plots.mel_comparison(target_mel, predicted_mel, frame_period_s, title=title)
            sink.log_artifact(plots.save_figure(figure, folder / f"{utterance_id}_mel.png"), folder_name)
            target_norm = batch.pitch[row, :n_tokens].float().cpu().numpy()
            target_hz = np.where(target_norm != 0, pitch.to_hz(target_norm), np.nan)
            predicted_hz = pitch.to_hz(output.pitch[row, :n_tokens].float().cpu().numpy())
            symbols = [_symbol(text, int(token)) for token in batch.tokens[row, :n_tokens].tolist()]
            target_durations = batch.durations[row, :n_tokens].cpu().numpy()
            panels = [
                ("pitch (Hz)", target_hz, predicted_hz),
                ("duration (frames)", target_durations, predicted_durations[row, :n_tokens]),
            ]
            figure = plots.token_comparison(symbols, panels, title=title)
            sink.log_artifact(plots.save_figure(figure, folder / f"{utterance_id}_tokens.png"), folder_name)
    model.train(was_training)


def _symbol(text: TextSettings, token: int) -> str:
    return text.symbols[token] if 0 <= token < len(text.symbols) else f"#{token}"
