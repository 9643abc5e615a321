"""The one mel function: checked against an independent librosa computation on real speech, framing,
batching, the loss variant, precision, and wav loading."""

from __future__ import annotations

from pathlib import Path

import librosa
import numpy as np
import pytest
import soundfile as sf
import torch

from tts_pipeline.audio import MelSpectrogram, frame_times, load_wav, mel_basis, n_frames
from tts_pipeline.config import AudioConfig, DemoCorpusConfig
from tts_pipeline.data.demo_corpus import build_demo_corpus
from tts_pipeline.errors import UserError

CFG = AudioConfig()
RATE = CFG.sampling_rate


@pytest.fixture(scope="module")
def speech(tmp_path_factory: pytest.TempPathFactory) -> list[np.ndarray]:
    """Two eSpeak NG utterances of the demo corpus, loaded as the stages load them."""
    out = tmp_path_factory.mktemp("speech")
    sentences = ["The quick brown fox jumps over the lazy dog.", "Is it raining in the valley today?"]
    build_demo_corpus(out, DemoCorpusConfig(n_utterances=2, seed=3), str.lower, sentences=sentences)
    return [load_wav(path, RATE) for path in sorted((out / "wavs").glob("*.wav"))]


def reference_log_mel(audio: np.ndarray, cfg: AudioConfig, fmax: float) -> np.ndarray:
    """HiFi-GAN's recipe spelled out with librosa in float64: reflect pad, center=False STFT with a
    periodic Hann window, magnitude with 1e-9, Slaney filterbank, log of the clamped value."""
    pad = (cfg.filter_length - cfg.hop_length) // 2
    padded = np.pad(audio.astype(np.float64), (pad, pad), mode="reflect")
    spec = librosa.stft(
        padded, n_fft=cfg.filter_length, hop_length=cfg.hop_length, win_length=cfg.win_length,
        window="hann", center=False, dtype=np.complex128,
    )  # fmt: skip
    magnitude = np.sqrt(spec.real**2 + spec.imag**2 + 1e-9)
    basis = librosa.filters.mel(
        sr=cfg.sampling_rate, n_fft=cfg.filter_length, n_mels=cfg.n_mel_channels, fmin=cfg.mel_fmin, fmax=fmax,
        dtype=np.float64,
    )  # fmt: skip
    return np.log(np.maximum(basis @ magnitude, 1e-5))


def mel_of(audio: np.ndarray, module: MelSpectrogram) -> np.ndarray:
    return module(torch.from_numpy(audio)).numpy()


