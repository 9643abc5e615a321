"""The standalone aligner of FastPitch 1.1 / RAD-TTS: network, prior, losses and batches."""

from tts_pipeline.models.aligner.model import Aligner, AlignerInfo, AlignerOutput, load_aligner

__all__ = ["Aligner", "AlignerInfo", "AlignerOutput", "load_aligner"]
