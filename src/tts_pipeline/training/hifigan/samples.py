"""Audio samples for listening during training: whole validation utterances synthesised by the current
generator, logged with their mel-spectrograms to the tracking run."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from tts_pipeline.audio import MelSpectrogram, load_wav
from tts_pipeline.config import AudioConfig
from tts_pipeline.data.manifest_record import ManifestRecord
from tts_pipeline.models.hifigan import Generator
from tts_pipeline.training.engine import ArtifactSink


@dataclass
class SampleClip:
    """A whole validation utterance for listening: ``audio`` float32 ``(N,)``, ``mel`` ``(n_mels, N // hop)``."""

    id: str
    audio: np.ndarray
    mel: torch.Tensor


def load_sample_clips(
    records: Sequence[ManifestRecord], audio_cfg: AudioConfig, count: int, mels_dir: Path | None = None
) -> list[SampleClip]:
    """The first ``count`` utterances of ``records`` with their generator input mels (computed by the
    one mel function, or read from ``mels_dir`` when fine-tuning)."""
    mel_fn = MelSpectrogram(audio_cfg)
    clips = []
    for record in list(records)[:count]:
        audio = load_wav(record.wav, audio_cfg.sampling_rate, audio_cfg.max_wav_value)
        if mels_dir is not None:
            mel = torch.from_numpy(np.load(Path(mels_dir) / f"{record.id}.npy").astype(np.float32))
        else:
            mel = mel_fn(torch.from_numpy(audio))
        clips.append(SampleClip(id=record.id, audio=audio, mel=mel))
    return clips


@torch.no_grad()
def log_samples(
    generator: Generator,
    clips: Sequence[SampleClip],
    audio_cfg: AudioConfig,
    sink: ArtifactSink,
    epoch: int,
    *,
    with_ground_truth: bool,
) -> None:
    """Synthesise each clip whole (batch 1, eval mode) and log the WAV and a mel-spectrogram PNG
    (generated over ground truth) under ``samples/epoch_<E>/``; the ground-truth WAVs once under
    ``samples/ground_truth/``."""
    import soundfile as sf

    from tts_pipeline import plots

    device = next(generator.parameters()).device
    mel_fn = MelSpectrogram(audio_cfg)
    was_training = generator.training
    generator.eval()
    frame_period = audio_cfg.hop_length / audio_cfg.sampling_rate
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for clip in clips:
            audio = generator(clip.mel.unsqueeze(0).to(device)).squeeze().float().cpu()
            wav = folder / f"{clip.id}.wav"
            sf.write(wav, audio.numpy(), audio_cfg.sampling_rate, subtype="PCM_16")
            sink.log_artifact(wav, f"samples/epoch_{epoch:05d}")
            figure = plots.mel_comparison(
                clip.mel.numpy(), mel_fn(audio).numpy(), frame_period, title=f"{clip.id}, epoch {epoch}"
            )
            sink.log_artifact(plots.save_figure(figure, folder / f"{clip.id}.png"), f"samples/epoch_{epoch:05d}")
            if with_ground_truth:
                truth = folder / "ground_truth" / f"{clip.id}.wav"
                truth.parent.mkdir(exist_ok=True)
                sf.write(truth, clip.audio, audio_cfg.sampling_rate, subtype="PCM_16")
                sink.log_artifact(truth, "samples/ground_truth")
    generator.train(was_training)