def test_log_mel_matches_an_independent_librosa_computation_on_speech(speech: list[np.ndarray]) -> None:
    mel = MelSpectrogram(CFG)
    for audio in speech:
        ours = mel_of(audio, mel)
        expected = reference_log_mel(audio, CFG, CFG.mel_fmax)
        assert ours.dtype == np.float32
        assert ours.shape == expected.shape == (80, audio.size // 256)
        assert np.abs(ours - expected).max() < 1e-4
        # real speech, not silence: the comparison covers the whole dynamic range
        assert expected.max() > 0.0 and expected.min() < -11.0


def test_loss_variant_uses_the_nyquist_frequency_and_differs(speech: list[np.ndarray]) -> None:
    audio = speech[0]
    loss_mel = MelSpectrogram.for_loss(CFG)
    assert loss_mel.fmax == RATE / 2
    ours = mel_of(audio, loss_mel)
    assert np.abs(ours - reference_log_mel(audio, CFG, RATE / 2)).max() < 1e-4
    assert np.abs(ours - mel_of(audio, MelSpectrogram(CFG))).max() > 0.5
    explicit = MelSpectrogram.for_loss(CFG.model_copy(update={"mel_fmax_loss": 9000.0}))
    assert explicit.fmax == 9000.0
    assert MelSpectrogram(CFG, fmax=9000.0).fmax == 9000.0


@pytest.mark.parametrize("win_length", [800, 801])
def test_a_window_shorter_than_the_fft_is_centred_in_it(speech: list[np.ndarray], win_length: int) -> None:
    cfg = CFG.model_copy(update={"win_length": win_length})
    audio = speech[1]
    ours = mel_of(audio, MelSpectrogram(cfg))
    assert np.abs(ours - reference_log_mel(audio, cfg, cfg.mel_fmax)).max() < 1e-4
    assert np.abs(ours - mel_of(audio, MelSpectrogram(CFG))).max() > 0.01  # the window length matters


def test_only_bins_above_every_filter_are_skipped() -> None:
    for mel in (MelSpectrogram(CFG), MelSpectrogram.for_loss(CFG)):
        assert mel.basis[:, mel.n_bins - 1].any() and not mel.basis[:, mel.n_bins :].any()
    # at fmax 8 kHz the top 3 kHz of the spectrum feed no filter
    assert MelSpectrogram(CFG).n_bins == 372


@pytest.mark.parametrize("n_samples", [8191, 8192, 8193, 12345, 22051, 256 * 7 + 255])
def test_frame_count_is_n_samples_floor_hop(n_samples: int) -> None:
    audio = np.random.default_rng(n_samples).uniform(-0.5, 0.5, n_samples).astype(np.float32)
    out = mel_of(audio, MelSpectrogram(CFG))
    assert out.shape == (80, n_samples // 256) == (80, n_frames(n_samples, CFG))
    if n_samples == 8192:
        assert out.shape[1] == 32


def test_frame_centres_are_hop_t_plus_half_hop() -> None:
    np.testing.assert_allclose(frame_times(3, CFG), np.array([128, 384, 640]) / RATE)
    assert frame_times(0, CFG).shape == (0,)
    # An impulse at sample 256*t + 128 sits at the centre of frame t's window: that frame sees it at
    # the window's peak (its spectrum is the loudest of all frames).
    audio = np.zeros(256 * 20, dtype=np.float32)
    audio[256 * 9 + 128] = 0.5
    energy = mel_of(audio, MelSpectrogram(CFG)).max(axis=0)
    assert int(np.argmax(energy)) == 9


def test_a_batch_equals_its_items(speech: list[np.ndarray]) -> None:
    length = min(a.size for a in speech)
    items = [a[:length] for a in speech] + [speech[0][-length:]]
    mel = MelSpectrogram(CFG)
    batch = mel(torch.from_numpy(np.stack(items))).numpy()
    assert batch.shape == (3, 80, length // 256)
    for row, item in zip(batch, items, strict=True):
        np.testing.assert_allclose(row, mel_of(item, mel), atol=1e-5, rtol=0)


def test_float64_input_is_computed_in_float64_and_agrees_with_float32(speech: list[np.ndarray]) -> None:
    mel = MelSpectrogram(CFG)
    single = mel_of(speech[1], mel)
    double = mel_of(speech[1].astype(np.float64), mel)
    assert double.dtype == np.float64
    assert np.abs(double - single).max() < 1e-3
    assert np.abs(double - reference_log_mel(speech[1], CFG, CFG.mel_fmax)).max() < 1e-9  # the same formula


def test_half_precision_and_autocast_compute_in_float32(speech: list[np.ndarray]) -> None:
    mel = MelSpectrogram(CFG)
    audio = torch.from_numpy(speech[0][:8192])
    expected = mel(audio)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        under_autocast = mel(audio)
    assert under_autocast.dtype == torch.float32
    torch.testing.assert_close(under_autocast, expected)
    assert mel(audio.to(torch.bfloat16)).dtype == torch.float32


def test_constants_survive_half_precision_casts_and_stay_out_of_checkpoints(speech: list[np.ndarray]) -> None:
    mel = MelSpectrogram(CFG)
    assert mel.state_dict() == {}
    assert mel.basis.shape == (80, 513) and mel.basis.dtype == torch.float64
    audio = torch.from_numpy(speech[0][:8192])
    expected = mel(audio)
    holder = torch.nn.Sequential(torch.nn.Linear(2, 2), mel).to(torch.bfloat16)  # a model cast wholesale
    torch.testing.assert_close(holder[1](audio), expected, rtol=0, atol=0)


def test_too_short_or_wrongly_shaped_audio_is_refused() -> None:
    mel = MelSpectrogram(CFG)
    with pytest.raises(ValueError, match="more than 384 samples"):
        mel(torch.zeros(300))
    with pytest.raises(ValueError, match="expected shape"):
        mel(torch.zeros(1, 1, 4096))


def write(path: Path, samples: np.ndarray, rate: int = RATE, subtype: str = "PCM_16") -> Path:
    sf.write(path, samples, rate, subtype=subtype)
    return path


def test_load_wav_is_pcm_over_32768_exactly(tmp_path: Path) -> None:
    pcm = np.array([0, 1, -1, 32767, -32768, 12345, -20000], dtype=np.int16)
    audio = load_wav(write(tmp_path / "a.wav", pcm), RATE)
    assert audio.dtype == np.float32 and audio.shape == (7,)
    np.testing.assert_array_equal(audio, pcm.astype(np.float32) / 32768.0)
    np.testing.assert_array_equal(load_wav(tmp_path / "a.wav", RATE, max_wav_value=16384.0), audio * 2)


@pytest.mark.parametrize("subtype", ["PCM_16", "PCM_24", "FLOAT"])
def test_load_wav_reads_what_libsndfile_reads_bit_for_bit(tmp_path: Path, subtype: str) -> None:
    """16-bit PCM takes the standard library's reader, other formats libsndfile's: same values."""
    samples = np.random.default_rng(0).uniform(-1, 1, 5000).astype(np.float32)
    samples[:2] = [-1.0, 32767 / 32768]
    path = write(tmp_path / "a.wav", samples, subtype=subtype)
    with sf.SoundFile(path, "r+") as handle:
        handle.title = "a LIST chunk after the data"  # chunks other than fmt and data are skipped
    np.testing.assert_array_equal(load_wav(path, RATE), sf.read(path, dtype="float32")[0])


def test_a_truncated_pcm16_file_ends_with_its_last_whole_sample(tmp_path: Path) -> None:
    path = write(tmp_path / "a.wav", np.arange(-500, 500, dtype=np.int16))
    path.write_bytes(path.read_bytes()[:-7])  # the header still announces 1000 samples
    audio = load_wav(path, RATE)
    np.testing.assert_array_equal(audio, np.arange(-500, 496, dtype=np.float32) / 32768)
    np.testing.assert_array_equal(audio, sf.read(path, dtype="float32")[0])


def test_load_wav_refuses_other_rates_stereo_and_garbage(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"b\.wav.*22050 Hz, got 16000 Hz"):
        load_wav(write(tmp_path / "b.wav", np.zeros(100, np.int16), rate=16000), RATE)
    with pytest.raises(UserError, match=r"c\.wav.*mono.*2 channels"):
        load_wav(write(tmp_path / "c.wav", np.zeros((100, 2), np.int16)), RATE)
    (tmp_path / "d.wav").write_bytes(b"not a wav file")
    with pytest.raises(UserError, match=r"d\.wav.*cannot read"):
        load_wav(tmp_path / "d.wav", RATE)
    with pytest.raises(UserError, match=r"missing\.wav"):
        load_wav(tmp_path / "missing.wav", RATE)


def test_griffin_lim_inverts_a_mel_to_audio_of_the_same_length_and_a_close_mel() -> None:
    from tts_pipeline.audio import griffin_lim

    cfg = AudioConfig()
    t = np.arange(22050) / cfg.sampling_rate
    tone = (0.3 * np.sin(2 * np.pi * 220 * t) + 0.1 * np.sin(2 * np.pi * 660 * t)).astype(np.float32)
    tone[11025:] *= np.linspace(1, 0, 11025, dtype=np.float32)  # a fade: the level must follow the mel
    mel = MelSpectrogram(cfg)(torch.from_numpy(tone)).numpy()
    audio = griffin_lim(mel, cfg)
    assert audio.dtype == np.float32 and audio.shape == (mel.shape[1] * cfg.hop_length,)
    again = MelSpectrogram(cfg)(torch.from_numpy(audio)).numpy()
    loud = mel > np.log(1e-2)  # where the tone is: Griffin-Lim's phase error shows little there
    assert np.abs(again - mel)[loud].mean() < 0.5
    with pytest.raises(ValueError, match="expected shape"):
        griffin_lim(mel[:10], cfg)
    assert np.array_equal(griffin_lim(mel, cfg), audio), "the same mel gives the same audio every call"


def test_mel_inversion_gives_a_non_negative_spectrum_whose_mel_is_the_one_asked_for() -> None:
    from tts_pipeline.audio import mel_basis, mel_to_magnitude

    cfg = AudioConfig()
    basis = mel_basis(cfg, cfg.mel_fmax, dtype=np.float64)
    rng = np.random.default_rng(0)
    spectrum = rng.gamma(0.5, 1.0, size=(basis.shape[1], 40))  # a real spectrum: the mel is reachable
    wanted = basis @ spectrum
    found = mel_to_magnitude(wanted, basis)
    assert found.shape == spectrum.shape and (found >= 0).all()
    assert np.abs(np.log(basis @ found) - np.log(wanted)).mean() < 0.01


def test_griffin_lim_on_two_processes_gives_what_one_process_gives() -> None:
    from tts_pipeline.benchmark.listening import griffin_lim_all

    cfg = AudioConfig()
    rng = np.random.default_rng(1)
    # Enough mels to be worth a pool of two (fewer run in this process).
    mels = [rng.uniform(-8, 0, size=(cfg.n_mel_channels, frames)).astype(np.float32) for frames in range(8, 24)]
    one = griffin_lim_all(mels, cfg, workers=1)
    two = griffin_lim_all(mels, cfg, workers=2)
    assert len(two) == len(mels) and all(np.array_equal(a, b) for a, b in zip(one, two, strict=True))


def test_the_cached_mel_filterbank_is_handed_out_as_copies():
    # mel_basis is cached per process: a caller that changes its array must not change the next caller's
    cfg = AudioConfig()
    first = mel_basis(cfg, cfg.mel_fmax, dtype=np.float64)
    expected = first.copy()
    first *= 0.0
    again = mel_basis(cfg, cfg.mel_fmax, dtype=np.float64)
    np.testing.assert_array_equal(again, expected)
    assert again.dtype == np.float64 and mel_basis(cfg, cfg.mel_fmax).dtype == np.float32
