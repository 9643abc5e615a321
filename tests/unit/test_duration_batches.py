"""The batching both model-based duration sources share: zero-padded inputs, and batches of similar
length written in a fixed order."""

from __future__ import annotations

import numpy as np

from tts_pipeline.data.feature_layout import FeatureLayout
from tts_pipeline.features.duration_batches import DurationJob, pad_batch, write_in_batches
from tts_pipeline.features.symbol_files import SplitCounts, Utterance
from tts_pipeline.files import save_npy


def test_pad_batch_zero_pads_texts_and_mels_to_the_longest():
    mels = [np.ones((2, 3), dtype=np.float32), np.full((2, 5), 2.0, dtype=np.float32)]
    text, mel, text_lengths, mel_lengths = pad_batch([[4, 5], [6, 7, 8]], mels)
    assert text.dtype == np.int64 and mel.dtype == np.float32
    np.testing.assert_array_equal(text, [[4, 5, 0], [6, 7, 8]])
    assert mel.shape == (2, 2, 5) and text_lengths == [2, 3] and mel_lengths == [3, 5]
    np.testing.assert_array_equal(mel[0, :, :3], 1.0)
    np.testing.assert_array_equal(mel[0, :, 3:], 0.0)
    np.testing.assert_array_equal(mel[1], 2.0)


def test_jobs_run_shortest_first_in_batches_and_every_utterance_gets_its_files(tmp_path):
    layout = FeatureLayout(tmp_path)
    frames = {"c": 4, "a": 6, "b": 4}
    jobs = []
    for utterance_id, n_frames in frames.items():
        save_npy(layout.mel(utterance_id), np.zeros((2, n_frames), dtype=np.float32))
        save_npy(layout.pitch(utterance_id), np.full(n_frames, 100.0, dtype=np.float32))
        jobs.append(DurationJob(n_frames, Utterance(utterance_id, "train", "x"), [1, 2]))
    batches = []

    def durations_of(texts, mels):
        batches.append([mel.shape[1] for mel in mels])
        return [np.array([mel.shape[1] - 1, 1], dtype=np.int32) for mel in mels]

    counts = {"train": SplitCounts()}
    write_in_batches(jobs, layout, 2, counts, durations_of)
    assert [job.utterance.id for job in jobs] == ["b", "c", "a"]  # by (frames, id)
    assert batches == [[4, 4], [6]]
    np.testing.assert_array_equal(np.load(layout.durations("a")), [5, 1])
    np.testing.assert_array_equal(np.load(layout.symbols("c")), [1, 2])
    assert counts["train"].n_utterances == 3 and counts["train"].n_frames == 14
