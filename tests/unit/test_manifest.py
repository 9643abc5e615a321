"""Manifest: validation of every utterance, the on_invalid policy, resampling, outputs."""

from __future__ import annotations

import importlib
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile as sf

from tts_pipeline.config import DataConfig, SplitConfig, TextConfig
from tts_pipeline.data.ljspeech_split import DISCARDED_IDS, TEST_IDS, TRANSCRIPT_CONTINUATIONS, VAL_IDS
from tts_pipeline.data.manifest import ManifestError, ManifestResult, build_manifest, read_manifest, write_manifest
from tts_pipeline.data.metadata import TextFrontEnd, read_metadata
from tts_pipeline.data.splits import SplitError

RATE = 8000  # small clips keep the tests fast; the rate itself does not matter here
ALLOWED = set("abcdefghijklmnopqrstuvwxyz .,'!?-:;()")

# Stand-ins for tts_pipeline.text: lowercase + collapse spaces; unknown = outside a small alphabet.
FAKE_TEXT = TextFrontEnd(
    normalize=lambda text, cleaners: " ".join(text.lower().split()),
    unknown_characters=lambda text, symbol_set: sorted({ch for ch in text if ch not in ALLOWED}),
)


def tone(seconds: float = 0.1, rate: int = RATE, amplitude: float = 0.3, channels: int = 1) -> np.ndarray:
    """A sine wave, (N,) or (N, channels) float32."""
    t = np.arange(int(round(seconds * rate))) / rate
    wave = (amplitude * np.sin(2 * np.pi * 220 * t)).astype(np.float32)
    return wave if channels == 1 else np.repeat(wave[:, None], channels, axis=1)


def make_corpus(root: Path, lines: list[str | bytes], wavs: dict[str, Any]) -> Path:
    """Write metadata.csv (lines as given) and wavs/<id>.wav (array at RATE, (array, rate), or raw bytes)."""
    (root / "wavs").mkdir(parents=True)
    encoded = [line if isinstance(line, bytes) else line.encode("utf-8") for line in lines]
    (root / "metadata.csv").write_bytes(b"\n".join(encoded) + b"\n")
    for utterance_id, audio in wavs.items():
        path = root / "wavs" / f"{utterance_id}.wav"
        if isinstance(audio, bytes):
            path.write_bytes(audio)
        else:
            samples, rate = audio if isinstance(audio, tuple) else (audio, RATE)
            sf.write(path, samples, rate, subtype="PCM_16")
    return root


def good_utterances(n: int = 4) -> tuple[list[str], dict[str, Any]]:
    ids = [f"good{k}" for k in range(n)]
    # Letters, not digits: the stand-in front end does not expand numbers.
    lines = [f"{i}|Raw Text {k}.|Hello  World take {'abcdefghijklmnop'[k]}." for k, i in enumerate(ids)]
    return lines, {i: tone() for i in ids}


def data_config(**overrides: Any) -> DataConfig:
    settings: dict[str, Any] = {
        "on_invalid": "skip",
        "min_duration_s": 0.05,
        "max_duration_s": 1.0,
        "split": SplitConfig(scheme="random", val_size=1, test_size=1, seed=0),
    }
    settings.update(overrides)
    return DataConfig(**settings)


def build(root: Path, **overrides: Any) -> ManifestResult:
    return build_manifest(
        root, data_config(**overrides), TextConfig(), RATE,
        resample_dir=root.parent / "resampled", front_end=FAKE_TEXT,
    )


def all_ids(result: ManifestResult) -> set[str]:
    return {record.id for records in result.splits.values() for record in records}


# --------------------------------------------------------------------------------------------------
# a clean corpus
# --------------------------------------------------------------------------------------------------


