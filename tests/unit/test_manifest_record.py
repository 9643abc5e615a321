"""The typed manifest record: the manifest stage's lines read and written back byte for byte, and a
missing or mistyped field named with its file, line and what was expected."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tts_pipeline.data.manifest import ManifestResult, read_manifest, write_manifest
from tts_pipeline.data.manifest_record import ManifestRecord
from tts_pipeline.errors import UserError

# A line of the demo corpus's manifest.val.jsonl as the manifest stage wrote it before records were typed.
DEMO_LINE = (
    '{"id": "DEMO-0025", "wav": "resources/demo/wavs/DEMO-0025.wav", "text": "the parade moved slowly down '
    'the main road toward saint mark\'s church.", "raw_text": "the parade moved slowly down the main road '
    'toward saint mark\'s church.", "n_samples": 82297, "sample_rate": 22050, "duration_s": 3.73229, '
    '"source_wav": "resources/demo/wavs/DEMO-0025.wav"}'
)

# A resampled clip with non-ASCII text, in the key order the stage has always written.
RESAMPLED = {
    "id": "LJ001-0002",
    "wav": "results/r/data/resampled/LJ001-0002.wav",
    "text": "café in the rue de l’été, 1.5 s",
    "raw_text": "Café in the Rue de l’Été, 1.5 s",
    "n_samples": 33075,
    "sample_rate": 22050,
    "duration_s": 1.5,
    "source_wav": "corpus/wavs/LJ001-0002.wav",
}


def line_of(record: ManifestRecord) -> str:
    """The line write_manifest writes for ``record``."""
    return json.dumps(record.to_json(), ensure_ascii=False)


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_a_line_of_the_manifest_stage_reads_and_writes_back_byte_for_byte() -> None:
    record = ManifestRecord.from_json(json.loads(DEMO_LINE), "manifest.val.jsonl:1")
    assert (record.id, record.n_samples, record.sample_rate, record.duration_s) == ("DEMO-0025", 82297, 22050, 3.73229)
    assert line_of(record) == DEMO_LINE


def test_write_manifest_writes_the_lines_it_wrote_before_records_were_typed(tmp_path: Path) -> None:
    demo = ManifestRecord.from_json(json.loads(DEMO_LINE), "demo")
    resampled = ManifestRecord(**RESAMPLED)
    result = ManifestResult(splits={"train": [resampled, demo], "val": [demo], "test": []}, validation={})
    paths = write_manifest(result, tmp_path)
    expected = json.dumps(RESAMPLED, ensure_ascii=False) + "\n" + DEMO_LINE + "\n"
    assert paths["train"].read_bytes() == expected.encode("utf-8")
    assert paths["test"].read_bytes() == b""
    assert read_manifest(paths["train"]) == [resampled, demo]


def test_a_hand_written_line_needs_only_the_required_fields(tmp_path: Path) -> None:
    short = '{"id": "u1", "wav": "u1.wav", "text": "hi.", "n_samples": 0}'
    with_null_and_unknown = '{"id": "u2", "wav": "u2.wav", "text": "", "n_samples": 5, "sample_rate": null, "x": [1]}'
    path = write_lines(tmp_path / "manifest.train.jsonl", ["", short, with_null_and_unknown])
    first, second = read_manifest(path)
    assert (first.raw_text, first.sample_rate, first.duration_s, first.source_wav) == (None, None, None, None)
    assert line_of(first) == short  # an optional field that is None is left out, not written as null
    assert second.sample_rate is None
    assert line_of(second) == '{"id": "u2", "wav": "u2.wav", "text": "", "n_samples": 5}'  # unknown keys ignored


def test_a_missing_field_is_named_with_the_file_and_line(tmp_path: Path) -> None:
    lines = [DEMO_LINE, '{"id": "u2", "wav": "u2.wav", "text": "hi."}']
    path = write_lines(tmp_path / "manifest.val.jsonl", lines)
    with pytest.raises(UserError) as error:
        read_manifest(path)
    message = str(error.value)
    assert message.startswith(f"{path}:2: ")
    assert "lacks 'n_samples'" in message and "an integer (the clip's length in samples)" in message

    with pytest.raises(UserError, match=r"manifest\.val\.jsonl:3: the manifest record lacks 'wav', 'text'"):
        ManifestRecord.from_json({"id": "x", "n_samples": 1}, "manifest.val.jsonl:3")


@pytest.mark.parametrize(
    ("field", "value", "shown", "expected"),
    [
        ("n_samples", "82297", '"82297" (string)', "an integer (the clip's length in samples)"),
        ("n_samples", 82297.0, "82297.0 (number)", "an integer (the clip's length in samples)"),
        ("n_samples", True, "true (boolean)", "an integer (the clip's length in samples)"),
        ("text", None, "null", "a string (the cleaned transcript)"),
        ("id", 25, "25 (integer)", "a string (the utterance id)"),
        ("sample_rate", "22050", '"22050" (string)', "an integer (Hz)"),
        ("duration_s", [3.7], "[3.7] (array)", "a number (seconds)"),
        ("source_wav", {"path": "x"}, '{"path": "x"} (object)', "a string (the path of the corpus's own clip)"),
    ],
)
def test_a_mistyped_field_is_named_with_the_file_line_and_what_was_expected(
    tmp_path: Path, field: str, value: object, shown: str, expected: str
) -> None:
    broken = {**json.loads(DEMO_LINE), field: value}
    path = write_lines(tmp_path / "manifest.val.jsonl", [DEMO_LINE, DEMO_LINE, json.dumps(broken)])
    with pytest.raises(UserError) as error:
        read_manifest(path)
    assert str(error.value) == f"{path}:3: manifest field '{field}' is {shown}, expected {expected}"


def test_a_line_that_is_not_an_object_is_refused(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "manifest.test.jsonl", ['["DEMO-0025", "a.wav"]'])
    with pytest.raises(UserError) as error:
        read_manifest(path)
    expected = 'expected a JSON object (a manifest record), got ["DEMO-0025", "a.wav"] (array)'
    assert str(error.value) == f"{path}:1: {expected}"
