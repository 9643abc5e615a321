"""tts-pipeline: NVIDIA's FastPitch + HiFi-GAN recipe as a tracked, resumable Snakemake workflow."""

__version__ = "0.1.0"
