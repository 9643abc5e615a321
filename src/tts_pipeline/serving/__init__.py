"""Serving an exported voice (the ``export_voice`` stage's folder): text in, audio out.

- :mod:`.speaker`: :class:`~.speaker.Speaker`, the voice ready to speak: a text front end, an engine and
  the post-processing ``synthesize`` applies, whole or streamed chunk by chunk;
- :mod:`.engines`: the two engines that run the models (ONNX Runtime; the project's PyTorch path);
- :mod:`.streaming`: a piece's mel vocoded in chunks with context, equal to vocoding it whole;
- :mod:`.denoise`: the bias-spectrum denoiser in numpy;
- :mod:`.audio_formats`: WAV / FLAC / raw PCM bytes, and the streaming WAV header;
- :mod:`.engine_choice`: both engines timed side by side, the faster one chosen;
- the HTTP server (``tts-pipeline serve``), its load test (``bench-serve``) and the voice's source
  (a folder or an MLflow ``models:/`` URI).

Nothing here imports torch unless the PyTorch engine is asked for.
"""