def test_clean_corpus_gives_sorted_complete_records(tmp_path: Path) -> None:
    lines, wavs = good_utterances(5)
    lines.append("rawonly|Only The Raw Column|")  # empty third column: the second one is used
    wavs["rawonly"] = tone(0.2)
    root = make_corpus(tmp_path / "corpus", lines, wavs)
    result = build(root)

    assert {name: len(records) for name, records in result.splits.items()} == {"train": 4, "val": 1, "test": 1}
    assert all_ids(result) == {f"good{k}" for k in range(5)} | {"rawonly"}
    for records in result.splits.values():
        assert [r.id for r in records] == sorted(r.id for r in records)
    record = next(r for records in result.splits.values() for r in records if r.id == "good2")
    assert record.text == "hello world take c."
    assert record.raw_text == "Hello  World take c."
    assert record.wav == str(root / "wavs" / "good2.wav")
    assert (record.n_samples, record.sample_rate, record.duration_s) == (800, RATE, 0.1)
    raw_only = next(r for records in result.splits.values() for r in records if r.id == "rawonly")
    assert raw_only.text == "only the raw column"
    assert result.validation["n_rows"] == 6 and result.validation["n_valid"] == 6
    assert result.validation["rejections"] == [] and result.validation["counts_by_reason"] == {}


def test_write_manifest_round_trip(tmp_path: Path) -> None:
    lines, wavs = good_utterances(4)
    result = build(make_corpus(tmp_path / "corpus", lines, wavs))
    paths = write_manifest(result, tmp_path / "out")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "manifest.test.jsonl", "manifest.train.jsonl", "manifest.val.jsonl", "validation.json"
    ]
    for name in ("train", "val", "test"):
        assert read_manifest(paths[name]) == result.splits[name]
    saved = json.loads(paths["validation"].read_text(encoding="utf-8"))
    assert saved["split"] == {"scheme": "random", "sizes": {"train": 2, "val": 1, "test": 1}, "discarded": []}


# --------------------------------------------------------------------------------------------------
# one test per kind of bad input (policy skip: the bad one is left out and recorded)
# --------------------------------------------------------------------------------------------------

BadCase = Callable[[list[str | bytes], dict[str, Any]], None]


def _add(line: str | bytes, wav: Any = None, wav_id: str = "bad") -> BadCase:
    def change(lines: list[str | bytes], wavs: dict[str, Any]) -> None:
        lines.insert(1, line)  # not last: later lines must still parse
        if wav is not None:
            wavs[wav_id] = wav
    return change


def _square(seconds: float = 0.1) -> np.ndarray:
    return np.where(tone(seconds) >= 0, 1.0, -1.0).astype(np.float32)


def _float_wav(poison: float, where: slice) -> bytes:
    """A 32-bit float WAV (the format that can hold NaN and Inf) of a tone with ``poison`` at ``where``."""
    samples = tone(0.6)
    samples[where] = poison
    buffer = io.BytesIO()
    sf.write(buffer, samples, RATE, format="WAV", subtype="FLOAT")
    return buffer.getvalue()


BAD_CASES: dict[str, tuple[BadCase, str, str, str]] = {
    # name: (corpus change, rejected id, reason, file name the problem points at)
    "unreadable": (_add("bad|t|t", b"RIFF not really a wav file"), "bad", "unreadable_audio", "bad.wav"),
    "empty_audio": (_add("bad|t|t", np.zeros(0, np.float32)), "bad", "empty_audio", "bad.wav"),
    "zero_bytes": (_add("bad|t|t", b""), "bad", "empty_audio", "bad.wav"),
    "some_nan": (_add("bad|t|t", _float_wav(np.nan, slice(100, 110))), "bad", "non_finite_audio", "bad.wav"),
    "all_nan": (_add("bad|t|t", _float_wav(np.nan, slice(None))), "bad", "non_finite_audio", "bad.wav"),
    "one_inf": (_add("bad|t|t", _float_wav(np.inf, slice(5, 6))), "bad", "non_finite_audio", "bad.wav"),
    "wrong_rate": (_add("bad|t|t", (tone(rate=16000), 16000)), "bad", "wrong_sample_rate", "bad.wav"),
    "stereo": (_add("bad|t|t", tone(channels=2)), "bad", "multichannel", "bad.wav"),
    "clipped": (_add("bad|t|t", _square()), "bad", "clipped", "bad.wav"),
    "too_short": (_add("bad|t|t", tone(0.01)), "bad", "too_short", "bad.wav"),
    "too_long": (_add("bad|t|t", tone(1.5)), "bad", "too_long", "bad.wav"),
    "missing_wav": (_add("bad|t|t"), "bad", "missing_wav", "bad.wav"),
    "orphan_wav": (_add(b"", tone()), "bad", "wav_without_metadata", "bad.wav"),
    "duplicate": (_add("good0|again|again"), "good0", "duplicate_id", "metadata.csv"),
    "empty_text": (_add("bad| | ", tone()), "bad", "empty_text", "metadata.csv"),
    "non_utf8": (_add(b"bad|caf\xe9|caf\xe9", tone()), "bad", "non_utf8_text", "metadata.csv"),
    "malformed": (_add("bad|a|b|c", tone()), "bad", "malformed_line", "metadata.csv"),
    "unknown_chars": (_add("bad|x|50% #1", tone()), "bad", "unknown_characters", "metadata.csv"),
}


