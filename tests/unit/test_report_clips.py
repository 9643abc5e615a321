"""Clip pages of the report: lossless FLAC when it fits, Opus when not, never a page over the budget."""

from __future__ import annotations

import base64
import io
import re

import numpy as np
import pytest
import soundfile as sf

from tts_pipeline.errors import UserError
from tts_pipeline.report.clips import MAX_PAGE_BYTES, ClipPage, Version, encode, write_clip_pages

RATE = 22050


def tone(seconds: float, noise: float = 0.0, seed: int = 0) -> np.ndarray:
    t = np.arange(int(seconds * RATE)) / RATE
    audio = 0.4 * np.sin(2 * np.pi * 180 * t) + noise * np.random.default_rng(seed).standard_normal(t.size)
    return audio.astype(np.float32)


def fake_mel(audio: np.ndarray) -> np.ndarray:
    """A stand-in log-mel (16, T): enough for a figure, no STFT needed."""
    frames = audio[: audio.size // 256 * 256].reshape(-1, 256)
    return np.log(np.abs(frames[:, :16]).T + 1e-5)


def clip(seconds: float, noise: float = 0.0, versions: int = 2) -> ClipPage:
    labels = ["recording", "synthesised", "other"][:versions]
    return ClipPage("held-out", "LJ001-0001", "Printing, in the only sense.", "A note.",
                    [Version(label, tone(seconds, noise, seed)) for seed, label in enumerate(labels)])


def embedded_audio(page: str) -> list[tuple[str, bytes]]:
    return [(mime, base64.b64decode(data)) for mime, data in re.findall(r"src='data:(audio/[^;]+)[^,]*,([^']+)'", page)]


def test_flac_is_lossless_at_16_bit():
    audio = tone(0.5, noise=0.05)
    decoded, rate = sf.read(io.BytesIO(encode(audio, RATE, "flac")), dtype="float32")
    assert rate == RATE
    np.testing.assert_allclose(decoded, audio, atol=1 / 32768 + 1e-7)


def test_opus_is_ogg_at_an_opus_rate():
    data = encode(tone(0.5), RATE, "opus")
    assert data[:4] == b"OggS"
    decoded, rate = sf.read(io.BytesIO(data), dtype="float32")
    assert rate == 48000 and abs(decoded.size / rate - 0.5) < 0.05


def test_unknown_codec_is_refused():
    with pytest.raises(ValueError, match="unknown codec 'mp3'"):
        encode(tone(0.1), RATE, "mp3")


def test_a_short_clip_gets_a_flac_page_with_every_version_and_its_spectrograms(tmp_path):
    [written] = write_clip_pages([clip(1.0)], tmp_path, RATE, fake_mel, 256 / RATE)
    assert written.path == tmp_path / "held-out" / "LJ001-0001.html" and written.codec == "flac"
    page = written.path.read_text()
    assert written.size == len(page.encode()) < MAX_PAGE_BYTES
    audio = embedded_audio(page)
    assert [mime for mime, _ in audio] == ["audio/flac", "audio/flac"]
    assert sf.info(io.BytesIO(audio[0][1])).duration == pytest.approx(1.0, abs=0.01)
    assert page.index("<b>recording</b>") < page.index("<b>synthesised</b>")  # the ground truth first
    png = base64.b64decode(re.search(r"src='data:image/png;base64,([^']+)'", page).group(1))
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert "Printing, in the only sense." in page and "lossy Opus" not in page


def test_a_page_too_large_in_flac_falls_back_to_opus_and_says_so(tmp_path):
    noisy = clip(8.0, noise=0.3)
    budget = 600_000  # the FLAC page is about 1.1 MB here; the Opus one about 0.3 MB
    [written] = write_clip_pages([noisy], tmp_path, RATE, fake_mel, 256 / RATE, max_bytes=budget)
    page = written.path.read_text()
    assert written.codec == "opus" and written.size <= budget
    assert [mime for mime, _ in embedded_audio(page)] == ["audio/ogg", "audio/ogg"]
    assert "lossy Opus" in page


def test_a_page_too_large_even_in_opus_is_an_error_naming_it(tmp_path):
    with pytest.raises(UserError, match=r"held-out/LJ001-0001 would be .* MB in flac, .* MB in opus"):
        write_clip_pages([clip(8.0, noise=0.3)], tmp_path, RATE, fake_mel, 256 / RATE, max_bytes=50_000)
    assert not list(tmp_path.rglob("*.html"))
