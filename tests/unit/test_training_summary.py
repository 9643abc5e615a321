"""The end-of-training log line every training stage writes (stages.common.training_summary)."""

from __future__ import annotations

from tts_pipeline.stages.common import training_summary


def test_the_line_names_the_loss_its_change_the_rate_and_the_size():
    metrics = {"val_loss_mel_start": 58.384, "val_loss_mel": 1.23456, "frames_per_s": 1234.5, "n_params": 13936130}
    line = training_summary("train_hifigan", 120, 40, metrics, loss="val_loss_mel")
    assert line == (
        "train_hifigan: step 120, epoch 40, val loss mel 58.38 -> 1.235, 1234 frames/s, 13,936,130 parameters"
    )


def test_figures_never_measured_read_n_a():
    line = training_summary("train_waveglow", 3, 1, {"samples_per_s": 800.0}, rate="samples_per_s")
    assert line == "train_waveglow: step 3, epoch 1, val loss n/a -> n/a, 800 samples/s"
