"""The one-file Snakemake report, opened for real in headless Chromium (``make test-browser``).

Chromium (so Chrome and Edge) shows an HTML report item in an iframe whose source is the item as a
``data:`` URL and leaves the frame blank when that URL is over 2 MiB. These tests run the tiny demo
DAG, build the report and check what a reader sees: every item renders (an image with pixels, a page
with its heading, not a blank frame), every ``<audio>`` has a source Chromium decodes, and every clip
page shows the clip beside its ground truth and its spectrograms.

Needs the ``browser`` extra (Playwright, driving the system's Chromium) and a ``chromium`` on PATH;
``make test-browser`` installs both. The shared fixtures (the tiny run, the browser, where screenshots
go) are in ``conftest.py``.
"""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from ..workflow.test_data_workflow import snakemake

pytestmark = [pytest.mark.browser, pytest.mark.slow]

#: Chromium's longest URL (url::kMaxURLChars); a frame is not navigated to a longer data URL.
CHROMIUM_URL_LIMIT = 2 * 1024 * 1024
#: What the pipeline promises per embedded item, before base64.
MAX_ITEM_BYTES = 1_500_000
#: Clip pages of the tiny run per group, and the players on each (recording first where there is one).
CLIP_PAGES = {"held-out": 1, "vocoders": 2, "from-text": 8}
PLAYERS = {"held-out": 4, "vocoders": 3, "from-text": 1}

# Load every <audio> of a page, as a listener pressing play would, and report what Chromium made of it.
PROBE_AUDIO = """async () => {
  const probes = [];
  for (const audio of document.querySelectorAll('audio')) {
    const src = audio.currentSrc || audio.src;
    const mime = src.slice(5, src.indexOf(',')).replace(';base64', '');
    audio.preload = 'auto';
    const outcome = await new Promise(resolve => {
      const timer = setTimeout(() => resolve('timeout'), 20000);
      const done = outcome => { clearTimeout(timer); resolve(outcome); };
      audio.addEventListener('loadeddata', () => done('loaded'), {once: true});
      audio.addEventListener('error', () => done('error ' + audio.error.code), {once: true});
      audio.load();
    });
    const player = audio.closest('.player');
    const label = player ? player.querySelector('b').innerText : '';
    probes.push({label, mime, canPlay: audio.canPlayType(mime), outcome,
                 readyState: audio.readyState, duration: audio.duration});
  }
  return probes;
}"""


@pytest.fixture(scope="module")
def report(tiny_run) -> Path:
    """``snakemake --report report.html`` of the tiny demo run."""
    workdir, config = tiny_run
    path = workdir / "report.html"
    snakemake(workdir, "--report", str(path), config=config)
    return path


@pytest.fixture(scope="module")
def opened(browser, report):
    """The report open in a tab, its script errors collected, and its items (path -> entry)."""
    page = browser.new_page(viewport={"width": 1280, "height": 760})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(report.as_uri())
    page.wait_for_function("typeof app !== 'undefined' && document.querySelector('#app').innerText.length > 0")
    items = page.evaluate("results")  # path (relative to the working directory) -> entry
    yield page, errors, items, report.parent
    page.close()


def show(page, path: str, item: dict):
    """Show one item the way its view button does; the iframe of an HTML item, or None for an image."""
    content = "img" if item["mime_type"].startswith("image/") else "html"
    page.evaluate(
        "([path, content]) => app.setView({content, contentPath: results[path].data_uri, resultPath: path})",
        [path, content],
    )
    if content == "img":
        page.wait_for_function(
            "uri => Array.from(document.images).some(img => img.src === uri && img.complete)", arg=item["data_uri"]
        )
        return None
    page.wait_for_function("uri => { const f = document.querySelector('iframe'); return f && f.src === uri; }",
                           arg=item["data_uri"])
    frame = page.query_selector("iframe").content_frame()
    frame.wait_for_load_state("load")
    return frame


def clip_group(path: str) -> str | None:
    parts = Path(path).parts
    return parts[-2] if "audio" in parts[:-2] and parts[-2] in CLIP_PAGES else None


def test_the_report_has_every_item_and_none_too_large_for_a_frame(opened):
    page, errors, items, workdir = opened
    names = sorted(item["name"] for item in items.values())
    assert {"losses.png", "pitch.png", "alignment.png", "benchmark.html"} <= set(names)
    groups = [clip_group(path) for path in items]
    assert {group: groups.count(group) for group in CLIP_PAGES} == CLIP_PAGES
    for path, item in items.items():
        uri = item["data_uri"]
        payload = base64.b64decode(uri.split(",", 1)[1])
        assert len(payload) == (workdir / path).stat().st_size, f"{item['name']}: not the file embedded whole"
        assert len(payload) <= MAX_ITEM_BYTES, f"{item['name']}: {len(payload)} bytes embedded"
        assert len(uri) < CHROMIUM_URL_LIMIT, f"{item['name']}: data URL of {len(uri)} characters"
    assert not errors, errors


