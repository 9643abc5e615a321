"""FastPitch's validation plots: a few utterances (mel, per-token pitch and durations, predicted against
target) for the tracking run; the validation losses are the teacher-forced loop's
(:class:`tts_pipeline.training.teacher_forced.TeacherForcedLoop`)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import torch

from tts_pipeline.models.fastpitch import FastPitch
from tts_pipeline.models.fastpitch.data import FastPitchBatch, PitchStats, Speakers, TextSettings
from tts_pipeline.training.engine import ArtifactSink


@torch.no_grad()
def log_plots(
    model: FastPitch,
    batch: FastPitchBatch,
    text: TextSettings,
    pitch: PitchStats,
    frame_period_s: float,
    sink: ArtifactSink,
    epoch: int,
    speakers: Speakers | None = None,
) -> None:
    """Plot each utterance of ``batch`` (teacher-forced, eval mode) under ``plots/epoch_<E>/``: the
    predicted mel over the target, and per token the predicted and target pitch (Hz; unvoiced targets
    left out; with ``speakers``, each utterance converted with its own speaker's statistics and the
    speaker named in the title) and durations (frames)."""
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
            stats, who = pitch, ""
            if speakers is not None and batch.speaker is not None:
                speaker = speakers.entries[int(batch.speaker[row])]
                stats, who = speaker.pitch, f" ({speaker.name})"
            title = f"{utterance_id}{who}, epoch {epoch} (teacher-forced)"
            figure = plots.mel_comparison(target_mel, predicted_mel, frame_period_s, title=title)
            sink.log_artifact(plots.save_figure(figure, folder / f"{utterance_id}_mel.png"), folder_name)
            target_norm = batch.pitch[row, :n_tokens].float().cpu().numpy()
            target_hz = np.where(target_norm != 0, stats.to_hz(target_norm), np.nan)
            predicted_hz = stats.to_hz(output.pitch[row, :n_tokens].float().cpu().numpy())
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
