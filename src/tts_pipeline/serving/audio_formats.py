"""Audio as bytes for an HTTP answer: 16-bit PCM WAV, FLAC, raw PCM, and a WAV header for a stream.

A streamed WAV cannot know its length when its header leaves, so its RIFF and data sizes are
``0xFFFFFFFF`` ("unknown"), which players and decoders (libsndfile, browsers, ffmpeg) read to the end
of the stream, as streaming TTS servers send them. Samples are rounded and saturated exactly as
``synthesize`` writes its files (:func:`tts_pipeline.inference.postprocess.to_pcm16`).
"""

from __future__ import annotations

import io
import struct

import numpy as np
import soundfile as sf

from tts_pipeline.inference.postprocess import to_pcm16

FORMATS = ("wav", "flac", "pcm")
# formats sent as the audio is made; FLAC is encoded whole (its header holds the length and an MD5)
STREAMED = ("wav", "pcm")
UNKNOWN_SIZE = 0xFFFFFFFF


def pcm16_bytes(audio: np.ndarray) -> bytes:
    """``(N,)`` float audio in [-1, 1] -> little-endian 16-bit samples."""
    return to_pcm16(audio).astype("<i2").tobytes()


def wav_header(sampling_rate: int, n_samples: int | None) -> bytes:
    """The 44-byte header of a mono 16-bit PCM WAV of ``n_samples`` samples (None: unknown, streamed)."""
    if n_samples is None:
        data_size = riff_size = UNKNOWN_SIZE
    else:
        data_size = 2 * n_samples
        riff_size = 36 + data_size
    byte_rate = 2 * sampling_rate
    return (
        b"RIFF" + struct.pack("<I", riff_size) + b"WAVE"
        + b"fmt " + struct.pack("<IHHIIHH", 16, 1, 1, sampling_rate, byte_rate, 2, 16)
        + b"data" + struct.pack("<I", data_size)
    )  # fmt: skip


def encode(audio: np.ndarray, sampling_rate: int, fmt: str) -> bytes:
    """A whole ``(N,)`` float waveform as a file of format ``fmt`` (:data:`FORMATS`)."""
    if fmt == "wav":
        return wav_header(sampling_rate, len(audio)) + pcm16_bytes(audio)
    if fmt == "pcm":
        return pcm16_bytes(audio)
    if fmt == "flac":
        buffer = io.BytesIO()
        sf.write(buffer, to_pcm16(audio), sampling_rate, format="FLAC", subtype="PCM_16")
        return buffer.getvalue()
    raise ValueError(f"response_format: expected one of {', '.join(FORMATS)}, got {fmt!r}")


def media_type(fmt: str, sampling_rate: int) -> str:
    """The Content-Type of format ``fmt`` (raw PCM says its rate, RFC 2586's ``audio/L16``)."""
    types = {"wav": "audio/wav", "flac": "audio/flac", "pcm": f"audio/L16; rate={sampling_rate}; channels=1"}
    if fmt not in types:
        raise ValueError(f"response_format: expected one of {', '.join(FORMATS)}, got {fmt!r}")
    return types[fmt]
