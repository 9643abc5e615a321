"""HiFi-GAN datasets: segment lengths, padding, crop policies, fine-tuning mel/audio alignment."""

from __future__ import annotations

import dataclasses
import multiprocessing
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import torch
from torch.utils.data import DataLoader

from tts_pipeline.audio import MelSpectrogram, load_wav
from tts_pipeline.config import AudioConfig
from tts_pipeline.data.manifest_record import ManifestRecord
from tts_pipeline.errors import UserError
from tts_pipeline.models.hifigan.data import SILENCE_LOG_MEL, AudioSegments, MelAudioSegments

AUDIO = AudioConfig()
SEGMENT = 8192
HOP = AUDIO.hop_length


def write_clip(folder: Path, utterance_id: str, n_samples: int, seed: int) -> ManifestRecord:
    """A noise-like 16-bit clip (every segment is unique, so a crop reveals its offset); its record."""
    rng = np.random.default_rng(seed)
    pcm = (rng.standard_normal(n_samples) * 3000).clip(-32768, 32767).astype(np.int16)
    path = folder / f"{utterance_id}.wav"
    sf.write(path, pcm, AUDIO.sampling_rate, subtype="PCM_16")
    return ManifestRecord(id=utterance_id, wav=str(path), text="", n_samples=n_samples)


def offset_of(crop: np.ndarray, clip: np.ndarray) -> int:
    """Where ``crop`` (no padding) starts in ``clip``."""
    candidates = np.flatnonzero(clip[: clip.size - crop.size + 1] == crop[0])
    found = [int(c) for c in candidates if np.array_equal(clip[c : c + crop.size], crop)]
    assert len(found) == 1, found
    return found[0]


@pytest.fixture
def clips(tmp_path: Path) -> list[ManifestRecord]:
    """Two long clips (with a partial last frame) and one shorter than a segment."""
    return [
        write_clip(tmp_path, "long-a", 3 * SEGMENT + 1000, 1),
        write_clip(tmp_path, "long-b", 2 * SEGMENT + 77, 2),
        write_clip(tmp_path, "short", 5000, 3),
    ]


def write_mels(folder: Path, records: list[ManifestRecord]) -> Path:
    """Each clip's mel from the one mel function, as the features stage writes it."""
    mels = folder / "mels"
    mels.mkdir()
    mel = MelSpectrogram(AUDIO)
    for record in records:
        audio = torch.from_numpy(load_wav(record.wav, AUDIO.sampling_rate))
        np.save(mels / f"{record.id}.npy", mel(audio).numpy().astype(np.float32))
    return mels


# --------------------------------------------------------------------------------------------------
# base training segments
# --------------------------------------------------------------------------------------------------


def test_audio_segments_length_and_item_shape(clips: list[ManifestRecord]) -> None:
    dataset = AudioSegments(clips, AUDIO, SEGMENT)
    assert len(dataset) == 3
    assert len(AudioSegments(clips, AUDIO, SEGMENT, repeats=5)) == 15
    item = dataset[0]
    assert item["id"] == "long-a"
    assert item["audio"].shape == (SEGMENT,) and item["audio"].dtype == torch.float32
    assert "mel" not in item  # the trainer computes the input mel on the device
    assert dataset[-1]["id"] == "short"
    with pytest.raises(IndexError):
        dataset[3]


def test_audio_segments_are_crops_of_the_clip_at_the_pcm_scale(clips: list[ManifestRecord]) -> None:
    dataset = AudioSegments(clips, AUDIO, SEGMENT)
    clip = sf.read(clips[0].wav, dtype="int16")[0].astype(np.float32) / 32768.0  # no peak normalisation
    starts = set()
    for _ in range(8):
        crop = dataset[0]["audio"].numpy()
        start = offset_of(crop, clip)
        assert 0 <= start < clip.size - SEGMENT
        starts.add(start)
    assert len(starts) > 1  # fresh crops each time


def test_short_clips_are_zero_padded_at_the_end(clips: list[ManifestRecord]) -> None:
    item = AudioSegments(clips, AUDIO, SEGMENT, fixed_segments_seed=0)[2]
    clip = load_wav(clips[2].wav, AUDIO.sampling_rate)
    np.testing.assert_array_equal(item["audio"][:5000].numpy(), clip)
    assert torch.count_nonzero(item["audio"][5000:]) == 0


