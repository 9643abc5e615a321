"""The pause table's measures on synthetic signals: a tone burst between silences, the same with a steady
low hum at a known level, the noise floor of each, the frame classes, the flags and the Markdown table."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tts_pipeline.audio import MelSpectrogram
from tts_pipeline.benchmark import pauses
from tts_pipeline.benchmark.document import pauses_markdown
from tts_pipeline.config import AudioConfig

AUDIO = AudioConfig()
RATE = AUDIO.sampling_rate
BURST_AMPLITUDE = 0.3
HUM_HZ = RATE / AUDIO.hop_length  # 86 Hz: a low, steady tone in the first mel channels


def seconds(value: float) -> np.ndarray:
    return np.arange(int(value * RATE)) / RATE


def burst() -> np.ndarray:
    """0.5 s of silence, 1 s of a 220 Hz tone, 0.5 s of silence: float64 ``(2 * RATE,)``."""
    silence = np.zeros(int(0.5 * RATE))
    return np.concatenate([silence, BURST_AMPLITUDE * np.sin(2 * np.pi * 220 * seconds(1.0)), silence])


def hum(n: int, level_db: float) -> np.ndarray:
    """A steady sine of ``HUM_HZ`` whose power is ``level_db`` relative to the burst's (a^2 / 2 each)."""
    amplitude = BURST_AMPLITUDE * 10 ** (level_db / 20)
    return amplitude * np.sin(2 * np.pi * HUM_HZ * np.arange(n) / RATE)


def mel_of(audio: np.ndarray) -> np.ndarray:
    with torch.no_grad():
        return MelSpectrogram(AUDIO)(torch.from_numpy(audio.astype(np.float32))).numpy()


@pytest.fixture(scope="module")
def recording() -> tuple[np.ndarray, pauses.FrameClasses]:
    """The burst and its frame classes, from its own mel (as the benchmark takes them from ground truth)."""
    audio = burst()
    return audio, pauses.classify_frames(pauses.mel_power(mel_of(audio)))