@pytest.mark.parametrize("case", sorted(BAD_CASES))
def test_each_bad_input_is_rejected_with_id_reason_and_file(tmp_path: Path, case: str) -> None:
    change, bad_id, reason, file_name = BAD_CASES[case]
    lines, wavs = good_utterances(4)
    change(lines, wavs)
    result = build(make_corpus(tmp_path / "corpus", lines, wavs))

    rejections = result.validation["rejections"]
    assert [(r["id"], r["reason"]) for r in rejections] == [(bad_id, reason)], rejections
    assert Path(rejections[0]["file"]).name == file_name
    assert rejections[0]["detail"]
    assert result.validation["counts_by_reason"] == {reason: 1}
    assert bad_id not in all_ids(result)
    # Every good utterance other than the rejected one survives, including lines after the bad one.
    assert all_ids(result) == {f"good{k}" for k in range(4)} - {bad_id}


def test_unknown_characters_are_listed(tmp_path: Path) -> None:
    lines, wavs = good_utterances(3)
    lines.append("bad|x|50% #1")
    wavs["bad"] = tone()
    result = build(make_corpus(tmp_path / "corpus", lines, wavs))
    detail = result.validation["rejections"][0]["detail"]
    for ch in "5", "0", "%", "#", "1":
        assert repr(ch) in detail


def test_non_utf8_line_reports_line_number(tmp_path: Path) -> None:
    root = make_corpus(tmp_path / "corpus", ["a|ok|ok", b"b|caf\xe9|x", "c|ok|ok"], {})
    metadata = read_metadata(root / "metadata.csv")
    assert [row.id for row in metadata.rows] == ["a", "c"]
    (problem,) = metadata.problems
    assert problem.id == "b" and "line 2" in problem.detail and "0xe9" in problem.detail


def test_id_that_is_not_a_file_name_is_rejected(tmp_path: Path) -> None:
    lines, wavs = good_utterances(3)
    lines.append("../escape|text|text")
    result = build(make_corpus(tmp_path / "corpus", lines, wavs))
    (rejection,) = result.validation["rejections"]
    assert rejection["reason"] == "invalid_id" and "line 4" in rejection["detail"]


def test_several_problems_of_one_clip_are_all_reported(tmp_path: Path) -> None:
    lines, wavs = good_utterances(3)
    lines.append("bad|t|t")
    wavs["bad"] = np.repeat(_square(1.5)[:, None], 2, axis=1)  # stereo, clipped and too long
    result = build(make_corpus(tmp_path / "corpus", lines, wavs))
    assert result.validation["counts_by_reason"] == {"clipped": 1, "multichannel": 1, "too_long": 1}
    assert result.validation["n_rejected"] == 1


# --------------------------------------------------------------------------------------------------
# policy
# --------------------------------------------------------------------------------------------------


def test_error_policy_lists_every_problem_grouped_by_reason(tmp_path: Path) -> None:
    lines, wavs = good_utterances(3)
    lines += ["loud1|t|t", "loud2|t|t", "gone|t|t"]
    wavs |= {"loud1": _square(), "loud2": _square()}
    root = make_corpus(tmp_path / "corpus", lines, wavs)
    with pytest.raises(ManifestError) as caught:
        build(root, on_invalid="error")
    message = str(caught.value)
    assert "clipped (2):" in message and "missing_wav (1):" in message
    for utterance_id in ("loud1", "loud2", "gone"):
        assert utterance_id in message
    assert str(root / "wavs" / "loud1.wav") in message and str(root / "wavs" / "gone.wav") in message
    assert caught.value.validation is not None and caught.value.validation["n_rejected"] == 3


