"""Networks and their losses, one package per model: ``aligner``, ``fastpitch``, ``hifigan``, ``tacotron2``."""
