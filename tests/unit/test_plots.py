"""Plots render to real PNG files."""

from __future__ import annotations

import numpy as np

from tts_pipeline import plots


def _is_png(path) -> bool:
    return path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 1000


def test_every_plot_renders(tmp_path):
    rng = np.random.default_rng(0)
    mel = rng.standard_normal((80, 50)).astype(np.float32)
    pitch = np.where(np.arange(50) % 10 < 7, 200.0, 0.0)
    durations = np.array([10, 15, 25])
    attention = rng.random((50, 3))
    attention /= attention.sum(axis=1, keepdims=True)
    figures = {
        "mel.png": plots.mel_with_pitch(mel, pitch, 256 / 22050, "mel"),
        "align.png": plots.alignment(attention, durations, ["a", " ", "b"], "alignment"),
        "dur.png": plots.durations_over_waveform(rng.standard_normal(50 * 256), 22050, durations, ["a", " ", "b"], 256),
    }
    for name, figure in figures.items():
        assert _is_png(plots.save_figure(figure, tmp_path / name))
