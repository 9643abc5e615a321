"""The speech server as an ASGI app (FastAPI): one exported voice behind OpenAI's speech endpoint.

- ``POST /v1/audio/speech``: ``{"input", "voice"?, "response_format"?, "speed"?, "model"?}`` ->
  audio bytes. ``wav`` and ``pcm`` are streamed as the speaker makes them (chunked transfer; a WAV's
  header says "length unknown" and leaves with the first audio), ``flac`` is encoded whole at the end.
  ``X-Sample-Rate`` says the rate; raw PCM is ``audio/L16; rate=...; channels=1``.
- ``GET /healthz``: the voice, its engine and rate, the workers and the queue (503 while stopping).
- ``GET /metrics``: Prometheus text (:mod:`.metrics`).
- ``GET /``: a page to type a sentence and hear it.

Refusals are JSON in OpenAI's error shape, naming the field: 400 for a bad request (bad JSON, wrong
types, empty text, unknown voice or format, text the voice cannot speak), 413 over ``max_chars``
characters or an oversized body, 429 (with ``Retry-After``) when ``workers + queue`` requests are
already admitted, 503 once shutdown has begun. A client that leaves mid-stream stops its synthesis
and frees its worker (:mod:`.workers`).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from importlib import resources
from typing import Any, Protocol

import numpy as np
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.exceptions import HTTPException
from starlette.types import Receive, Scope, Send

from tts_pipeline.errors import UserError
from tts_pipeline.serving import audio_formats
from tts_pipeline.serving.body_limit import BodyLimit
from tts_pipeline.serving.metrics import CONTENT_TYPE, ServerMetrics
from tts_pipeline.serving.requests import DEFAULT_VOICE, SpeechRequest, error_body, validation_message
from tts_pipeline.serving.workers import ChunkStream, Refused, SynthesisPool

log = logging.getLogger(__name__)

SPEECH_PATH = "/v1/audio/speech"
DEFAULT_MAX_CHARS = 4096  # OpenAI's limit on ``input``
# what a refused client is told to wait, in seconds: about one short request's synthesis
RETRY_AFTER_SECONDS = 1
# room in a body beside its text (the other fields, JSON escapes); text is at most 4 bytes a character
BODY_SLACK_BYTES = 1 << 20


class Voice(Protocol):
    """What the app needs of :class:`tts_pipeline.serving.speaker.Speaker`."""

    name: str
    sampling_rate: int

    def stream(self, text: str, speed: float = 1.0) -> Any: ...


def create_app(
    speaker: Voice, *, workers: int = 1, queue: int = 16, max_chars: int = DEFAULT_MAX_CHARS, engine: str = ""
) -> FastAPI:
    """The app serving ``speaker`` with ``workers`` synthesis threads and ``queue`` waiting requests.

    ``engine`` names the speaker's engine in ``/healthz`` (default: the speaker's ``engine_name``).
    """
    if max_chars < 1:
        raise ValueError(f"max_chars: expected >= 1, got {max_chars}")
    pool = SynthesisPool(workers, queue)
    metrics = ServerMetrics(queue_depth=lambda: pool.gate.waiting, in_flight=lambda: pool.gate.admitted)
    engine = engine or str(getattr(speaker, "engine_name", "") or "")
    page = resources.files("tts_pipeline.serving").joinpath("page.html").read_text(encoding="utf-8")

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        # uvicorn has let every in-flight request finish; nothing is left to wait for but idle threads
        pool.shutdown()

    app = FastAPI(
        title="tts-pipeline speech server",
        summary=f"The voice {speaker.name!r} behind OpenAI's speech endpoint",
        lifespan=lifespan,
        docs_url=None,  # the interactive docs load their scripts from a CDN; /openapi.json stays
        redoc_url=None,
    )
    body_limit = 4 * max_chars + BODY_SLACK_BYTES
    app.add_middleware(BodyLimit, limit=body_limit)
    app.state.pool = pool
    app.state.metrics = metrics
    app.state.speaker = speaker

    def refuse(
        request: Request,
        status: int,
        message: str,
        kind: str,
        param: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> JSONResponse:
        """An error answer in OpenAI's shape; on the speech endpoint it is counted (``kind``: the
        error counter's label)."""
        if request.url.path == SPEECH_PATH:
            metrics.answered(status, None)
            metrics.failed(kind)
        error_type = (
            "rate_limit_error" if status == 429 else "invalid_request_error" if status < 500 else "server_error"
        )
        return JSONResponse(error_body(message, error_type, param), status_code=status, headers=headers)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, error: RequestValidationError) -> JSONResponse:
        message, field = validation_message(error.errors())
        return refuse(request, 400, message, "invalid_request", field)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, error: HTTPException) -> Response:
        if error.status_code == 413:
            message = f"body: over {body_limit} bytes; input is limited to {max_chars} characters (--max-chars)"
            return refuse(request, 413, message, "too_large", "input")
        if error.status_code == 400 and isinstance(error.__cause__, UnicodeDecodeError):
            cause = error.__cause__
            message = f"body: not UTF-8 (byte 0x{cause.object[cause.start]:02x} at offset {cause.start})"
            return refuse(request, 400, message, "invalid_request")
        kind = "invalid_request" if error.status_code < 500 else "server"
        return refuse(request, error.status_code, f"{request.url.path}: {error.detail}", kind)

    @app.post(SPEECH_PATH, response_class=Response)
    async def speech(body: SpeechRequest, request: Request) -> Response:
        """Speak ``input``; the answer is audio (see the module docstring)."""
        arrived = time.perf_counter()
        if len(body.input) > max_chars:
            message = f"input: {len(body.input)} characters, over this server's limit of {max_chars} (--max-chars)"
            return refuse(request, 413, message, "too_large", "input")
        if body.voice not in (None, DEFAULT_VOICE, speaker.name):
            message = f"voice: unknown voice {body.voice!r}; this server speaks {speaker.name!r} (or {DEFAULT_VOICE!r})"
            return refuse(request, 400, message, "invalid_request", "voice")
        try:
            stream = pool.stream(lambda: speaker.stream(body.input, body.speed))
        except Refused as refused:
            if refused.reason == "busy":
                return refuse(request, 429, str(refused), "busy", headers={"Retry-After": str(RETRY_AFTER_SECONDS)})
            return refuse(request, 503, str(refused), "shutting_down")
        try:
            first = await _first_chunk(stream)
        except UserError as error:
            message = str(error) if str(error).startswith("input") else f"input: {error}"
            return refuse(request, 400, message, "invalid_request", "input")
        except Exception:
            log.exception("synthesis failed before the first chunk")
            return refuse(request, 500, "synthesis failed; the server log has the details", "synthesis")
        except BaseException:  # cancelled: the server is being stopped the hard way
            stream.cancel()
            raise
        fmt, rate = body.response_format, speaker.sampling_rate
        metrics.first_audio.labels(format=fmt).observe(time.perf_counter() - arrived)
        headers = {"X-Sample-Rate": str(rate), "Cache-Control": "no-store"}
        if fmt in audio_formats.STREAMED:
            return _streamed(stream, first, fmt, rate, headers, metrics, arrived)
        try:
            chunks = [first, *[chunk async for chunk in stream]]
        except Exception:
            log.exception("synthesis failed")
            return refuse(request, 500, "synthesis failed; the server log has the details", "synthesis")
        finally:
            stream.cancel()  # a no-op when done; stops the worker if this task was cancelled
        audio = np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.float32)
        metrics.answered(200, fmt)
        metrics.audio_seconds.inc(len(audio) / rate)
        metrics.latency.labels(format=fmt).observe(time.perf_counter() - arrived)
        return Response(audio_formats.encode(audio, rate, fmt), media_type=audio_formats.media_type(fmt, rate),
                        headers=headers)  # fmt: skip

    @app.get("/healthz")
    async def healthz() -> JSONResponse:
        """The voice and the server's load; 503 once shutdown has begun (a load balancer stops sending)."""
        gate = pool.gate
        state = {
            "status": "shutting_down" if gate.closed else "ok",
            "voice": speaker.name,
            "engine": engine,
            "sampling_rate": speaker.sampling_rate,
            "workers": gate.workers,
            "queue_limit": gate.queue,
            "queue_depth": gate.waiting,
            "in_flight": gate.admitted,
            "max_chars": max_chars,
            "formats": list(audio_formats.FORMATS),
        }
        return JSONResponse(state, status_code=503 if gate.closed else 200)

    @app.get("/metrics")
    async def prometheus() -> Response:
        """The server's metrics in Prometheus' text format."""
        return Response(metrics.exposition(), media_type=CONTENT_TYPE)

    @app.get("/", response_class=HTMLResponse)
    async def home() -> HTMLResponse:
        """A page to type a sentence and hear it."""
        return HTMLResponse(page)

    return app


