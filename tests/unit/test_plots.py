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


def test_axes_say_what_they_show():
    """Every axis of the report's loss and alignment figures is labelled; losses get plain log ticks."""
    attention = np.full((6, 3), 1 / 3)
    figure = plots.alignment(attention, np.array([2, 2, 2]), ["a", " ", "b"], "alignment")
    axis, colour_bar = figure.axes
    assert (axis.get_xlabel(), axis.get_ylabel()) == ("mel frame", "input symbol")
    assert colour_bar.get_ylabel() == "soft attention weight"
    assert {label.get_fontsize() for label in axis.get_yticklabels()} == {8}

    history = [{"step": step, "loss": 12.0 / (1 + step)} for step in range(0, 100, 10)]
    (loss_axis,) = plots.loss_curves({"train_fastpitch": history}, {"train_fastpitch": ["loss"]}).axes
    assert (loss_axis.get_xlabel(), loss_axis.get_ylabel()) == ("optimiser step", "loss (log scale)")
    loss_axis.figure.canvas.draw()
    low, high = loss_axis.get_ylim()
    shown = [t.get_text() for t in loss_axis.get_yticklabels() if t.get_text() and low <= t.get_position()[1] <= high]
    assert len(shown) >= 3 and all("$" not in text for text in shown), shown
