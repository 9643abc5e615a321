"""FastPitch 1.1 (without its aligner): transformer stacks, predictors, the model, its loss, pitch transforms."""

from tts_pipeline.models.fastpitch.loss import FastPitchLossTerms, fastpitch_loss
from tts_pipeline.models.fastpitch.model import (
    FastPitch,
    FastPitchInference,
    FastPitchInputs,
    FastPitchOutput,
    config_from_nvidia,
    convert_state_dict,
    length_regulate,
    pace_durations,
)
from tts_pipeline.models.fastpitch.pitch import PitchTransform
from tts_pipeline.models.fastpitch.predictors import TemporalPredictor
from tts_pipeline.models.fastpitch.transformer import FFTransformer, lengths_to_mask

__all__ = [
    "FFTransformer",
    "FastPitch",
    "FastPitchInference",
    "FastPitchInputs",
    "FastPitchLossTerms",
    "FastPitchOutput",
    "PitchTransform",
    "TemporalPredictor",
    "config_from_nvidia",
    "convert_state_dict",
    "fastpitch_loss",
    "length_regulate",
    "lengths_to_mask",
    "pace_durations",
]
