"""Features computed from audio and alignments: pitch, per-symbol averages, durations."""
