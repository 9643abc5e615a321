"""Figures of a few validation utterances, for MLflow and the report: is what we extracted right?

- ``features``: the log-mel with the f0 track over it;
- ``durations``: the attention the durations came from (the aligner's soft attention with the MAS
  path over it, or Tacotron 2's teacher-forced attention with the counted durations), and the symbol
  boundaries over the waveform.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from tts_pipeline import plots
from tts_pipeline.audio import load_wav
from tts_pipeline.config import AudioConfig
from tts_pipeline.data.feature_layout import FeatureLayout
from tts_pipeline.data.manifest_record import ManifestRecord


def mel_pitch_figures(records: Sequence[ManifestRecord], layout: FeatureLayout, audio: AudioConfig) -> list[Path]:
    """``<features>/plots/<id>_mel_pitch.png`` for each record."""
    written = []
    for record in records:
        mel = np.load(layout.mel(record.id))
        pitch = np.load(layout.pitch(record.id))
        figure = plots.mel_with_pitch(mel, pitch, audio.hop_length / audio.sampling_rate, f"{record.id}: mel and f0")
        written.append(plots.save_figure(figure, layout.plots / f"{record.id}_mel_pitch.png"))
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


class FigureAttention(NamedTuple):
    """How to draw the attention behind the durations: ``attend(symbol_ids (L,), mel (n_mels, T))``
    gives the attention ``(T, L)``; ``title`` names it under the utterance id, ``path`` the durations
    drawn over it in the legend."""

    attend: Callable[[np.ndarray, np.ndarray], np.ndarray]
    title: str
    path: str


def load_figure_attention(aligner_path: str = "", tacotron2_path: str = "") -> FigureAttention | None:
    """The attention of the model the durations came from, for :func:`duration_figures`: the aligner's
    (with its prior) or Tacotron 2's (teacher-forced, its prenet dropout seeded as in extraction);
    None when neither file is given (TextGrid durations)."""
    if aligner_path:
        from tts_pipeline.models.aligner import load_aligner

        model, info = load_aligner(aligner_path)
        model.eval()
        prior_scaling = float(info.prior_scaling or 0.0)
        return FigureAttention(
            lambda ids, mel: attention(model, prior_scaling, ids, mel), "attention and MAS path", "hard path (MAS)"
        )
    if tacotron2_path:
        import torch

        from tts_pipeline.features.durations_from_tacotron2 import SEED, teacher_forced_attention
        from tts_pipeline.models.tacotron2 import load_tacotron2

        tacotron2, _ = load_tacotron2(tacotron2_path)
        tacotron2 = tacotron2.to("cpu").eval()

        def attend(ids: np.ndarray, mel: np.ndarray) -> np.ndarray:
            torch.manual_seed(SEED)
            return teacher_forced_attention(tacotron2, [ids.astype(np.int64).tolist()], [mel])[0]

        return FigureAttention(
            attend, "Tacotron 2 attention (teacher-forced) and counted durations", "durations (argmax per frame)"
        )
    return None


def duration_figures(
    records: Sequence[ManifestRecord],
    layout: FeatureLayout,
    symbol_table: Sequence[str],
    audio: AudioConfig,
    attention_source: FigureAttention | None = None,
) -> list[Path]:
    """Durations over the waveform, and (with ``attention_source``) the attention with the durations
    over it, as ``<features>/plots/<id>_durations.png`` and ``<id>_alignment.png``."""
    written = []
    for record in records:
        utterance_id = record.id
        durations = np.load(layout.durations(utterance_id))
        symbol_ids = np.load(layout.symbols(utterance_id))
        labels = [symbol_table[i] for i in symbol_ids]
        if Path(record.wav).is_file():  # figures are a view, never a reason to fail a stage
            wav = load_wav(record.wav, audio.sampling_rate, audio.max_wav_value)
            figure = plots.durations_over_waveform(
                wav, audio.sampling_rate, durations, labels, audio.hop_length, f"{utterance_id}: durations"
            )
            written.append(plots.save_figure(figure, layout.plots / f"{utterance_id}_durations.png"))
        if attention_source is not None:
            mel = np.load(layout.mel(utterance_id))
            soft = attention_source.attend(symbol_ids, mel)
            figure = plots.alignment(
                soft, durations, labels, f"{utterance_id}: {attention_source.title}", attention_source.path
            )
            written.append(plots.save_figure(figure, layout.plots / f"{utterance_id}_alignment.png"))
    return written
