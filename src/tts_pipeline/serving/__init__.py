"""Serving an exported voice (the ``export_voice`` stage's folder): text in, audio out.

The voice:

- :mod:`.speaker`: :class:`~.speaker.Speaker`, the voice ready to speak: the card's text front end, an
  engine and the post-processing ``synthesize`` applies, whole or streamed chunk by chunk;
- :mod:`.engines`: the two engines that run the models (ONNX Runtime; the project's PyTorch path);
- :mod:`.streaming`: a piece's mel vocoded in chunks with context, equal to vocoding it whole;
- :mod:`.denoise`: the bias-spectrum denoiser in numpy;
- :mod:`.audio_formats`: WAV / FLAC / raw PCM bytes, and the streaming WAV header;
- :mod:`.engine_choice`: both engines timed side by side, the faster one chosen;
- :mod:`.voice_source`: a voice folder, or an MLflow ``models:/`` URI downloaded to one.

The HTTP server (``tts-pipeline serve``): :mod:`.app` (the FastAPI app), :mod:`.requests` (the request
and its refusals), :mod:`.workers` (bounded synthesis threads), :mod:`.metrics` (Prometheus),
:mod:`.body_limit`, :mod:`.server` (uvicorn and the graceful stop), ``page.html``.

The Model Registry: :mod:`.mlflow_model` (the voice as an MLflow pyfunc, text in, WAV out) and
:mod:`.registry` (logged and registered by ``export_voice``, a new version per changed voice).

The load test (``tts-pipeline bench-serve``): :mod:`.server_process` (a server in its own process),
:mod:`.load_test` and :mod:`.load_report`.

Nothing here imports torch unless the PyTorch engine is asked for.
"""