def test_frames_are_the_mels_frames():
    audio = burst()
    power = pauses.frame_power(audio, AUDIO)
    assert power.shape == (audio.size // AUDIO.hop_length,) == (mel_of(audio).shape[1],)
    # a sine of amplitude a reads a^2 / 2 inside the burst, the floor in digital silence
    middle = power.size // 2
    assert power[middle] == pytest.approx(BURST_AMPLITUDE**2 / 2, rel=0.01)
    assert power[0] == pauses.POWER_FLOOR
    # the audio's loud frames are the mel's: the same framing, frame for frame
    loud_audio = pauses.classify_frames(power).speech
    loud_mel = pauses.classify_frames(pauses.mel_power(mel_of(audio))).speech
    assert np.count_nonzero(loud_audio != loud_mel) <= 2
    assert pauses.frame_power(np.zeros(AUDIO.hop_length - 1), AUDIO).shape == (0,)
    assert pauses.frame_power(np.ones(300), AUDIO).shape == (1,)  # too short to reflect: zero-padded


def test_frame_classes_follow_the_thresholds():
    levels = np.array([0.0] * 20 + [-30.0] * 5 + [-45.0] * 5)
    classes = pauses.classify_frames(10 ** (levels / 10))
    assert classes.speech.tolist() == [True] * 20 + [False] * 10
    assert classes.pause.tolist() == [False] * 25 + [True] * 5
    assert pauses.classify_frames(np.zeros(0)).pause.shape == (0,)


def test_a_burst_between_silences_has_pauses_at_the_floor(recording):
    audio, classes = recording
    assert classes.pause.sum() > 60 and classes.speech.sum() > 80  # about 0.4 s and 1 s
    level = pauses.pause_level_db(pauses.frame_power(audio, AUDIO), classes)
    floor = pauses.power_db(pauses.POWER_FLOOR) - pauses.power_db(BURST_AMPLITUDE**2 / 2)
    assert level == pytest.approx(floor, abs=1.0)


@pytest.mark.parametrize("level_db", [-50.0, -35.0, -20.0])
def test_a_steady_hum_reads_its_level_in_the_pauses(recording, level_db):
    audio, classes = recording  # the pauses of the clean recording, as copy synthesis is measured
    hummed = audio + hum(audio.size, level_db)
    measured = pauses.pause_level_db(pauses.frame_power(hummed, AUDIO), classes)
    assert measured == pytest.approx(level_db, abs=1.0)


def test_a_constant_offset_is_not_heard_but_a_low_hum_is(recording):
    audio, classes = recording
    offset = pauses.pause_level_db(pauses.frame_power(audio + 0.05, AUDIO), classes)
    assert offset == pytest.approx(pauses.pause_level_db(pauses.frame_power(audio, AUDIO), classes), abs=1.0)
    mains = audio + 0.05 * np.sin(2 * np.pi * 50 * np.arange(audio.size) / RATE)  # the same amplitude at 50 Hz
    hum_db = pauses.power_db(0.05**2 / 2) - pauses.power_db(BURST_AMPLITUDE**2 / 2)
    assert pauses.pause_level_db(pauses.frame_power(mains, AUDIO), classes) == pytest.approx(hum_db, abs=1.0)


def test_the_noise_floor_tells_silence_from_a_hum():
    audio = burst()
    silent = pauses.noise_floor_db(pauses.frame_power(audio, AUDIO))
    hummed = pauses.noise_floor_db(pauses.frame_power(audio + hum(audio.size, -30.0), AUDIO))
    steady = pauses.noise_floor_db(pauses.frame_power(hum(audio.size, 0.0), AUDIO))
    assert silent < -80
    assert hummed == pytest.approx(-30.0, abs=2.0)
    assert steady == pytest.approx(0.0, abs=0.5)
    assert pauses.noise_floor_db(np.zeros(0)) is None


def test_too_few_pause_frames_or_other_lengths(recording):
    audio, classes = recording
    power = pauses.frame_power(audio, AUDIO)
    few = pauses.FrameClasses(np.zeros_like(classes.pause), classes.speech)
    few.pause[: pauses.MIN_PAUSE_FRAMES - 1] = True
    assert pauses.pause_level_db(power, few) is None
    with pytest.raises(ValueError, match="audio frames against"):
        pauses.pause_level_db(power[:-1], classes)


def test_spread_is_median_and_quartiles_of_what_was_measured():
    assert pauses.spread([4.0, None, 1.0, 3.0, 2.0, 5.0]) == {"median": 3.0, "q1": 2.0, "q3": 4.0, "measured": 5}
    assert pauses.spread([None]) == {"median": None, "q1": None, "q3": None, "measured": 0}


def row(name: str, level: float | None, reference: bool = False) -> dict:
    return {"name": name, "description": name.replace("_", " "), "reference": reference, "pause_level_db": level}


def test_flags_mark_vocoders_with_loud_pauses_and_noisy_product_wavs():
    assert pauses.flag_row(row("tts", -34.0)) == pauses.HUM
    assert pauses.flag_row(row("tts", -36.0)) is None
    assert pauses.flag_row(row("tts", None)) is None
    assert pauses.flag_row(row("griffin_lim_ground_truth", -20.0, reference=True)) is None  # a reference point
    assert pauses.flag_product({"noise_floor_db": -44.0}) == pauses.HUM
    assert pauses.flag_product({"noise_floor_db": -46.0}) is None


def test_the_section_and_its_table_flag_the_humming_row():
    audio, ids = burst(), ["a", "b"]
    mels = [mel_of(audio)] * 2
    hummed = [audio + hum(audio.size, -19.0), audio + hum(audio.size, -18.0)]
    rows = [
        pauses.pause_row("recordings", "Recordings", ids, [audio, audio], mels, AUDIO, reference=True),
        pauses.pause_row("copy", "A humming vocoder", ids, hummed, mels, AUDIO, reference=False),
        pauses.pause_row("quiet", "A quiet vocoder", ids, [audio + hum(audio.size, -60.0)] * 2, mels, AUDIO, False),
    ]
    assert rows[1]["pause_level_db"] == pytest.approx(-18.5, abs=1.0) and rows[1]["measured"] == 2
    assert rows[1]["per_utterance"]["a"] == pytest.approx(-19.0, abs=1.0)
    assert [r["flag"] for r in rows] == [None, pauses.HUM, None]
    product = pauses.product_floor(["p"], [audio + hum(audio.size, -25.0)], AUDIO)
    assert product["noise_floor_db"] == pytest.approx(-25.0, abs=2.0) and product["flag"] == pauses.HUM

    section = pauses.pause_section(rows, product, ids)
    assert len(section["findings"]) == 2 and section["findings"][0].startswith("HUM: A humming vocoder")
    assert f"(recordings: {rows[0]['pause_level_db']:+.0f} dB)" in section["findings"][0]
    assert "only 25 dB below" in section["findings"][1]
    markdown = "\n".join(pauses_markdown(section))
    lines = {line.split("|")[1].strip(): line for line in markdown.splitlines() if line.startswith("| ")}
    assert lines["A humming vocoder"].rstrip(" |").endswith("HUM") and "2 of 2" in lines["A humming vocoder"]
    assert "HUM" not in lines["Recordings"] and "HUM" not in lines["A quiet vocoder"]
    assert "HUM" in lines["Synthesised WAVs (`synthesize`, 1 phrases: what a user gets)"]
    assert "pauses at most -35 dB" in markdown and "at most -45 dB" in markdown
    quiet = pauses.pause_section(rows[:1], None, ids)
    assert quiet["findings"] == [] and "No vocoder row's pauses are above -35 dB" in "\n".join(pauses_markdown(quiet))


def test_pauses_far_louder_than_griffin_lims_on_the_same_mels_hum_too():
    """The demo's vocoder sat at -40 dB, under the absolute limit, while Griffin-Lim on the same mels
    read -75 dB: the mel asked for silence, so 35 dB above Griffin-Lim is a hum."""
    audio, ids = burst(), ["a"]
    mels = [mel_of(audio)]
    rows = pauses.compare_with_griffin_lim([
        pauses.pause_row("griffin_lim_ground_truth", "GL", ids, [audio + hum(audio.size, -75.0)], mels, AUDIO, True),
        pauses.pause_row("hifigan_fine_tuned_ground_truth", "copy", ids, [audio + hum(audio.size, -40.0)], mels,
                         AUDIO, False),
        pauses.pause_row("hifigan_base_ground_truth", "near", ids, [audio + hum(audio.size, -65.0)], mels, AUDIO,
                         False),
        pauses.pause_row("tts", "no Griffin-Lim on its mels", ids, [audio + hum(audio.size, -40.0)], mels, AUDIO,
                         False),
    ])  # fmt: skip
    by_name = {row["name"]: row for row in rows}
    copy = by_name["hifigan_fine_tuned_ground_truth"]
    assert copy["above_griffin_lim_db"] == pytest.approx(35.0, abs=2.0) and copy["flag"] == pauses.HUM
    assert by_name["hifigan_base_ground_truth"]["flag"] is None  # about 10 dB above: within the margin
    assert by_name["tts"]["above_griffin_lim_db"] is None and by_name["tts"]["flag"] is None
    assert by_name["griffin_lim_ground_truth"]["above_griffin_lim_db"] is None  # a reference: not compared
    finding = pauses.findings(rows, None)[0]
    assert "35 dB above Griffin-Lim's on the same mels" in finding or "34 dB above" in finding