def test_every_item_renders(opened):
    page, errors, items, _ = opened
    for path, item in items.items():
        frame = show(page, path, item)
        if frame is None:
            width = page.evaluate(
                "uri => Array.from(document.images).find(img => img.src === uri).naturalWidth", item["data_uri"]
            )
            assert width > 100, f"{item['name']}: image not drawn"
            continue
        assert frame.url.startswith("data:text/html"), f"{item['name']}: frame at {frame.url[:40]}, not the page"
        heading = frame.evaluate("() => (document.querySelector('h2, h3') || {}).innerText || ''")
        assert heading.strip(), f"{item['name']}: blank frame"
    assert not errors, errors


def test_a_page_over_the_limit_is_what_the_render_check_catches(opened):
    """The failure these tests guard against, reproduced: an item of 1.6 MB (as audio.html once was,
    larger) leaves the report's frame blank in Chromium, and the render check sees it."""
    page, _, _, _ = opened
    body = "<h3>too large</h3><!--" + "a" * 1_600_000 + "-->"
    uri = "data:text/html;charset=utf8;base64," + base64.b64encode(body.encode()).decode("ascii")
    page.evaluate("uri => app.setView({content: 'html', contentPath: uri, resultPath: 'too-large'})", uri)
    page.wait_for_function("n => { const f = document.querySelector('iframe'); return f && f.src.length === n; }",
                           arg=len(uri))
    frame = page.query_selector("iframe").content_frame()
    frame.wait_for_load_state("load")
    assert not frame.url.startswith("data:text/html"), "Chromium showed a data URL over 2 MiB in a frame"


def test_every_clip_plays_beside_its_ground_truth_and_its_spectrograms(opened):
    page, errors, items, _ = opened
    for path, item in items.items():
        group = clip_group(path)
        if group is None:
            continue
        frame = show(page, path, item)
        probes = frame.evaluate(PROBE_AUDIO)
        assert len(probes) == PLAYERS[group], (item["name"], probes)
        for probe in probes:
            assert probe["canPlay"] in ("probably", "maybe"), (item["name"], probe)
            assert probe["outcome"] == "loaded" and probe["readyState"] >= 2, (item["name"], probe)
            assert probe["duration"] > 0.2, (item["name"], probe)
        if group != "from-text":
            assert probes[0]["label"] == "recording (ground truth)", (item["name"], probes)
        if group == "vocoders":  # the vocoders ran on the recording's own (teacher-forced) frames
            durations = [probe["duration"] for probe in probes]
            assert max(durations) - min(durations) < 0.05, (item["name"], durations)
        spectrogram = frame.evaluate(
            "() => { const img = document.querySelector('img[alt^=\"spectrograms\"]');"
            " return img ? img.naturalWidth : 0; }"
        )
        assert spectrogram > 200, f"{item['name']}: no spectrogram drawn"
    assert not errors, errors


def test_the_audio_category_opens_from_the_menu(opened, screenshot_dir):
    """Click through the report as a reader does: Audio, held-out, the clip's view button; then Results,
    Features, pitch.png's view button."""
    page, errors, items, _ = opened
    shots = screenshot_dir
    page.evaluate("() => app.setView({navbarMode: 'menu', content: 'rulegraph'})")
    page.get_by_text("Audio", exact=True).click()
    page.get_by_text("held-out", exact=True).click()
    page.locator("table").get_by_role("link").first.click()
    frame = page.wait_for_selector("iframe").content_frame()
    frame.wait_for_selector("audio")
    assert frame.url.startswith("data:text/html")
    page.screenshot(path=shots / "report-audio-page.png")
    page.get_by_text("Results", exact=True).click()
    page.get_by_text("Features", exact=True).click()
    page.locator("tr", has_text="pitch.png").get_by_role("link").first.click()
    pitch = next(item for item in items.values() if item["name"] == "pitch.png")
    page.wait_for_function("uri => Array.from(document.images).some(img => img.src === uri && img.complete)",
                           arg=pitch["data_uri"])
    page.screenshot(path=shots / "report-spectrogram-page.png")
    assert not errors, errors
