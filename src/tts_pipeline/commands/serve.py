"""Serve an exported voice over HTTP: OpenAI's speech endpoint, streamed WAV / PCM, FLAC, metrics.

VOICE is an export folder (the ``export_voice`` stage's ``R/export/``) or an MLflow ``models:/name@alias``
URI. Endpoints: ``POST /v1/audio/speech`` (``{"input": "...", "response_format": "wav"|"flac"|"pcm",
"speed": 0.25..4, "voice": "<the voice's name>"}``; the answer is audio), ``GET /healthz``,
``GET /metrics`` (Prometheus), ``GET /`` (a page to type a sentence and hear it). For example::

    tts-pipeline serve results/demo/export --port 8000
    curl -s localhost:8000/v1/audio/speech -H 'Content-Type: application/json' \\
        -d '{"input": "Hello there.", "response_format": "wav"}' -o hello.wav

At most ``--workers`` requests are synthesised at once and ``--queue`` more wait; beyond that the
server answers 429 with Retry-After. SIGTERM (or Ctrl-C) stops it gracefully: the requests in flight
finish, new ones are refused, and it exits 0.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

log = logging.getLogger(__name__)

ENGINES = ("onnx", "torch", "auto")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "voice", help="export folder, or a registered voice: models:/name@alias (MLflow's MLFLOW_TRACKING_URI)"
    )
    parser.add_argument(
        "--engine",
        choices=ENGINES,
        default="auto",
        help="auto (default: both timed once on this machine, the faster kept and cached; ONNX alone where the "
        "folder holds no .pt files), onnx (ONNX Runtime, no torch) or torch",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    parser.add_argument("--workers", type=int, default=1, help="requests synthesised at once (default 1)")
    parser.add_argument(
        "--queue", type=int, default=16, help="admitted requests waiting for a worker; more get 429 (default 16)"
    )
    parser.add_argument(
        "--max-chars", type=int, default=4096, help="longest input in characters; longer gets 413 (default 4096)"
    )
    parser.add_argument("--threads", type=int, help="intra-op threads per engine call (default: the engine's)")


def run(args: argparse.Namespace) -> None:
    from tts_pipeline.errors import UserError

    for name in ("workers", "max_chars", "threads"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise UserError(f"--{name.replace('_', '-')}: expected >= 1, got {value}")
    if args.queue < 0:
        raise UserError(f"--queue: expected >= 0, got {args.queue}")

    from tts_pipeline.serving.app import create_app
    from tts_pipeline.serving.server import serve
    from tts_pipeline.serving.speaker import Speaker
    from tts_pipeline.serving.voice_source import resolve_voice

    folder = resolve_voice(args.voice)
    engine = args.engine if args.engine != "auto" else auto_engine(folder, args.threads)
    speaker = Speaker.load(folder, engine=engine, threads=args.threads)
    app = create_app(speaker, workers=args.workers, queue=args.queue, max_chars=args.max_chars, engine=engine)
    log.info(
        "voice %r ready (%s engine, %d Hz); starting on http://%s:%d with %d worker(s) and a queue of %d",
        speaker.name, engine, speaker.sampling_rate, args.host, args.port, args.workers, args.queue,
    )  # fmt: skip
    serve(app, args.host, args.port, log_level="debug" if args.verbose else "info")


def auto_engine(folder: Path, threads: int | None) -> str:
    """The faster engine for ``folder`` on this machine (timed once, then cached)."""
    from tts_pipeline.serving.engine_choice import choose_engine

    engine = choose_engine(folder, threads)
    log.info("--engine auto: %s is the faster engine here", engine)
    return engine
