"""NVIDIA's Tacotron 2 (FastPitch 1.0's source of durations): network, loss, model file and NVIDIA's checkpoints."""

from tts_pipeline.models.tacotron2.config import Tacotron2Config
from tts_pipeline.models.tacotron2.layers import lengths_to_mask
from tts_pipeline.models.tacotron2.loss import Tacotron2LossTerms, gate_targets, off_diagonal_attention, tacotron2_loss
from tts_pipeline.models.tacotron2.model import Tacotron2, Tacotron2Inference, Tacotron2Output
from tts_pipeline.models.tacotron2.model_file import Tacotron2Info, load_tacotron2, save_tacotron2

__all__ = [
    "Tacotron2",
    "Tacotron2Config",
    "Tacotron2Inference",
    "Tacotron2Info",
    "Tacotron2LossTerms",
    "Tacotron2Output",
    "gate_targets",
    "lengths_to_mask",
    "load_tacotron2",
    "off_diagonal_attention",
    "save_tacotron2",
    "tacotron2_loss",
]
