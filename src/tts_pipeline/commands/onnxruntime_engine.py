"""ONNX Runtime as an engine of ``bench-inference``'s side-by-side
(:mod:`tts_pipeline.benchmark.inference_sides`): the engine a user who wants fast CPU inference reaches
for, on the same models.

The synthesizer's float32 models are exported as the ``export_voice`` stage exports them (the export
graphs of their kinds, :func:`tts_pipeline.export.graphs.export_graph`, written by
:func:`tts_pipeline.export.onnx_file.write_onnx`: dynamic batch and lengths) into a folder, and run by
:class:`tts_pipeline.export.runtime.OnnxModel` on the CPU with the benchmark's intra-op thread count and
ONNX Runtime's default graph optimisation level, ``ORT_ENABLE_ALL`` (every optimisation). A timed
call includes the conversions between torch and numpy, as a server pays them. FastPitch's graph takes
the controls as inputs: the synthesizer's pace, no pitch change.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from tts_pipeline.benchmark.inference_sides import FASTPITCH, HIFIGAN, Engine
from tts_pipeline.config import model_kinds
from tts_pipeline.errors import UserError
from tts_pipeline.export.graphs import export_graph
from tts_pipeline.export.onnx_file import write_onnx
from tts_pipeline.export.runtime import OnnxModel
from tts_pipeline.inference import Synthesizer

ONNXRUNTIME = "onnxruntime"


def onnxruntime_engine(synth: Synthesizer, folder: Path, threads: int) -> Engine:
    """ONNX Runtime on ``synth``'s models, exported into ``folder`` (module docstring)."""
    if synth.acoustic_model is None:
        raise UserError("ONNX Runtime's side needs an acoustic model")
    acoustic_kind = model_kinds.acoustic_model_kind(synth.acoustic_model_kind)
    vocoder_kind = model_kinds.vocoder_kind(synth.vocoder_kind)
    files = {FASTPITCH: folder / "fastpitch.onnx", HIFIGAN: folder / "hifigan.onnx"}
    write_onnx(export_graph(acoustic_kind, synth.acoustic_model), files[FASTPITCH])
    write_onnx(export_graph(vocoder_kind, synth.vocoder), files[HIFIGAN])
    acoustic, vocoder = (OnnxModel(files[name], threads=threads) for name in (FASTPITCH, HIFIGAN))
    level = acoustic.session.get_session_options().graph_optimization_level.name
    pace = float(synth.options.pace)

    def fastpitch(tokens: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        batch = tokens.shape[0]
        controls = [np.full(batch, value, dtype=np.float32) for value in (pace, 0.0, 1.0)]
        mel, _, _ = acoustic(tokens.cpu().numpy(), lengths.cpu().numpy(), *controls)
        return torch.from_numpy(mel)

    def run_vocoder(mel: torch.Tensor) -> torch.Tensor:
        (audio,) = vocoder(mel.float().cpu().numpy())
        return torch.from_numpy(audio)

    label = f"ONNX Runtime (fp32, {level})"
    return Engine(ONNXRUNTIME, fastpitch, run_vocoder, {FASTPITCH: label, HIFIGAN: label})
