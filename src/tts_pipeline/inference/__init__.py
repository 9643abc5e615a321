"""Inference: phrase files, text encoding as the model was trained, synthesis with an acoustic model and a
vocoder of the kinds of :mod:`tts_pipeline.config.model_kinds` (behind :mod:`.seams`; denoised by
:class:`tts_pipeline.models.denoiser.Denoiser`) and waveform post-processing (reference section 5).

Typical use::

    options = SynthesisOptions.from_config(cfg.inference)
    synth = Synthesizer.load(
        "fastpitch/model.pt", "hifigan/model.pt", options, vocoder_kind=cfg.inference.vocoder, device="cuda"
    )
    for phrase, utterance in zip(phrases, synth.synthesize([p.text for p in phrases]), strict=True):
        write_wav(out_dir / f"{phrase.name}.wav", utterance.audio, synth.audio.sampling_rate)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# name -> the module that defines it. Loaded on first use (PEP 562), so that the torch-free parts
# (phrases, text, chunking, post-processing) stay importable without torch: the ONNX speech server
# and the MLflow model import them and never import torch.
_EXPORTS = {
    "InferenceConfig": "tts_pipeline.config",
    "check_audio_agreement": "tts_pipeline.inference.agreement",
    "pad_mels": "tts_pipeline.inference.batching",
    "pad_tokens": "tts_pipeline.inference.batching",
    "plan_batches": "tts_pipeline.inference.batching",
    "SynthesisOptions": "tts_pipeline.inference.options",
    "Phrase": "tts_pipeline.inference.phrases",
    "read_phrases": "tts_pipeline.inference.phrases",
    "fade_out": "tts_pipeline.inference.postprocess",
    "normalize_peak": "tts_pipeline.inference.postprocess",
    "to_pcm16": "tts_pipeline.inference.postprocess",
    "write_wav": "tts_pipeline.inference.postprocess",
    "Synthesizer": "tts_pipeline.inference.synthesizer",
    "TextEncoder": "tts_pipeline.inference.text",
    "BatchOutput": "tts_pipeline.inference.utterance",
    "Utterance": "tts_pipeline.inference.utterance",
}

if TYPE_CHECKING:
    from tts_pipeline.config import InferenceConfig
    from tts_pipeline.inference.agreement import check_audio_agreement
    from tts_pipeline.inference.batching import pad_mels, pad_tokens, plan_batches
    from tts_pipeline.inference.options import SynthesisOptions
    from tts_pipeline.inference.phrases import Phrase, read_phrases
    from tts_pipeline.inference.postprocess import fade_out, normalize_peak, to_pcm16, write_wav
    from tts_pipeline.inference.synthesizer import Synthesizer
    from tts_pipeline.inference.text import TextEncoder
    from tts_pipeline.inference.utterance import BatchOutput, Utterance


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


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