def test_error_policy_passes_a_clean_corpus(tmp_path: Path) -> None:
    lines, wavs = good_utterances(4)
    assert build(make_corpus(tmp_path / "corpus", lines, wavs), on_invalid="error").validation["n_valid"] == 4


@pytest.mark.parametrize("policy", ["skip", "error"])
def test_corpus_with_nothing_valid_always_fails(tmp_path: Path, policy: str) -> None:
    root = make_corpus(tmp_path / "corpus", ["a|t|t", "b|t|t"], {"a": _square(), "b": tone(0.01)})
    with pytest.raises(ManifestError, match="no valid utterance") as caught:
        build(root, on_invalid=policy)
    assert "clipped (1)" in str(caught.value) and "too_short (1)" in str(caught.value)


def test_missing_metadata_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "corpus").mkdir()
    with pytest.raises(ManifestError, match="metadata.csv: not found"):
        build(tmp_path / "corpus")


# --------------------------------------------------------------------------------------------------
# resampling
# --------------------------------------------------------------------------------------------------


def test_resample_writes_a_16_bit_copy_at_the_config_rate(tmp_path: Path) -> None:
    lines, wavs = good_utterances(3)
    lines.append("other|t|t")
    wavs["other"] = (tone(0.5, rate=16000), 16000)
    root = make_corpus(tmp_path / "corpus", lines, wavs)
    result = build(root, resample=True)

    record = next(r for records in result.splits.values() for r in records if r.id == "other")
    resampled = tmp_path / "resampled" / "other.wav"
    assert record.wav == str(resampled) and record.source_wav == str(root / "wavs" / "other.wav")
    info = sf.info(resampled)
    assert (info.samplerate, info.channels, info.subtype, info.frames) == (RATE, 1, "PCM_16", 4000)
    assert (record.n_samples, record.sample_rate, record.duration_s) == (4000, RATE, 0.5)
    assert sf.info(root / "wavs" / "other.wav").samplerate == 16000  # the corpus is left alone
    assert result.validation["n_resampled"] == 1
    assert [p.name for p in (tmp_path / "resampled").iterdir()] == ["other.wav"]  # no temp files left


def test_without_resample_another_rate_is_rejected(tmp_path: Path) -> None:
    lines, wavs = good_utterances(3)
    lines.append("other|t|t")
    wavs["other"] = (tone(0.5, rate=16000), 16000)
    result = build(make_corpus(tmp_path / "corpus", lines, wavs), resample=False)
    (rejection,) = result.validation["rejections"]
    assert rejection["id"] == "other" and rejection["reason"] == "wrong_sample_rate"
    assert "16000 Hz" in rejection["detail"] and "data.resample" in rejection["detail"]
    assert not (tmp_path / "resampled").exists()


def test_thread_pool_gives_the_same_result(tmp_path: Path) -> None:
    lines, wavs = good_utterances(12)
    lines.append("loud|t|t")
    wavs["loud"] = _square()
    root = make_corpus(tmp_path / "corpus", lines, wavs)
    data, text = data_config(), TextConfig()
    serial = build_manifest(root, data, text, RATE, resample_dir=tmp_path / "r", workers=1, front_end=FAKE_TEXT)
    pooled = build_manifest(root, data, text, RATE, resample_dir=tmp_path / "r", workers=3, front_end=FAKE_TEXT)
    assert serial == pooled


# --------------------------------------------------------------------------------------------------
# the ljspeech scheme end to end
# --------------------------------------------------------------------------------------------------


def _ljspeech_like(root: Path, extra: list[str]) -> Path:
    ids = sorted(VAL_IDS | TEST_IDS | DISCARDED_IDS | set(TRANSCRIPT_CONTINUATIONS)) + extra
    clip = tone(0.06)
    return make_corpus(root, [f"{i}|Some words.|Some words." for i in ids], dict.fromkeys(ids, clip))


