"""The standalone aligner of FastPitch 1.1 / RAD-TTS: network, prior, losses and batches."""

from tts_pipeline.models.aligner.model import Aligner, AlignerOutput
from tts_pipeline.models.aligner.model_file import AlignerInfo, load_aligner, save_aligner

__all__ = ["Aligner", "AlignerInfo", "AlignerOutput", "load_aligner", "save_aligner"]