async def _first_chunk(stream: ChunkStream) -> np.ndarray:
    """The stream's first chunk (empty audio when it has none); raises what the speaker raised."""
    try:
        return await anext(stream)
    except StopAsyncIteration:
        return np.zeros(0, dtype=np.float32)


def _streamed(
    stream: ChunkStream,
    first: np.ndarray,
    fmt: str,
    rate: int,
    headers: dict[str, str],
    metrics: ServerMetrics,
    arrived: float,
) -> StreamingResponse:
    """The chunks as a streamed body: a WAV starts with its "length unknown" header, sent together
    with the first audio."""
    sent = {"samples": 0, "complete": False, "failed": False}

    async def body() -> AsyncIterator[bytes]:
        prefix = audio_formats.wav_header(rate, None) if fmt == "wav" else b""
        sent["samples"] += len(first)
        yield prefix + audio_formats.pcm16_bytes(first)
        try:
            async for chunk in stream:
                sent["samples"] += len(chunk)
                yield audio_formats.pcm16_bytes(chunk)
        except Exception:
            # the status line has left: breaking the connection is the only way left to say "incomplete"
            # (uvicorn logs the traceback of what is raised)
            sent["failed"] = True
            log.error("synthesis failed after %.2f s of audio; the answer is cut off", sent["samples"] / rate)
            raise
        sent["complete"] = True

    def ended() -> None:
        stream.cancel()  # a no-op when synthesis is done; otherwise the client left: stop its worker
        metrics.audio_seconds.inc(sent["samples"] / rate)
        if sent["complete"]:
            metrics.answered(200, fmt)
            metrics.latency.labels(format=fmt).observe(time.perf_counter() - arrived)
        elif sent["failed"]:
            metrics.answered(500, fmt)  # the client saw a 200 and a broken connection
            metrics.failed("synthesis")
        else:
            metrics.answered(499, fmt)  # nginx's "client closed request"
            metrics.failed("client_disconnected")
            log.info("client left mid-stream after %.2f s of audio; its synthesis stopped", sent["samples"] / rate)

    return _AudioStream(body(), on_end=ended, media_type=audio_formats.media_type(fmt, rate), headers=headers)


class _AudioStream(StreamingResponse):
    """A streamed answer that calls ``on_end`` however it ends: sent in full, client gone (Starlette
    cancels the body when the client disconnects), or failed."""

    def __init__(self, content: AsyncIterator[bytes], *, on_end: Callable[[], None], **kwargs: Any) -> None:
        super().__init__(content, **kwargs)
        self._on_end = on_end

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._on_end()
