"""WaveGlow, NVIDIA's flow vocoder of the FastPitch 1.0 / Tacotron 2 recipe: the network
(:mod:`~tts_pipeline.models.waveglow.model`), its likelihood loss, the bias-spectrum denoiser
(:mod:`~tts_pipeline.models.waveglow.denoiser`), NVIDIA's checkpoints
(:mod:`~tts_pipeline.models.waveglow.foreign`) and the model file
(:mod:`~tts_pipeline.models.waveglow.model_file`)."""

from tts_pipeline.models.waveglow.denoiser import WaveGlowDenoiser
from tts_pipeline.models.waveglow.loss import waveglow_loss
from tts_pipeline.models.waveglow.model import HOP_LENGTH, WaveGlow, WaveGlowConfig, WaveGlowOutput

__all__ = ["HOP_LENGTH", "WaveGlow", "WaveGlowConfig", "WaveGlowDenoiser", "WaveGlowOutput", "waveglow_loss"]
