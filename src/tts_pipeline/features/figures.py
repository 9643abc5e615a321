"""Figures of a few validation utterances, for MLflow and the report: is what we extracted right?

- ``features``: the log-mel with the f0 track over it;
- ``durations``: the aligner's soft attention with the MAS path over it, and the symbol boundaries
  over the waveform.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tts_pipeline import plots
from tts_pipeline.audio import load_wav
from tts_pipeline.config import AudioConfig


def mel_pitch_figures(
    records: Sequence[dict[str, Any]], features_dir: Path, audio: AudioConfig, out_dir: Path
) -> list[Path]:
    """``<out_dir>/<id>_mel_pitch.png`` for each record (a manifest record with ``id``)."""
    written = []
    for record in records:
        mel = np.load(features_dir / "mels" / f"{record['id']}.npy")
        pitch = np.load(features_dir / "pitch" / f"{record['id']}.npy")
        figure = plots.mel_with_pitch(mel, pitch, audio.hop_length / audio.sampling_rate, f"{record['id']}: mel and f0")
        written.append(plots.save_figure(figure, out_dir / f"{record['id']}_mel_pitch.png"))
    return written


def attention(model: Any, prior_scaling: float, symbol_ids: np.ndarray, mel: np.ndarray) -> np.ndarray:
    """Soft attention ``(T, L)`` of the aligner for one utterance (ids ``(L,)``, mel ``(n_mels, T)``)."""
    import torch

    from tts_pipeline.models.aligner.prior import beta_binomial_prior

    prior = None
    if prior_scaling > 0:
        prior = torch.tensor(beta_binomial_prior(mel.shape[1], len(symbol_ids), prior_scaling)).unsqueeze(0)
    with torch.no_grad():
        output = model(
            torch.from_numpy(symbol_ids.astype(np.int64)).unsqueeze(0),
            torch.tensor([len(symbol_ids)]),
            torch.from_numpy(mel).unsqueeze(0),
            prior=prior,
        )
    return output.attn_soft[0, 0].numpy()


def duration_figures(
    records: Sequence[dict[str, Any]],
    features_dir: Path,
    symbol_table: Sequence[str],
    audio: AudioConfig,
    out_dir: Path,
    aligner: tuple[Any, float] | None = None,
) -> list[Path]:
    """Durations over the waveform, and (with ``aligner = (model, prior_scaling)``) attention + path."""
    written = []
    for record in records:
        utterance_id = record["id"]
        durations = np.load(features_dir / "durations" / f"{utterance_id}.npy")
        symbol_ids = np.load(features_dir / "symbols" / f"{utterance_id}.npy")
        labels = [symbol_table[i] for i in symbol_ids]
        if Path(record.get("wav", "")).is_file():  # figures are a view, never a reason to fail a stage
            wav = load_wav(record["wav"], audio.sampling_rate, audio.max_wav_value)
            figure = plots.durations_over_waveform(
                wav, audio.sampling_rate, durations, labels, audio.hop_length, f"{utterance_id}: durations"
            )
            written.append(plots.save_figure(figure, out_dir / f"{utterance_id}_durations.png"))
        if aligner is not None:
            model, prior_scaling = aligner
            mel = np.load(features_dir / "mels" / f"{utterance_id}.npy")
            soft = attention(model, prior_scaling, symbol_ids, mel)
            figure = plots.alignment(soft, durations, labels, f"{utterance_id}: attention and MAS path")
            written.append(plots.save_figure(figure, out_dir / f"{utterance_id}_alignment.png"))
    return written