def test_ljspeech_scheme_split_and_transcript_fixes(tmp_path: Path) -> None:
    extra = [f"LJ050-{n:04d}" for n in range(240, 250)]
    root = _ljspeech_like(tmp_path / "corpus", extra)
    result = build(root, split=SplitConfig(scheme="ljspeech"))

    sizes = {name: len(records) for name, records in result.splits.items()}
    assert sizes == {"train": len(extra) + 2, "val": 100, "test": 500}  # + the two fixed transcripts
    assert result.validation["split"]["discarded"] == sorted(DISCARDED_IDS)
    train = {r.id: r for r in result.splits["train"]}
    fixed = train["LJ034-0138"]
    assert fixed.raw_text == "Some words. Norman stated, quote,"
    assert fixed.text == "some words. norman stated, quote,"
    assert result.validation["transcript_fixes"] == sorted(TRANSCRIPT_CONTINUATIONS)
    # The random scheme leaves the same transcripts alone.
    other = build(root, split=SplitConfig(scheme="random", val_size=100, test_size=100))
    records = {r.id: r for split in other.splits.values() for r in split}
    assert records["LJ034-0138"].raw_text == "Some words."


def test_ljspeech_scheme_with_a_rejected_test_clip_fails_even_with_skip(tmp_path: Path) -> None:
    root = _ljspeech_like(tmp_path / "corpus", [])
    victim = sorted(TEST_IDS)[0]
    sf.write(root / "wavs" / f"{victim}.wav", _square(0.06), RATE, subtype="PCM_16")
    with pytest.raises(SplitError, match=f"{victim} \\(rejected: clipped\\)"):
        build(root, split=SplitConfig(scheme="ljspeech"))


# --------------------------------------------------------------------------------------------------
# with the real text front end
# --------------------------------------------------------------------------------------------------


def test_real_text_front_end(tmp_path: Path) -> None:
    text_module = importlib.import_module("tts_pipeline.text")
    if not hasattr(text_module, "normalize_text"):
        pytest.skip("tts_pipeline.text does not provide normalize_text yet")
    root = make_corpus(
        tmp_path / "corpus",
        ["a|Mr. Smith paid 5 dollars.|Mr. Smith paid five dollars.", "b|Hello there.|", "c|Dr. Who?|Doctor Who?"],
        {"a": tone(), "b": tone(), "c": tone()},
    )
    result = build_manifest(
        root, data_config(), TextConfig(cleaners="english_cleaners_v2", symbol_set="english_basic"), RATE,
        resample_dir=tmp_path / "r",
    )
    records = {r.id: r for split in result.splits.values() for r in split}
    assert set(records) == {"a", "b", "c"}, result.validation["rejections"]
    assert records["a"].text.startswith("mister smith paid five dollars")
    assert records["b"].text.startswith("hello there")


def test_a_wav_linked_to_a_file_outside_the_corpus_is_rejected(tmp_path: Path) -> None:
    lines, wavs = good_utterances(4)
    root = make_corpus(tmp_path / "corpus", lines, wavs)
    elsewhere = tmp_path / "elsewhere.wav"
    sf.write(elsewhere, tone(), RATE, subtype="PCM_16")
    (root / "wavs" / "good1.wav").unlink()
    (root / "wavs" / "good1.wav").symlink_to(elsewhere)
    (root / "kept.wav").write_bytes((root / "wavs" / "good2.wav").read_bytes())
    (root / "wavs" / "good2.wav").unlink()
    (root / "wavs" / "good2.wav").symlink_to(root / "kept.wav")  # inside the corpus: fine
    result = build(root)
    rejections = result.validation["rejections"]
    assert [(r["id"], r["reason"]) for r in rejections] == [("good1", "outside_corpus")], rejections
    assert "elsewhere.wav" in rejections[0]["detail"]
    assert all_ids(result) == {"good0", "good2", "good3"}


def test_a_linked_wavs_folder_is_accepted(tmp_path: Path) -> None:
    lines, wavs = good_utterances(4)
    store = make_corpus(tmp_path / "store", lines, wavs)
    root = tmp_path / "corpus"
    root.mkdir()
    (root / "metadata.csv").write_bytes((store / "metadata.csv").read_bytes())
    (root / "wavs").symlink_to(store / "wavs")
    result = build(root)
    assert result.validation["rejections"] == []