def test_a_clip_of_exactly_one_segment_is_used_whole(tmp_path: Path) -> None:
    record = write_clip(tmp_path, "exact", SEGMENT, 4)
    item = AudioSegments([record], AUDIO, SEGMENT)[0]
    np.testing.assert_array_equal(item["audio"].numpy(), load_wav(record.wav, AUDIO.sampling_rate))


def test_fixed_seed_crops_are_identical_across_instances_and_access_orders(clips: list[ManifestRecord]) -> None:
    first = AudioSegments(clips, AUDIO, SEGMENT, fixed_segments_seed=1234, repeats=5)
    second = AudioSegments(clips, AUDIO, SEGMENT, fixed_segments_seed=1234, repeats=5)
    forward = [first[i]["audio"] for i in range(len(first))]
    backward = [second[i]["audio"] for i in reversed(range(len(second)))][::-1]
    for a, b in zip(forward, backward, strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    # the repeats of one clip get different crops; another seed gives other crops
    assert not torch.equal(forward[0], forward[3])
    other = AudioSegments(clips, AUDIO, SEGMENT, fixed_segments_seed=99, repeats=5)
    assert not torch.equal(other[0]["audio"], forward[0])


def test_training_crops_follow_the_torch_seed_and_epoch(clips: list[ManifestRecord]) -> None:
    def crops(epoch: int) -> list[torch.Tensor]:
        torch.manual_seed(7)
        dataset = AudioSegments(clips[:2], AUDIO, SEGMENT, repeats=3)
        dataset.set_epoch(epoch)
        return [dataset[i]["audio"] for i in range(len(dataset))]

    again = crops(1)
    for a, b in zip(crops(1), again, strict=True):
        assert torch.equal(a, b)  # reproducible for a given (torch seed, epoch)
    assert not all(torch.equal(a, b) for a, b in zip(crops(2), again, strict=True))


def test_dataloader_workers_draw_different_crops(clips: list[ManifestRecord]) -> None:
    dataset = AudioSegments(clips[:1], AUDIO, SEGMENT, repeats=4)
    torch.manual_seed(0)
    loader = DataLoader(
        dataset, batch_size=1, num_workers=2, multiprocessing_context=multiprocessing.get_context("fork")
    )
    items = [batch["audio"][0] for batch in loader]  # items 0, 2 from worker 0; 1, 3 from worker 1
    assert not torch.equal(items[0], items[1])


def test_a_stale_manifest_length_is_reported(clips: list[ManifestRecord]) -> None:
    stale = [dataclasses.replace(clips[0], n_samples=123)]
    with pytest.raises(UserError, match=r"long-a.*123"):
        AudioSegments(stale, AUDIO, SEGMENT)[0]
    with pytest.raises(UserError, match="no utterances"):
        AudioSegments([], AUDIO, SEGMENT)
    with pytest.raises(ValueError, match="multiple"):
        AudioSegments(clips, AUDIO, 8000)


# --------------------------------------------------------------------------------------------------
# fine-tuning segments
# --------------------------------------------------------------------------------------------------


def test_fine_tuning_items_have_matching_mel_and_audio_crops(tmp_path: Path, clips: list[ManifestRecord]) -> None:
    mels = write_mels(tmp_path, clips)
    dataset = MelAudioSegments(clips, AUDIO, SEGMENT, mels, repeats=2)
    assert len(dataset) == 6
    mel_fn = MelSpectrogram(AUDIO)
    frames = SEGMENT // HOP
    for index in (0, 1, 3):
        item = dataset[index]
        record = clips[index % 3]
        assert item["mel"].shape == (80, frames) and item["mel"].dtype == torch.float32
        assert item["audio"].shape == (SEGMENT,)
        full_mel = np.load(mels / f"{record.id}.npy")
        start = offset_of(item["mel"].numpy()[0], full_mel[0])  # the crop's first frame in the file
        assert 0 <= start < full_mel.shape[1] - frames
        clip = load_wav(record.wav, AUDIO.sampling_rate)
        np.testing.assert_array_equal(item["audio"].numpy(), clip[start * HOP : start * HOP + SEGMENT])
        # mel frame i of the item is the mel of the item's audio (away from the reflect-padded edges)
        recomputed = mel_fn(item["audio"])
        torch.testing.assert_close(recomputed[:, 2:-2], item["mel"][:, 2:-2], atol=1e-4, rtol=1e-4)


def test_fine_tuning_pads_short_clips_with_zeros_and_silent_frames(tmp_path: Path, clips: list[ManifestRecord]) -> None:
    mels = write_mels(tmp_path, clips)
    item = MelAudioSegments(clips, AUDIO, SEGMENT, mels, fixed_segments_seed=0)[2]
    n_frames = 5000 // HOP
    np.testing.assert_array_equal(item["mel"][:, :n_frames].numpy(), np.load(mels / "short.npy"))
    assert torch.all(item["mel"][:, n_frames:] == SILENCE_LOG_MEL)
    assert torch.count_nonzero(item["audio"][5000:]) == 0
    # the padding value is what the one mel function gives for silence
    torch.testing.assert_close(MelSpectrogram(AUDIO)(torch.zeros(SEGMENT)), torch.full((80, 32), SILENCE_LOG_MEL))


def test_fine_tuning_fixed_seed_crops_are_identical_across_instances(
    tmp_path: Path, clips: list[ManifestRecord]
) -> None:
    mels = write_mels(tmp_path, clips)
    first = MelAudioSegments(clips, AUDIO, SEGMENT, mels, fixed_segments_seed=5, repeats=3)
    second = MelAudioSegments(clips, AUDIO, SEGMENT, mels, fixed_segments_seed=5, repeats=3)
    for index in range(len(first)):
        a, b = first[index], second[index]
        assert torch.equal(a["mel"], b["mel"]) and torch.equal(a["audio"], b["audio"])


def test_fine_tuning_mels_of_the_wrong_shape_are_reported_together(tmp_path: Path, clips: list[ManifestRecord]) -> None:
    mels = write_mels(tmp_path, clips)
    np.save(mels / "long-a.npy", np.zeros((80, 10), dtype=np.float32))  # wrong T
    np.save(mels / "long-b.npy", np.zeros((64, (2 * SEGMENT + 77) // HOP), dtype=np.float32))  # wrong n_mels
    (mels / "short.npy").unlink()
    with pytest.raises(UserError) as error:
        MelAudioSegments(clips, AUDIO, SEGMENT, mels)
    message = str(error.value)
    assert "3 problem(s)" in message
    assert "long-a" in message and "(80, 10)" in message and "(80, 99)" in message
    assert "long-b" in message and "(64, 64)" in message
    assert "short" in message and "missing" in message and str(mels / "short.npy") in message


# --------------------------------------------------------------------------------------------------
# pitch features (hifigan.source: harmonic)
# --------------------------------------------------------------------------------------------------


def write_pitch(folder: Path, records: list[ManifestRecord]) -> Path:
    """Pitch tracks whose frame i says ``100 + i`` Hz, so that a crop reveals the frames it took."""
    pitch = folder / "pitch"
    pitch.mkdir()
    for record in records:
        np.save(pitch / f"{record.id}.npy", 100 + np.arange(record.n_samples // HOP + 1, dtype=np.float32))
    return pitch


def test_items_carry_the_pitch_of_their_own_frames(tmp_path: Path, clips: list[ManifestRecord]) -> None:
    pitch = write_pitch(tmp_path, clips)
    frames = SEGMENT // HOP
    base = AudioSegments(clips, AUDIO, SEGMENT, fixed_segments_seed=3, pitch_dir=pitch)
    for index in range(2):  # the long clips: a crop from inside
        item = base[index]
        start = offset_of(item["audio"].numpy(), load_wav(clips[index].wav, AUDIO.sampling_rate))
        assert item["f0"].shape == (frames,)
        assert item["f0"].tolist() == [100.0 + round(start / HOP) + j for j in range(frames)]
    short = base[2]["f0"].numpy()  # past the clip's end the frames are unvoiced
    assert short[0] == 100.0 and short[-1] == 0.0

    tuned = MelAudioSegments(clips, AUDIO, SEGMENT, write_mels(tmp_path, clips), fixed_segments_seed=3, pitch_dir=pitch)
    item = tuned[0]
    start = offset_of(item["audio"].numpy(), load_wav(clips[0].wav, AUDIO.sampling_rate))
    assert item["f0"].tolist() == [100.0 + start // HOP + j for j in range(frames)]
    assert "f0" not in AudioSegments(clips, AUDIO, SEGMENT)[0]


def test_a_missing_pitch_file_names_the_utterance(tmp_path: Path, clips: list[ManifestRecord]) -> None:
    pitch = write_pitch(tmp_path, clips)
    (pitch / "long-b.npy").unlink()
    with pytest.raises(UserError, match="long-b"):
        AudioSegments(clips, AUDIO, SEGMENT, pitch_dir=pitch)[1]
