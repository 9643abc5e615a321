"""A load test's client: speech requests sent to a running server, each one timed as a listener hears it.

One request (:func:`send`) is ``POST /v1/audio/speech`` read as a stream. Its clock starts before the
request is sent; *time to first audio* stops when the first body bytes past a WAV's 44-byte header
arrive (for a streamed format that is the server's first audio chunk, which leaves together with the
header; FLAC is encoded whole, so its first bytes come at the end), *latency* when the last body byte
has arrived. Its audio seconds come from the bytes received and the ``X-Sample-Rate`` header.

A level (:func:`run_level`) is a closed loop: ``concurrency`` simulated clients each send their next
request as soon as their last one is answered, until ``requests`` were sent or ``time_limit_s`` passed
(no request starts after it; those in flight finish, each bounded by ``timeout_s``). Texts are taken
from a list in turn, so every level speaks the same mix.

The client is asyncio + httpx in one thread: the event loop only moves bytes, so one process drives
dozens of concurrent streams without its own scheduling showing in the figures. On a machine the
client shares with the server, its CPU time is the server's loss; the command says so in its output.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import httpx

from tts_pipeline.serving import audio_formats
from tts_pipeline.serving.app import SPEECH_PATH

WAV_HEADER_BYTES = len(audio_formats.wav_header(1, None))
PCM_SAMPLE_BYTES = 2  # the server sends 16-bit mono PCM


@dataclass(frozen=True)
class RequestResult:
    """One speech request as the client saw it.

    Attributes:
        status: The HTTP status; 0 when no answer came (connection refused or broken, timeout).
        latency_s: From sending to the last body byte (or to the failure).
        first_audio_s: From sending to the first audio bytes; None when no audio came.
        audio_seconds: Seconds of audio received (0 unless the answer was audio).
        error: Why the request failed: ``None`` for a success, else the HTTP status as text (``"429"``),
            the transport error's class (``"ReadTimeout"``, ``"RemoteProtocolError"`` for a stream cut
            short) or ``"empty_audio"`` for a 200 without audio.
    """

    status: int
    latency_s: float
    first_audio_s: float | None
    audio_seconds: float
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class LevelRun:
    """The results of one level, in the order the requests finished.

    Attributes:
        concurrency: Simulated clients.
        requested: Requests the level was asked to send.
        wall_s: From the level's start to its last answer.
        results: One per request sent.
        time_limited: The time limit stopped the level before it sent ``requested`` requests.
    """

    concurrency: int
    requested: int
    wall_s: float
    results: list[RequestResult]
    time_limited: bool


def audio_seconds(body: bytes | int, fmt: str, sampling_rate: int) -> float:
    """Seconds of audio in a speech answer: ``body`` is its bytes (FLAC needs them decoded) or, for
    ``wav`` and ``pcm``, just their count."""
    if fmt == "flac":
        import soundfile as sf

        assert isinstance(body, bytes), "FLAC is decoded to count its samples"
        return float(sf.info(io.BytesIO(body)).duration)
    size = body if isinstance(body, int) else len(body)
    header = WAV_HEADER_BYTES if fmt == "wav" else 0
    return max(0, size - header) / PCM_SAMPLE_BYTES / sampling_rate


async def send(client: httpx.AsyncClient, text: str, fmt: str = "wav", speed: float = 1.0) -> RequestResult:
    """Speak ``text`` through ``client`` (whose ``base_url`` is the server) and time it (module docstring)."""
    if fmt not in audio_formats.FORMATS:
        raise ValueError(f"format: expected one of {', '.join(audio_formats.FORMATS)}, got {fmt!r}")
    payload = {"input": text, "response_format": fmt, "speed": speed}
    header = WAV_HEADER_BYTES if fmt == "wav" else 0
    received, first_audio, kept = 0, None, bytearray()
    start = time.perf_counter()
    try:
        async with client.stream("POST", SPEECH_PATH, json=payload) as response:
            async for chunk in response.aiter_raw():
                received += len(chunk)
                if first_audio is None and received > header:
                    first_audio = time.perf_counter() - start
                if fmt == "flac":
                    kept += chunk  # a streamed format is counted, not kept: 16 clients x minutes of audio
            latency = time.perf_counter() - start
    except httpx.HTTPError as error:
        return RequestResult(0, time.perf_counter() - start, None, 0.0, type(error).__name__)
    if response.status_code != 200:
        return RequestResult(response.status_code, latency, None, 0.0, str(response.status_code))
    rate = int(response.headers["X-Sample-Rate"])
    seconds = audio_seconds(bytes(kept) if fmt == "flac" else received, fmt, rate)
    if seconds <= 0:
        return RequestResult(200, latency, None, 0.0, "empty_audio")
    return RequestResult(200, latency, first_audio, seconds)


def client_for(url: str, connections: int, timeout_s: float) -> httpx.AsyncClient:
    """An async client for the server at ``url`` keeping up to ``connections`` connections open."""
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
    return httpx.AsyncClient(base_url=url, limits=limits, timeout=httpx.Timeout(timeout_s))


async def run_level(
    url: str,
    texts: Sequence[str],
    *,
    concurrency: int,
    requests: int,
    time_limit_s: float,
    timeout_s: float = 120.0,
    fmt: str = "wav",
) -> LevelRun:
    """``requests`` requests by ``concurrency`` closed-loop clients, stopped by ``time_limit_s``
    (module docstring)."""
    if concurrency < 1 or requests < 1 or not texts:
        raise ValueError(f"a level needs concurrency >= 1, requests >= 1 and texts, got {concurrency}, {requests}")
    results: list[RequestResult] = []
    started = 0
    async with client_for(url, concurrency, timeout_s) as client:
        start = time.perf_counter()
        deadline = start + time_limit_s

        async def simulated_client() -> None:
            nonlocal started
            while started < requests and time.perf_counter() < deadline:
                text = texts[started % len(texts)]
                started += 1  # no await between the test and this: no two clients take the same turn
                results.append(await send(client, text, fmt))

        await asyncio.gather(*(simulated_client() for _ in range(concurrency)))
        wall = time.perf_counter() - start
    return LevelRun(concurrency, requests, wall, results, time_limited=len(results) < requests)


@contextlib.contextmanager
def blocking_sender(url: str, timeout_s: float = 120.0, fmt: str = "wav") -> Iterator[Callable[[str], RequestResult]]:
    """A plain function ``text -> RequestResult`` over one kept-alive connection, for timings that run
    one request at a time between other work (interleaved with in-process synthesis)."""
    loop = asyncio.new_event_loop()
    client = client_for(url, 1, timeout_s)
    try:
        yield lambda text: loop.run_until_complete(send(client, text, fmt))
    finally:
        loop.run_until_complete(client.aclose())
        loop.close()


def paragraph(texts: Sequence[str], n_chars: int) -> str:
    """A paragraph of at most ``n_chars`` characters made of ``texts`` in turn, cut at the last whole
    word that fits (a long text of ordinary sentences, for the time to first audio of a long request)."""
    if n_chars < 1 or not any(text.strip() for text in texts):
        raise ValueError("a paragraph needs n_chars >= 1 and some text")
    words: list[str] = []
    length = -1  # no space before the first word
    index = 0
    while True:
        for word in texts[index % len(texts)].split():
            if length + 1 + len(word) > n_chars:
                return " ".join(words) if words else texts[0][:n_chars]
            words.append(word)
            length += 1 + len(word)
        index += 1
