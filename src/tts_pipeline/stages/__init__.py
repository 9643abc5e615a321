"""One module per workflow rule (and a few helper commands); each is ``tts-pipeline <name>``."""
