"""What the report's audio pages show: the clips, their versions and the notes under them.

Three groups (:mod:`.clips` writes each clip as one page, spectrograms side by side, each version
playable): ``held-out/``, the benchmark's listening examples (the recording, Griffin-Lim on its mel,
copy synthesis, FastPitch + vocoder from the text); ``vocoders/``, the first validation utterances
through the base and the fine-tuned vocoder (and every other vocoder of the run, e.g. WaveGlow) on the
teacher-forced FastPitch mel: what fine-tuning changes, by ear; ``from-text/``, the synthesised phrases
(free text, so no recording).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from tts_pipeline.benchmark.other_vocoders import VocoderFile
    from tts_pipeline.config import AudioConfig
    from tts_pipeline.inference.seams import LoadedVocoder
    from tts_pipeline.report.clips import ClipPage

HELD_OUT_NOTE = (
    "A held-out sentence (never trained on): the recording, Griffin-Lim on its ground-truth mel (what the "
    "mel carries), the fine-tuned HiFi-GAN on that mel (copy synthesis) and FastPitch + HiFi-GAN from the "
    "text (and WaveGlow's copy synthesis and full TTS when the run builds a WaveGlow, and FastPitch as each "
    "speaker of a multi-speaker model). Speech shows formants, harmonics that follow the pitch, and silences "
    "between phrases; a buzz shows flat horizontal lines. The benchmark page has the recogniser's figures."
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


FINE_TUNED = "fine-tuned HiFi-GAN"
"""The label of the fine-tuned HiFi-GAN, whose audio settings every page uses."""


def load_vocoders(
    hifigan_base: Path, hifigan_finetuned: Path, others: Sequence[VocoderFile] = ()
) -> dict[str, LoadedVocoder]:
    """The base and fine-tuned HiFi-GAN, then each vocoder of ``others``, by label, loaded through their
    kinds' modules (:mod:`tts_pipeline.inference.seams`): each model a callable ``(1, n_mels, T)`` mel ->
    ``(1, 1, T * hop)`` audio. The others run with their kinds' default settings (WaveGlow: NVIDIA's
    inference sigma) and no denoiser: each model's own sound."""
    from tts_pipeline.config.model_kinds import PIPELINE_VOCODER
    from tts_pipeline.inference.seams import vocoder_module

    hifigan = vocoder_module(PIPELINE_VOCODER)
    fine_tuned = hifigan.load(hifigan_finetuned, audio=None, settings={})
    # A foreign base vocoder (hifigan.checkpoint from NVIDIA or jik876) records no audio settings: it
    # was fine-tuned under the ones the fine-tuned model file records.
    base = hifigan.load(hifigan_base, audio=fine_tuned.audio, settings={})
    vocoders = {"base HiFi-GAN": base, FINE_TUNED: fine_tuned}
    for other in others:
        loaded = vocoder_module(other.kind.name).load(other.path, audio=fine_tuned.audio, settings={})
        vocoders[loaded.description] = loaded
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
    val_manifest: Path, fastpitch_mels_dir: Path, n_clips: int, vocoders: dict[str, LoadedVocoder]
) -> list[ClipPage]:
    """Recording, then each vocoder of :func:`load_vocoders` on the FastPitch mel of the first ``n_clips``
    val clips."""
    import numpy as np
    import torch

    from tts_pipeline.audio import load_wav
    from tts_pipeline.data.manifest import read_manifest
    from tts_pipeline.report.clips import ClipPage, Version

    rate = vocoders[FINE_TUNED].audio.sampling_rate
    clips = []
    for record in read_manifest(val_manifest)[:n_clips]:
        utterance = record.id
        mel = torch.from_numpy(np.load(fastpitch_mels_dir / f"{utterance}.npy"))[None]
        versions = [Version(GROUND_TRUTH, load_wav(record.wav, rate))]
        for label, vocoder in vocoders.items():
            with torch.inference_mode():
                versions.append(Version(f"{label} on the FastPitch mel", vocoder.model(mel)[0, 0].numpy()))
        clips.append(ClipPage("vocoders", utterance, record.text, VOCODER_NOTE, versions))
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
    """Who spoke a synthesised phrase: its manifest record's ``vocoder`` kind, by its label (the
    fine-tuned HiFi-GAN when it names none)."""
    from tts_pipeline.config.model_kinds import PIPELINE_VOCODER, vocoder_kind

    name = record.get("vocoder", PIPELINE_VOCODER)
    if name == PIPELINE_VOCODER:
        return f"FastPitch + fine-tuned {vocoder_kind(name).label}"
    return f"FastPitch + {vocoder_kind(name).label}"
