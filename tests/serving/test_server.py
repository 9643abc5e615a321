"""``tts-pipeline serve`` as a real process on a tiny exported voice, called over 127.0.0.1 by httpx.

One server (``--workers 1 --queue 0``, so that one request in flight fills it) serves the module's
tests in turn: speech in each format equal to :meth:`Speaker.speak` within one 16-bit step, a WAV
stream whose header and first audio arrive while the rest is being made, ``/healthz``,
``/metrics``, 429 when full, 413 naming the limit, every bad request refused with its field named
while the server keeps serving; a second server is stopped with SIGTERM during a request.
"""

from __future__ import annotations

import io
import threading
import time

import httpx
import numpy as np
import pytest
import soundfile as sf
from prometheus_client.parser import text_string_to_metric_families

from tts_pipeline.serving import audio_formats
from tts_pipeline.serving.server_process import ServerProcess
from tts_pipeline.serving.speaker import Speaker

from ..voice_folder import export_tiny_voice

STEP = 1 / 32768  # one 16-bit step
SPEECH = "/v1/audio/speech"
TEXT = "Hello there, how are you?"
# the longest input a request may hold (--max-chars 4096): about a second of synthesis for the tiny voice
LONG = ("The old lighthouse keeper painted the door a bright shade of blue. " * 61)[:4096]


@pytest.fixture(scope="module")
def voice(tmp_path_factory):
    return export_tiny_voice(tmp_path_factory.mktemp("voice"))


@pytest.fixture(scope="module")
def speaker(voice):
    return Speaker.load(voice, engine="onnx", threads=1)


def start_server(voice, log, *options: str) -> ServerProcess:
    """``tts-pipeline serve voice *options`` on a free port, once ``/healthz`` answers."""
    if "--engine" not in options:  # the default, auto, would time both engines first
        options = ("--engine", "onnx", *options)
    server = ServerProcess.start(voice, options, log)
    try:
        server.wait_ready(60)
    except BaseException:
        server.stop()
        raise
    return server


@pytest.fixture(scope="module")
def server(voice, tmp_path_factory):
    log = tmp_path_factory.mktemp("server") / "server.log"
    with start_server(voice, log, "--workers", "1", "--queue", "0", "--threads", "1") as server:
        yield server


@pytest.fixture(scope="module")
def client(server):
    with httpx.Client(base_url=server.url, timeout=60) as client:
        yield client


def decode(content: bytes, fmt: str) -> tuple[np.ndarray, int | None]:
    """An answer's audio as float32 in [-1, 1], and the rate its file says (None for raw PCM)."""
    if fmt == "pcm":
        return np.frombuffer(content, dtype="<i2").astype(np.float32) / 32768, None
    audio, rate = sf.read(io.BytesIO(content), dtype="float32")
    return audio, rate


def wait_idle(client: httpx.Client, timeout: float = 20) -> dict:
    """``/healthz`` once no request is admitted (a stopped stream has given its worker back)."""
    deadline = time.monotonic() + timeout
    while True:
        health = client.get("/healthz").json()
        if health["in_flight"] == 0 or time.monotonic() > deadline:
            return health
        time.sleep(0.05)


def metric_samples(client: httpx.Client) -> dict[tuple[str, tuple], float]:
    """``/metrics`` parsed: (sample name, sorted labels) -> value."""
    families = text_string_to_metric_families(client.get("/metrics").text)
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in families
        for sample in family.samples
    }


@pytest.mark.parametrize("fmt", ["wav", "flac", "pcm"])
def test_speech_in_each_format_is_the_speakers_audio(client, speaker, fmt):
    answer = client.post(SPEECH, json={"input": TEXT, "response_format": fmt, "speed": 1.2, "voice": "tiny"})
    assert answer.status_code == 200, answer.text
    rate = speaker.sampling_rate
    assert answer.headers["x-sample-rate"] == str(rate)
    assert answer.headers["content-type"] == audio_formats.media_type(fmt, rate)
    streamed = answer.headers.get("transfer-encoding") == "chunked"
    assert streamed is (fmt in ("wav", "pcm"))
    audio, file_rate = decode(answer.content, fmt)
    assert file_rate in (None, rate)
    expected = speaker.speak(TEXT, speed=1.2)
    assert audio.shape == expected.shape
    assert np.abs(audio - expected).max() <= STEP


