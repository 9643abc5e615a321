"""The app in-process (httpx's ASGI transport, no socket) with a scripted voice: what a real server
rarely shows on demand. Refusals once shutdown has begun, a body over the limit refused before it is
read, the speaker's own refusal of a text, and the page."""

from __future__ import annotations

import asyncio
import json

import httpx
import numpy as np
import pytest

from tts_pipeline.errors import UserError
from tts_pipeline.serving.app import create_app


class ScriptedVoice:
    """Speaks any text as two chunks of a ramp; refuses text holding ``~`` as the speaker does, and
    breaks on the texts ``fail at once`` and ``fail midway``."""

    name = "scripted"
    sampling_rate = 16000
    engine_name = "scripted"

    def stream(self, text: str, speed: float = 1.0):
        if "~" in text:
            raise UserError(f"text {text!r}: no symbol for '~'")
        if text == "fail at once":
            raise RuntimeError("the engine broke")
        yield np.linspace(-0.5, 0.5, 160, dtype=np.float32)
        if text == "fail midway":
            raise RuntimeError("the engine broke")
        yield np.zeros(80, dtype=np.float32)


@pytest.fixture
def app():
    app = create_app(ScriptedVoice(), workers=1, queue=0, max_chars=100)
    yield app
    app.state.pool.shutdown()


def call(app, method: str, path: str, **kwargs) -> httpx.Response:
    """One request to the app, answered in full."""

    async def send() -> httpx.Response:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
            return await client.request(method, path, **kwargs)

    return asyncio.run(send())


def test_speech_and_health(app):
    request = {"input": "hello", "response_format": "pcm", "voice": "scripted"}
    answer = call(app, "POST", "/v1/audio/speech", json=request)
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "audio/L16; rate=16000; channels=1"
    assert len(answer.content) == 2 * 240
    health = call(app, "GET", "/healthz").json()
    assert health["voice"] == "scripted" and health["engine"] == "scripted" and health["max_chars"] == 100


def test_once_shutdown_has_begun_requests_and_health_get_503(app):
    app.state.pool.gate.close()  # what SIGTERM does first
    answer = call(app, "POST", "/v1/audio/speech", json={"input": "hello"})
    assert answer.status_code == 503
    assert "shutting down" in answer.json()["error"]["message"]
    health = call(app, "GET", "/healthz")
    assert health.status_code == 503 and health.json()["status"] == "shutting_down"


def test_a_body_over_the_limit_is_refused_unread_with_the_json_error(app):
    body = json.dumps({"input": "a" * 2_000_000}).encode()
    answer = call(app, "POST", "/v1/audio/speech", content=body, headers={"content-type": "application/json"})
    assert answer.status_code == 413
    message = answer.json()["error"]["message"]
    assert "limited to 100 characters (--max-chars)" in message and "body: over" in message


def test_text_the_voice_cannot_speak_is_a_400_with_the_speakers_message(app):
    answer = call(app, "POST", "/v1/audio/speech", json={"input": "a ~ b"})
    assert answer.status_code == 400
    assert answer.json()["error"] == {
        "message": "input: text 'a ~ b': no symbol for '~'",
        "type": "invalid_request_error",
        "param": "input",
    }
    metrics = call(app, "GET", "/metrics").text
    assert 'tts_requests_total{format="none",status="400"} 1.0' in metrics


def test_the_page_has_the_controls(app):
    page = call(app, "GET", "/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    for element in ("<textarea", 'id="speed"', 'id="speak"', "<audio", "v1/audio/speech"):
        assert element in page.text


def test_a_broken_engine_is_a_500_before_the_audio_and_a_broken_stream_after(app):
    answer = call(app, "POST", "/v1/audio/speech", json={"input": "fail at once"})
    assert answer.status_code == 500
    assert answer.json()["error"]["type"] == "server_error"
    # once audio has left, only an unfinished body can say so (the app's error reaches the transport)
    with pytest.raises(RuntimeError, match="the engine broke"):
        call(app, "POST", "/v1/audio/speech", json={"input": "fail midway", "response_format": "pcm"})
    metrics = call(app, "GET", "/metrics").text
    assert 'tts_errors_total{kind="synthesis"} 2.0' in metrics
    assert 'tts_requests_total{format="pcm",status="500"} 1.0' in metrics
    assert call(app, "POST", "/v1/audio/speech", json={"input": "hello"}).status_code == 200
