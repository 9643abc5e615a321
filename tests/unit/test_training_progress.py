"""The terminal's training progress line: throttled, short, with losses and the time left."""

from __future__ import annotations

import io

from tts_pipeline.training.progress import MAX_LINE, ProgressLine, format_duration


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_line_per_interval_with_losses_and_time_left():
    clock, out = Clock(), io.StringIO()
    progress = ProgressLine("hifigan", total_epochs=10, every_s=15, stream=out, clock=clock)
    clock.now += 4
    line = progress.epoch_done(1, 20, {"epoch": 1.0, "train_loss_mel": 0.51234, "val_loss": 0.6, "frames_per_s": 9.0})
    assert line == "hifigan: epoch 1/10 (step 20): train_loss_mel 0.5123, val_loss 0.6; 4.0 s/epoch, about 36 s left"
    clock.now += 4
    assert progress.epoch_done(2, 40, {"train_loss": 0.4}) is None  # 4 s after the last line: quiet
    clock.now += 28
    assert progress.epoch_done(3, 60, {"train_loss": 0.3}).endswith("12.0 s/epoch, about 1 min 24 s left")
    clock.now += 1
    assert progress.epoch_done(10, 200, {"train_loss": 0.2}).endswith(", done")  # the last epoch always prints
    assert out.getvalue().count("\n") == 3


def test_lines_stay_short_and_a_resumed_run_counts_its_own_epochs():
    clock, out = Clock(), io.StringIO()
    progress = ProgressLine("fastpitch", total_epochs=1000, stream=out, clock=clock)
    clock.now += 10
    figures = {f"train_loss_component_number_{i}": 1.0 / (i + 1) for i in range(40)}
    line = progress.epoch_done(501, 9000, figures)
    assert len(line) <= MAX_LINE and line.startswith("fastpitch: epoch 501/1000 (step 9000): train_loss_")
    assert "10.0 s/epoch, about 1 h 23 min left" in line


def test_durations_read_as_a_person_reads_them():
    assert [format_duration(s) for s in (0.4, 42, 185, 3720)] == ["0 s", "42 s", "3 min 05 s", "1 h 02 min"]
