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
from tts_pipeline.features.layout import FeatureLayout


def mel_pitch_figures(records: Sequence[dict[str, Any]], layout: FeatureLayout, audio: AudioConfig) -> list[Path]:
    """``<features>/plots/<id>_mel_pitch.png`` for each record (a manifest record with ``id``)."""
    written = []
    for record in records:
        mel = np.load(layout.mel(record["id"]))
        pitch = np.load(layout.pitch(record["id"]))
        figure = plots.mel_with_pitch(mel, pitch, audio.hop_length / audio.sampling_rate, f"{record['id']}: mel and f0")
        written.append(plots.save_figure(figure, layout.plots / f"{record['id']}_mel_pitch.png"))
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


def load_figure_aligner(aligner_path: str) -> tuple[Any, float] | None:
    """``(model in eval mode, prior_scaling)`` of an aligner file for :func:`duration_figures`;
    None for ``""`` (durations that did not come from an aligner)."""
    if not aligner_path:
        return None
    from tts_pipeline.models.aligner import load_aligner

    model, info = load_aligner(aligner_path)
    return model.eval(), float(info.prior_scaling or 0.0)


def duration_figures(
    records: Sequence[dict[str, Any]],
    layout: FeatureLayout,
    symbol_table: Sequence[str],
    audio: AudioConfig,
    aligner: tuple[Any, float] | None = None,
) -> list[Path]:
    """Durations over the waveform, and (with ``aligner = (model, prior_scaling)``) attention + path,
    as ``<features>/plots/<id>_durations.png`` and ``<id>_alignment.png``."""
    written = []
    for record in records:
        utterance_id = record["id"]
        durations = np.load(layout.durations(utterance_id))
        symbol_ids = np.load(layout.symbols(utterance_id))
        labels = [symbol_table[i] for i in symbol_ids]
        if Path(record.get("wav", "")).is_file():  # figures are a view, never a reason to fail a stage
            wav = load_wav(record["wav"], audio.sampling_rate, audio.max_wav_value)
            figure = plots.durations_over_waveform(
                wav, audio.sampling_rate, durations, labels, audio.hop_length, f"{utterance_id}: durations"
            )
            written.append(plots.save_figure(figure, layout.plots / f"{utterance_id}_durations.png"))
        if aligner is not None:
            model, prior_scaling = aligner
            mel = np.load(layout.mel(utterance_id))
            soft = attention(model, prior_scaling, symbol_ids, mel)
            figure = plots.alignment(soft, durations, labels, f"{utterance_id}: attention and MAS path")
            written.append(plots.save_figure(figure, layout.plots / f"{utterance_id}_alignment.png"))
    return written
