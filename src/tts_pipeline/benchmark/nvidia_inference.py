"""NVIDIA's FastPitch and HiFi-GAN inference code as an engine of the side-by-side benchmark
(:mod:`tts_pipeline.benchmark.inference_sides`), with the synthesizer's weights.

Their side runs as their ``inference.py`` runs it on a CPU: ``torch.no_grad()``, float32, no
TorchScript. FastPitch's ``infer`` gets the symbols; with random weights it also gets our fixed
durations as ``dur_tgt`` (:func:`tts_pipeline.benchmark.nvidia_twins.fastpitch_twin`), so both sides
decode the same number of frames. The generator is their ``Generator`` with our weights, weight norm
folded as ours is.
"""

from __future__ import annotations

import torch

from tts_pipeline.benchmark.inference_sides import FASTPITCH, HIFIGAN, Engine
from tts_pipeline.benchmark.nvidia_code import NvidiaCode
from tts_pipeline.benchmark.nvidia_twins import fastpitch_twin, generator_twin
from tts_pipeline.inference import Synthesizer
from tts_pipeline.models.fastpitch import FastPitch

NVIDIA = "nvidia"


def nvidia_engine(code: NvidiaCode, synth: Synthesizer) -> Engine:
    """NVIDIA's models with ``synth``'s weights on its device (module docstring)."""
    if not isinstance(synth.acoustic_model, FastPitch):
        raise ValueError("NVIDIA's side: the synthesizer has no FastPitch model")
    device = synth.device
    their_fastpitch, durations = fastpitch_twin(code, synth.acoustic_model)
    their_fastpitch.to(device)
    if durations is not None:
        durations = durations.to(device)
    their_vocoder = generator_twin(code, synth.vocoder).to(device).eval()

    def fastpitch(tokens: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        dur_tgt = None if durations is None else durations[: tokens.shape[1]].expand(tokens.shape[0], -1)
        with torch.no_grad():
            return their_fastpitch.infer(tokens, dur_tgt=dur_tgt)[0]

    def vocoder(mel: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            return their_vocoder(mel)

    label = "NVIDIA (fp32)"
    return Engine(NVIDIA, fastpitch, vocoder, {FASTPITCH: label, HIFIGAN: label})
