"""The report pages stage's pieces that need no trained model: which plots become the report's figure items."""

from __future__ import annotations

import pytest

from tts_pipeline.errors import UserError


def test_the_report_s_alignment_item_falls_back_to_the_durations_figure(tmp_path):
    """Aligner and Tacotron 2 durations come with an attention figure; TextGrid durations have none."""
    from tts_pipeline.report.pages import FIGURES, first_figure

    plots = tmp_path / "plots"
    plots.mkdir()
    for name in ("B_durations.png", "A_durations.png", "A_mel_pitch.png"):
        (plots / name).write_bytes(b"png")
    assert first_figure(plots, FIGURES["alignment"]) == plots / "A_durations.png"
    (plots / "B_alignment.png").write_bytes(b"png")
    assert first_figure(plots, FIGURES["alignment"]) == plots / "B_alignment.png"
    (plots / "A_mel_pitch.png").unlink()
    with pytest.raises(UserError, match=r"no \*_mel_pitch.png figure in .*plots"):
        first_figure(plots, FIGURES["pitch"])
