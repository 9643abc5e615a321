"""The exported voice spoken by :class:`tts_pipeline.serving.speaker.Speaker` with both engines: equal to
``synthesize``'s audio within one 16-bit step, streamed in chunks equal to the whole, the numpy denoiser
equal to the torch one, errors that name what was wrong, and the ONNX engine without torch."""

from __future__ import annotations

import io
import subprocess
import sys

import numpy as np
import pytest
import soundfile as sf
import torch

from tts_pipeline.config import AudioConfig
from tts_pipeline.errors import UserError
from tts_pipeline.inference import SynthesisOptions, Synthesizer
from tts_pipeline.models.denoiser import Denoiser
from tts_pipeline.serving import audio_formats
from tts_pipeline.serving.denoise import NumpyDenoiser
from tts_pipeline.serving.speaker import Speaker
from tts_pipeline.serving.streaming import ChunkPlan

from ..inference_models import AUDIO
from ..voice_folder import export_tiny_voice

STEP = 1 / 32768  # one 16-bit step
SHORT = "Hello there, how are you?"
# over 200 symbols: spoken in two pieces with a pause
LONG = (
    "The old lighthouse keeper painted the door a bright shade of blue, and then he sat down to rest. "
    "Later that evening, the storm rolled in from the west and the waves rose higher than anyone in the "
    "village could remember."
)


@pytest.fixture(scope="module")
def voice(tmp_path_factory):
    return export_tiny_voice(tmp_path_factory.mktemp("voice"))


@pytest.fixture(scope="module")
def synthesized(voice):
    """``synthesize``'s path on the same model files, fp32, the card's denoiser."""
    options = SynthesisOptions(denoising_strength=0.01)
    synth = Synthesizer.load(voice / "fastpitch.pt", voice / "hifigan.pt", options, amp="off")
    return {text: synth.synthesize([text])[0].audio for text in (SHORT, LONG)}


@pytest.mark.parametrize("text", [SHORT, LONG])
def test_the_torch_engine_speaks_as_synthesize_does(voice, synthesized, text):
    speaker = Speaker.load(voice, engine="torch")
    assert speaker.settings.denoising_strength == 0.01 and speaker.engine_name == "torch"
    audio = speaker.speak(text)
    expected = synthesized[text]
    assert audio.shape == expected.shape
    assert np.abs(audio - expected).max() <= STEP
    if text == LONG:
        assert len(speaker.pieces(text)) == 2


def test_the_onnx_engine_speaks_as_the_torch_engine(voice):
    onnx_audio = Speaker.load(voice, engine="onnx").speak(LONG)
    torch_audio = Speaker.load(voice, engine="torch").speak(LONG)
    assert onnx_audio.shape == torch_audio.shape
    noise = np.sum((onnx_audio - torch_audio) ** 2)
    assert 10 * np.log10(np.sum(torch_audio**2) / max(noise, 1e-30)) >= 60


def test_a_stream_is_the_whole_in_chunks(voice):
    speaker = Speaker.load(voice)
    assert speaker.card["vocoder"]["stream_from_start"] is False  # no harmonic source: context is enough
    speaker.plan = ChunkPlan(first_frames=4, max_frames=16, context_frames=24)
    chunks = list(speaker.stream(LONG, speed=1.3))
    assert len(chunks) > 4 and len(chunks[0]) == 4 * speaker.hop
    whole = Speaker(speaker.card, speaker.engine, "card", ChunkPlan(10**6, 10**6)).speak(LONG, speed=1.3)
    assert np.abs(np.concatenate(chunks) - whole).max() <= 1e-6
    assert len(whole) < len(speaker.speak(LONG))  # speed 1.3 is faster than 1.0


def test_a_voice_with_a_harmonic_source_streams_each_chunk_from_the_start(tmp_path):
    """Its running phase makes a sample depend on every earlier frame: with the card's flag the stream
    still equals the whole; cut with context alone, it would not."""
    voice = export_tiny_voice(tmp_path, harmonic=True)
    speaker = Speaker.load(voice)
    assert speaker.card["vocoder"]["stream_from_start"] is True
    speaker.plan = ChunkPlan(first_frames=4, max_frames=16, context_frames=24)
    whole = Speaker(speaker.card, speaker.engine, "card", ChunkPlan(10**6, 10**6)).speak(SHORT)
    assert np.abs(np.concatenate(list(speaker.stream(SHORT))) - whole).max() <= 1e-4

    speaker.card["vocoder"]["stream_from_start"] = False
    assert np.abs(np.concatenate(list(speaker.stream(SHORT))) - whole).max() > 1e-2


def test_the_numpy_denoiser_is_the_torch_one():
    generator = torch.Generator().manual_seed(0)
    audio_cfg = AudioConfig(**{**AUDIO.model_dump(), "win_length": 800})  # a window shorter than n_fft, too
    bias = torch.rand(audio_cfg.filter_length // 2 + 1, generator=generator) * 0.1
    audio = torch.randn(5000, generator=generator) * 0.3
    expected = Denoiser(bias, audio_cfg)(audio, 0.5).numpy()
    denoiser = NumpyDenoiser(bias.numpy(), audio_cfg.filter_length, audio_cfg.hop_length, audio_cfg.win_length)
    assert np.abs(denoiser(audio.numpy(), 0.5) - expected).max() < 1e-5


def test_bad_text_is_refused_before_any_model_runs(voice):
    speaker = Speaker.load(voice)
    with pytest.raises(UserError, match="empty after"):
        next(speaker.stream("   "))
    with pytest.raises(UserError, match="5000"):
        speaker.pieces("word " * 2000)
    with pytest.raises(UserError, match="speed"):
        next(speaker.stream(SHORT, speed=0))


def test_an_engine_without_its_files_is_named(voice, tmp_path):
    import shutil

    copy = tmp_path / "export"
    shutil.copytree(voice, copy)
    (copy / "hifigan.pt").unlink()
    with pytest.raises(UserError, match=r"vocoder\.files\.pytorch"):
        Speaker.load(copy, engine="torch")
    with pytest.raises(UserError, match="engine: expected one of onnx, torch"):
        Speaker.load(copy, engine="tensorrt")


def test_the_onnx_engine_runs_without_torch(voice):
    code = (
        "import sys; from tts_pipeline.serving.speaker import Speaker; "
        f"audio = Speaker.load({str(voice)!r}).speak('Hello.'); "
        "assert audio.size > 0; assert 'torch' not in sys.modules, 'torch was imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_audio_formats_decode():
    audio = np.sin(np.linspace(0, 200, 4000)).astype(np.float32) * 0.5
    for fmt in ("wav", "flac"):
        decoded, rate = sf.read(io.BytesIO(audio_formats.encode(audio, 22050, fmt)), dtype="int16")
        assert rate == 22050 and np.array_equal(decoded, np.rint(audio * 32768).astype(np.int16))
    raw = np.frombuffer(audio_formats.encode(audio, 22050, "pcm"), dtype="<i2")
    assert np.array_equal(raw, np.rint(audio * 32768).astype(np.int16))
    # a streamed WAV: unknown sizes in the header, read to the end of the bytes
    streamed = audio_formats.wav_header(22050, None) + audio_formats.pcm16_bytes(audio)
    decoded, rate = sf.read(io.BytesIO(streamed), dtype="int16")
    assert rate == 22050 and len(decoded) == len(audio)
    assert audio_formats.media_type("pcm", 22050) == "audio/L16; rate=22050; channels=1"
    with pytest.raises(ValueError, match="response_format"):
        audio_formats.encode(audio, 22050, "mp3")