def test_a_wav_stream_sends_its_header_and_first_audio_before_the_rest_is_made(client, speaker):
    rate = speaker.sampling_rate
    with client.stream("POST", SPEECH, json={"input": LONG, "response_format": "wav"}) as answer:
        assert answer.status_code == 200
        pieces = answer.iter_raw()
        head = b""
        while len(head) <= 44:
            head += next(pieces)
        # the synthesis is still running when the header and the first audio are here
        assert client.get("/healthz").json()["in_flight"] == 1
        body = head + b"".join(pieces)
    assert head[:44] == audio_formats.wav_header(rate, None)  # RIFF and data sizes 0xFFFFFFFF
    audio, file_rate = decode(body, "wav")
    expected = speaker.speak(LONG)
    assert file_rate == rate and audio.shape == expected.shape
    assert np.abs(audio - expected).max() <= STEP


def test_healthz_describes_the_voice_and_the_load(client, speaker):
    answer = client.get("/healthz")
    assert answer.status_code == 200
    health = answer.json()
    assert health["status"] == "ok"
    assert health["voice"] == speaker.name == "tiny"
    assert health["engine"] == "onnx"
    assert health["sampling_rate"] == speaker.sampling_rate
    assert (health["workers"], health["queue_limit"], health["queue_depth"]) == (1, 0, 0)


def test_metrics_count_requests_and_time_them(client):
    before = metric_samples(client)
    for fmt in ("wav", "flac"):
        assert client.post(SPEECH, json={"input": TEXT, "response_format": fmt}).status_code == 200
    after = metric_samples(client)

    def grew(name: str, **labels: str) -> float:
        key = (name, tuple(sorted(labels.items())))
        return after[key] - before.get(key, 0.0)

    assert grew("tts_requests_total", status="200", format="wav") == 1
    assert grew("tts_requests_total", status="200", format="flac") == 1
    for histogram in ("tts_request_seconds", "tts_time_to_first_audio_seconds"):
        assert grew(f"{histogram}_count", format="flac") == 1
        assert (f"{histogram}_bucket", (("format", "flac"), ("le", "+Inf"))) in after
    assert grew("tts_audio_seconds_total") > 0.5
    assert after[("tts_queue_depth", ())] == 0


def test_a_full_server_answers_429_with_retry_after(client):
    """One worker, no queue: while one request is synthesised another is refused at once."""
    for _attempt in range(3):  # the long request may end before the second is sent on a slow start
        done = threading.Event()

        def hold(done: threading.Event = done) -> None:
            with httpx.stream("POST", f"{client.base_url}{SPEECH}", json={"input": LONG}, timeout=60) as answer:
                for _ in answer.iter_raw():
                    pass
            done.set()

        thread = threading.Thread(target=hold)
        thread.start()
        deadline = time.monotonic() + 10
        while client.get("/healthz").json()["in_flight"] == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        refused = client.post(SPEECH, json={"input": TEXT})
        thread.join(60)
        if refused.status_code != 200:
            break
    assert refused.status_code == 429, refused.text
    assert int(refused.headers["retry-after"]) >= 1
    error = refused.json()["error"]
    assert error["type"] == "rate_limit_error" and "busy" in error["message"]
    assert done.is_set()
    assert client.post(SPEECH, json={"input": TEXT}).status_code == 200  # the slot came back


def test_too_long_text_is_413_naming_the_limit(client):
    for text in ("a" * 4097, "a" * 1_000_000):
        answer = client.post(SPEECH, json={"input": text})
        assert answer.status_code == 413
        message = answer.json()["error"]["message"]
        assert message.startswith("input:") and "limit of 4096" in message and "--max-chars" in message


