"""What the report's audio pages show: the clips, their versions and the notes under them.

Three groups (:mod:`.clips` writes each clip as one page, spectrograms side by side, each version
playable): ``held-out/``, the benchmark's listening examples (the recording, Griffin-Lim on its mel,
copy synthesis, FastPitch + vocoder from the text); ``vocoders/``, the first validation utterances
through the base and the fine-tuned vocoder (and WaveGlow) on the teacher-forced FastPitch mel: what
fine-tuning changes, by ear; ``from-text/``, the synthesised phrases (free text, so no recording).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from tts_pipeline.config import AudioConfig
    from tts_pipeline.report.clips import ClipPage

HELD_OUT_NOTE = (
    "A held-out sentence (never trained on): the recording, Griffin-Lim on its ground-truth mel (what the "
    "mel carries), the fine-tuned HiFi-GAN on that mel (copy synthesis) and FastPitch + HiFi-GAN from the "
    "text (and WaveGlow's copy synthesis and full TTS when the run builds a WaveGlow). Speech shows "
    "formants, harmonics that follow the pitch, and silences between phrases; a buzz shows flat horizontal "
    "lines. The benchmark page has the recogniser's figures."
)
VOCODER_NOTE = (
    "A validation utterance: the recording, then the base and the fine-tuned HiFi-GAN on the same "
    "teacher-forced FastPitch mel (what fine-tuning changes, by ear), and WaveGlow on it when the run "
    "builds one."
)
#: The label of the ground truth, first on every page that has one.
GROUND_TRUTH = "recording (ground truth)"
FROM_TEXT_NOTE = "{models} from free text: no recording of this sentence exists."


def mel_function(audio_cfg: AudioConfig) -> Callable[[np.ndarray], np.ndarray]:
    """Audio ``(N,)`` -> log-mel ``(n_mels, T)`` with the pipeline's mel function."""
    import numpy as np
    import torch

    from tts_pipeline.audio import MelSpectrogram

    module = MelSpectrogram(audio_cfg)

    def mel(audio: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return module(torch.from_numpy(np.ascontiguousarray(audio, dtype=np.float32))).numpy()

    return mel


def load_vocoders(hifigan_base: Path, hifigan_finetuned: Path, waveglow: Path | None) -> dict[str, tuple]:
    """Base and fine-tuned HiFi-GAN generators (and WaveGlow when ``waveglow`` names a model file): each a callable
    ``(1, n_mels, T)`` mel -> ``(1, 1, T * hop)`` audio with its model info."""
    from tts_pipeline.models.hifigan.model_file import load_generator

    fine_tuned = load_generator(hifigan_finetuned, remove_weight_norm=True)
    # A foreign base vocoder (hifigan.checkpoint from NVIDIA or jik876) records no audio settings: it
    # was fine-tuned under the ones the fine-tuned model file records.
    base = load_generator(hifigan_base, remove_weight_norm=True, audio=fine_tuned[1].audio)
    vocoders = {"base HiFi-GAN": base, "fine-tuned HiFi-GAN": fine_tuned}
    if waveglow is not None:
        from tts_pipeline.inference.waveglow_vocoder import DEFAULT_SIGMA, load_waveglow_vocoder

        # NVIDIA's inference sigma, no denoiser: the model's own sound.
        vocoders[f"WaveGlow (sigma {DEFAULT_SIGMA:g})"] = load_waveglow_vocoder(
            waveglow, audio=fine_tuned[1].audio
        )
    return vocoders


def held_out_clips(section: dict, audio_cfg: AudioConfig) -> list[ClipPage]:
    """The benchmark's listening examples (``report.json``'s ``quality.intelligibility``), one page each."""
    from tts_pipeline.audio import load_wav
    from tts_pipeline.report.clips import ClipPage, Version

    labels = {row["name"]: row["description"] for row in section.get("rows", [])} | {"recordings": GROUND_TRUTH}
    return [
        ClipPage(
            "held-out", example["id"], example["text"], HELD_OUT_NOTE,
            [Version(labels.get(name, name), load_wav(wav, audio_cfg.sampling_rate))
             for name, wav in example["wavs"].items()],
        )
        for example in section.get("examples", [])
    ]


def vocoder_clips(
    val_manifest: Path, fastpitch_mels_dir: Path, n_clips: int, vocoders: dict[str, tuple]
) -> list[ClipPage]:
    """Recording, base vocoder and fine-tuned vocoder on the FastPitch mel of the first ``n_clips`` val clips."""
    import numpy as np
    import torch

    from tts_pipeline.audio import load_wav
    from tts_pipeline.data.manifest import read_manifest
    from tts_pipeline.report.clips import ClipPage, Version

    rate = vocoders["fine-tuned HiFi-GAN"][1].audio.sampling_rate
    clips = []
    for record in read_manifest(val_manifest)[:n_clips]:
        utterance = record["id"]
        mel = torch.from_numpy(np.load(fastpitch_mels_dir / f"{utterance}.npy"))[None]
        versions = [Version(GROUND_TRUTH, load_wav(record["wav"], rate))]
        for label, (generator, _) in vocoders.items():
            with torch.inference_mode():
                versions.append(Version(f"{label} on the FastPitch mel", generator(mel)[0, 0].numpy()))
        clips.append(ClipPage("vocoders", utterance, record.get("text", ""), VOCODER_NOTE, versions))
    return clips


def from_text_clips(manifest: Path, audio_cfg: AudioConfig) -> list[ClipPage]:
    """The synthesised phrases (``R/inference/manifest.jsonl``), one page each."""
    from tts_pipeline.audio import load_wav
    from tts_pipeline.files import read_jsonl
    from tts_pipeline.report.clips import ClipPage, Version

    rate = audio_cfg.sampling_rate
    return [
        ClipPage(
            "from-text", record["name"], record.get("text", ""), FROM_TEXT_NOTE.format(models=models_label(record)),
            [Version(models_label(record), load_wav(manifest.parent / record["wav"], rate))],
        )
        for record in read_jsonl(manifest)
    ]


def models_label(record: dict) -> str:
    """Who spoke a synthesised phrase: its manifest record's ``vocoder`` (HiFi-GAN when it names none)."""
    return "FastPitch + WaveGlow" if record.get("vocoder") == "waveglow" else "FastPitch + fine-tuned HiFi-GAN"
