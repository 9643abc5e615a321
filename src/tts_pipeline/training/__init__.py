"""Training loops and what they share: checkpoints (atomic, resumable) and model files."""
