"""The speech server's page (``GET /``) in headless Chromium: type a sentence, press Speak, and the
``<audio>`` element gets the answer as a blob that Chromium decodes and plays.

Runs ``tts-pipeline serve`` on a tiny exported voice as a real process; needs the ``browser`` extra
and a ``chromium`` on PATH (``make test-browser`` installs both).
"""

from __future__ import annotations

import pytest

from tts_pipeline.serving.server_process import ServerProcess

from ..voice_folder import export_tiny_voice

pytestmark = pytest.mark.browser

SENTENCE = "The old lighthouse keeper painted the door a bright shade of blue."

# Wait until the <audio> has its blob loaded (or failed), then report what Chromium made of it.
LOADED = """async () => {
  const audio = document.getElementById('audio');
  if (audio.readyState < 1) {
    await new Promise(resolve => {
      const timer = setTimeout(resolve, 20000);
      audio.addEventListener('loadedmetadata', () => { clearTimeout(timer); resolve(); }, {once: true});
      audio.addEventListener('error', () => { clearTimeout(timer); resolve(); }, {once: true});
    });
  }
  return {src: audio.src, duration: audio.duration, error: audio.error && audio.error.code};
}"""

# Play from the start (muted: no autoplay policy applies) and see the playhead move.
PLAYS = """async () => {
  const audio = document.getElementById('audio');
  audio.muted = true;
  audio.currentTime = 0;
  await audio.play();
  const start = audio.currentTime;
  await new Promise(resolve => setTimeout(resolve, 400));
  return {start, now: audio.currentTime, paused: audio.paused, ended: audio.ended};
}"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("serve_page")
    voice = export_tiny_voice(root)
    server = ServerProcess.start(voice, ["--threads", "1"], root / "server.log")
    with server:
        server.wait_ready(60)
        yield server


def test_the_page_speaks_what_is_typed(browser, server, screenshot_dir):
    page = browser.new_page(viewport={"width": 900, "height": 600})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        page.goto(f"{server.url}/")
        page.wait_for_function("document.getElementById('voice').textContent.includes('tiny')")
        page.fill("#text", SENTENCE)
        page.fill("#speed", "1.25")  # a range input: fill sets its value
        page.click("#speak")
        page.wait_for_function("document.getElementById('audio').src.startsWith('blob:')", timeout=30000)
        loaded = page.evaluate(LOADED)
        assert loaded["error"] is None, f"Chromium could not decode the answer (MediaError {loaded['error']})"
        assert 0 < loaded["duration"] < 60, loaded
        played = page.evaluate(PLAYS)
        assert played["now"] > played["start"] or played["ended"], played
        assert "KiB of audio" in page.inner_text("#status")
        page.screenshot(path=str(screenshot_dir / "serve-page.png"))
    finally:
        page.close()
    assert not errors, errors