BAD_REQUESTS = [
    # (what, request keyword arguments, status, words of the message)
    ("empty input", {"json": {"input": ""}}, 400, "input: expected text to speak"),
    ("whitespace input", {"json": {"input": " \n\t "}}, 400, "input: expected text to speak"),
    ("no input", {"json": {"voice": "tiny"}}, 400, "input: required"),
    ("1 MB of text", {"json": {"input": "x" * 1_000_000}}, 413, "limit of 4096"),
    ("invalid JSON", {"content": b'{"input": "hi",', "headers": {"content-type": "application/json"}}, 400,
     "body: not valid JSON"),
    ("input a number", {"json": {"input": 5}}, 400, "input: expected a string, got 5"),
    ("speed a word", {"json": {"input": "hi", "speed": "fast"}}, 400, "speed: expected a number, got 'fast'"),
    ("speed too high", {"json": {"input": "hi", "speed": 9}}, 400, "speed: expected a number from 0.25 to 4.0"),
    ("unknown voice", {"json": {"input": "hi", "voice": "alloy"}}, 400, "voice: unknown voice 'alloy'"),
    ("mp3", {"json": {"input": "hi", "response_format": "mp3"}}, 400,
     "response_format: expected one of wav, flac, pcm, got 'mp3'"),
    ("unknown format", {"json": {"input": "hi", "response_format": "ogg"}}, 400, "response_format: expected one of"),
    ("not UTF-8", {"content": b'{"input": "caf\xe9"}', "headers": {"content-type": "application/json"}}, 400,
     "body: not UTF-8"),
    ("a JSON array", {"json": ["hi"]}, 400, "body: expected a JSON object"),
    ("form body", {"data": {"input": "hi"}}, 400, "body: expected a JSON object"),
    ("unspeakable text", {"json": {"input": "\u2014 \u2014"}}, 400, "input: text '\u2014 \u2014' is empty after"),
    ("unknown ARPAbet", {"json": {"input": "{XX}"}}, 400, "cannot represent"),
]  # fmt: skip


def test_bad_requests_in_a_row_each_get_their_4xx_and_the_server_keeps_serving(client, speaker):
    failures = []
    for what, request, status, words in BAD_REQUESTS:
        answer = client.post(SPEECH, **request)
        is_json = answer.headers.get("content-type", "").startswith("application/json")
        message = answer.json()["error"]["message"] if is_json else f"{len(answer.content)} bytes of {answer.headers}"
        if answer.status_code != status or words not in message:
            failures.append(f"{what}: {answer.status_code} {message!r}, expected {status} and {words!r}")
    assert not failures, "\n".join(failures)

    # a client that leaves mid-stream: its synthesis stops and its worker comes back
    before = metric_samples(client)
    with client.stream("POST", SPEECH, json={"input": LONG, "response_format": "pcm"}) as answer:
        assert answer.status_code == 200
        next(answer.iter_raw())
    assert wait_idle(client)["in_flight"] == 0
    after = metric_samples(client)
    key = ("tts_errors_total", (("kind", "client_disconnected"),))
    assert after.get(key, 0) - before.get(key, 0) == 1

    answer = client.post(SPEECH, json={"input": TEXT, "response_format": "flac"})
    assert answer.status_code == 200
    audio, _ = decode(answer.content, "flac")
    assert np.abs(audio - speaker.speak(TEXT)).max() <= STEP


def test_sigterm_lets_the_request_in_flight_finish_and_exits_0(voice, speaker, tmp_path):
    server = start_server(voice, tmp_path / "server.log", "--threads", "1")
    try:
        started, result = threading.Event(), {}

        def listen() -> None:
            with httpx.stream("POST", f"{server.url}{SPEECH}", json={"input": LONG, "response_format": "pcm"},
                              timeout=60) as answer:  # fmt: skip
                chunks = answer.iter_raw()
                body = next(chunks)
                started.set()
                result["status"] = answer.status_code
                result["body"] = body + b"".join(chunks)

        thread = threading.Thread(target=listen)
        thread.start()
        assert started.wait(30)
        server.process.terminate()  # SIGTERM, mid-stream
        time.sleep(0.3)
        try:  # nothing new is taken on: the socket is closed, or the app says it is stopping
            assert httpx.get(f"{server.url}/healthz", timeout=5).status_code == 503
        except httpx.TransportError:
            pass
        thread.join(60)
        assert server.process.wait(timeout=60) == 0, server.log_tail()
    finally:
        server.stop()
    assert result["status"] == 200
    audio, _ = decode(result["body"], "pcm")
    assert audio.shape == speaker.speak(LONG).shape  # the whole answer, not a cut one
    assert "stopped on SIGTERM" in server.log_path.read_text()
