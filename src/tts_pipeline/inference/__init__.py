"""Inference: phrase files, text encoding as the model was trained, FastPitch + HiFi-GAN synthesis
(denoised by :class:`tts_pipeline.models.denoiser.Denoiser`) and waveform post-processing (reference
section 5).

Typical use::

    options = SynthesisOptions.from_config(cfg.inference)
    synth = Synthesizer.load("hifigan/model.pt", "fastpitch/model.pt", options, device="cuda", amp="fp16")
    for phrase, utterance in zip(phrases, synth.synthesize([p.text for p in phrases]), strict=True):
        write_wav(out_dir / f"{phrase.name}.wav", utterance.audio, synth.audio.sampling_rate)
"""

from tts_pipeline.config import InferenceConfig
from tts_pipeline.inference.batching import pad_mels, pad_tokens, plan_batches
from tts_pipeline.inference.phrases import Phrase, read_phrases
from tts_pipeline.inference.postprocess import fade_out, normalize_peak, to_pcm16, write_wav
from tts_pipeline.inference.synthesizer import (
    BatchOutput,
    SynthesisOptions,
    Synthesizer,
    Utterance,
    check_audio_agreement,
)
from tts_pipeline.inference.text import TextEncoder

__all__ = [
    "BatchOutput",
    "InferenceConfig",
    "Phrase",
    "SynthesisOptions",
    "Synthesizer",
    "TextEncoder",
    "Utterance",
    "check_audio_agreement",
    "fade_out",
    "normalize_peak",
    "pad_mels",
    "pad_tokens",
    "plan_batches",
    "read_phrases",
    "to_pcm16",
    "write_wav",
]
