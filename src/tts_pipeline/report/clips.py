"""One report page per clip: its spectrograms side by side and every version of it playable.

Snakemake's one-file report shows an HTML item in an iframe whose source is the whole item as a
``data:`` URL. Chromium (Chrome, Edge) refuses data URLs over 2 MiB there and shows a blank frame, so an
item must stay under about 1.5 MB before base64 (:data:`MAX_PAGE_BYTES`). Hence one page per clip (the
rule declares the folder with ``report(directory(...), patterns=[...])``, which makes each page its own
report item), and audio embedded compressed: FLAC, lossless, so that what a listener hears is the
vocoder and not a codec, and playable in every mainstream browser. A page whose FLAC would not fit
(long clips, many versions) is written with Ogg Opus instead and says so; a page too large even then
is an error that names it.
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tts_pipeline.errors import UserError

#: Largest page (bytes) whose base64 data URL, about 4/3 as long, stays under Chromium's 2 MiB.
MAX_PAGE_BYTES = 1_500_000
#: Opus encodes only these rates; other clips are resampled to 48 kHz first.
OPUS_RATES = (8000, 12000, 16000, 24000, 48000)
#: The codecs tried in turn, best first: (name, MIME type of the ``data:`` URL).
CODECS = (("flac", "audio/flac"), ("opus", "audio/ogg;codecs=opus"))

STYLE = (
    "body{font-family:sans-serif;margin:1.2em;} img{max-width:100%;} .note{color:#555;max-width:60em;}"
    ".players{display:flex;flex-wrap:wrap;gap:.6em 1.2em;margin:1em 0;} .player{width:270px;} audio{width:100%;}"
)


@dataclass(frozen=True)
class Version:
    """One way of saying the clip: a label (``recording`` for the ground truth) and float audio ``(N,)``."""

    label: str
    audio: np.ndarray


@dataclass(frozen=True)
class ClipPage:
    """What one page shows: the versions of one sentence, the ground truth first when there is one.

    ``group`` and ``name`` make the page's path, ``<group>/<name>.html``, and with it the report item's
    subcategory and label.
    """

    group: str
    name: str
    text: str
    note: str
    versions: Sequence[Version]


@dataclass(frozen=True)
class WrittenPage:
    """Where a page went, how large it is and which codec its audio has."""

    path: Path
    size: int
    codec: str


def encode(audio: np.ndarray, rate: int, codec: str) -> bytes:
    """``audio`` ``(N,)`` in ``[-1, 1]`` as the bytes of a FLAC (16-bit) or Ogg Opus file."""
    import soundfile as sf

    samples = np.clip(np.asarray(audio, dtype=np.float32), -1.0, 1.0)
    buffer = io.BytesIO()
    if codec == "flac":
        sf.write(buffer, samples, rate, format="FLAC", subtype="PCM_16")
    elif codec == "opus":
        if rate not in OPUS_RATES:
            import soxr

            samples, rate = soxr.resample(samples, rate, 48000).astype(np.float32), 48000
        sf.write(buffer, samples, rate, format="OGG", subtype="OPUS")
    else:
        raise ValueError(f"encode: unknown codec {codec!r} (known: {', '.join(name for name, _ in CODECS)})")
    return buffer.getvalue()


def spectrogram_png(versions: Sequence[Version], mel: Callable[[np.ndarray], np.ndarray], frame_period_s: float,
                    dpi: int = 72) -> bytes:
    """The log-mels of ``versions`` side by side on one colour scale, as PNG bytes.

    Args:
        mel: Audio ``(N,)`` to log-mel ``(n_mels, T)``; the pipeline's one mel function.
        frame_period_s: hop / sampling rate.
    """
    import matplotlib.pyplot as plt

    from tts_pipeline.plots import spectrogram_panels

    figure = spectrogram_panels({version.label: mel(version.audio) for version in versions}, frame_period_s)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi)
    plt.close(figure)
    return buffer.getvalue()


def clip_html(clip: ClipPage, png: bytes, rate: int, codec: str) -> str:
    """The page of ``clip``: heading, note, spectrograms, then a player per version, each embedded."""
    mime = dict(CODECS)[codec]
    players = []
    for version in clip.versions:
        data = base64.b64encode(encode(version.audio, rate, codec)).decode("ascii")
        players.append(
            f"<div class='player'><b>{html.escape(version.label)}</b><br>"
            f"<audio controls preload='metadata' src='data:{mime};base64,{data}'></audio></div>"
        )
    codec_note = "" if codec == "flac" else (
        "<p class='note'>Audio in lossy Opus: this page in lossless FLAC would be too large for a browser "
        "to show inside the report.</p>"
    )
    image = base64.b64encode(png).decode("ascii")
    title = f"{clip.name}: {clip.text}" if clip.text else clip.name
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(clip.name)}</title>"
        f"<style>{STYLE}</style></head><body><h3>{html.escape(title)}</h3>"
        f"<p class='note'>{html.escape(clip.note)}</p>{codec_note}"
        f"<div class='players'>{''.join(players)}</div>"
        f"<img alt='spectrograms of {html.escape(clip.name)}' src='data:image/png;base64,{image}'>"
        "</body></html>\n"
    )


def write_clip_pages(
    clips: Sequence[ClipPage],
    out_dir: Path,
    rate: int,
    mel: Callable[[np.ndarray], np.ndarray],
    frame_period_s: float,
    max_bytes: int = MAX_PAGE_BYTES,
) -> list[WrittenPage]:
    """Write ``out_dir/<group>/<name>.html`` for every clip, each under ``max_bytes``.

    FLAC first; Opus where FLAC does not fit. Raises :class:`UserError` naming the page when neither does.
    """
    from tts_pipeline.files import write_text

    written = []
    for clip in clips:
        png = spectrogram_png(clip.versions, mel, frame_period_s)
        sizes = {}
        for codec, _ in CODECS:
            page = clip_html(clip, png, rate, codec)
            sizes[codec] = len(page.encode("utf-8"))
            if sizes[codec] <= max_bytes:
                path = out_dir / clip.group / f"{clip.name}.html"
                write_text(path, page)
                written.append(WrittenPage(path, sizes[codec], codec))
                break
        else:
            tried = ", ".join(f"{size / 1e6:.2f} MB in {codec}" for codec, size in sizes.items())
            raise UserError(
                f"report: the page of {clip.group}/{clip.name} would be {tried}, over the {max_bytes / 1e6:.2f} MB "
                f"a browser shows inside the report ({len(clip.versions)} versions of "
                f"{max(len(v.audio) for v in clip.versions) / rate:.1f} s); shorter clips would fit"
            )
    return written
