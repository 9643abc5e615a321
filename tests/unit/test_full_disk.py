"""A full disk is told as such, with the folder and the space left, and a failing command's error
reaches the terminal even when its log cannot be written."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from collections import namedtuple
from pathlib import Path

import pytest

from tts_pipeline import full_disk
from tts_pipeline.errors import UserError
from tts_pipeline.full_disk import full_disk_message

Usage = namedtuple("Usage", "total used free")


@pytest.fixture
def nearly_full(monkeypatch):
    """Every file system reports 12 KiB free of 512 KiB."""
    monkeypatch.setattr(full_disk.shutil, "disk_usage", lambda path: Usage(512 * 1024, 500 * 1024, 12 * 1024))


def test_enospc_names_the_folder_of_its_file_and_the_free_space(tmp_path, nearly_full):
    (tmp_path / "mels").mkdir()
    error = OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "mels" / ".a.npy.tmp"))
    message = full_disk_message(error, [tmp_path / "elsewhere"])
    assert message is not None and message.startswith(f"no space left on device: {tmp_path / 'mels'} has")
    assert "12.0 KiB free of 512.0 KiB" in message and "run the same command again" in message


def test_a_short_write_without_errno_is_a_full_disk_only_when_the_disk_is_nearly_full(tmp_path, monkeypatch):
    # torch's checkpoint writer and numpy give no errno, only these words
    for error in (RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 704 vs 598"),
                  OSError("1000000 requested and 65520 written")):  # fmt: skip
        monkeypatch.setattr(full_disk.shutil, "disk_usage", lambda path: Usage(10 * 1024**3, 0, 4096))
        message = full_disk_message(error, [tmp_path / "work" / "step-10.pt"])
        assert message is not None and f"{tmp_path} has 4.0 KiB free of 10.0 GiB" in message
        monkeypatch.setattr(full_disk.shutil, "disk_usage", lambda path: Usage(10 * 1024**3, 0, 5 * 1024**3))
        assert full_disk_message(error, [tmp_path]) is None  # room left: some other fault, left as it is


def test_the_cause_is_found_under_the_error_that_wraps_it(tmp_path, nearly_full):
    try:
        try:
            raise OSError(errno.ENOSPC, "No space left on device")
        except OSError as cause:
            raise UserError("features: writing LJ001-0001 failed") from cause
    except UserError as error:
        message = full_disk_message(error, [tmp_path])
    assert message is not None and str(tmp_path) in message
    assert "(OSError: [Errno 28] No space left on device)" in message  # the writer's words, not the wrapper's


def test_a_store_error_is_quoted_by_its_line_not_its_statement(tmp_path, nearly_full):
    error = RuntimeError(
        "(raised as a result of Query-invoked autoflush)\n(sqlite3.OperationalError) database or disk is full\n"
        "[SQL: INSERT INTO runs (run_uuid, name) VALUES (?, ?)]"
    )
    message = full_disk_message(error, [tmp_path / "mlflow.db"])
    assert message is not None and "(RuntimeError: (sqlite3.OperationalError) database or disk is full)" in message
    assert "INSERT" not in message


def test_other_errors_are_not_a_full_disk(tmp_path, nearly_full):
    assert full_disk_message(ValueError("bad shape"), [tmp_path]) is None
    assert full_disk_message(OSError(errno.EACCES, "Permission denied", str(tmp_path / "x")), [tmp_path]) is None


def _command(*args: str, stderr) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tts_pipeline", *args], stdout=subprocess.PIPE, stderr=stderr, text=True, timeout=120
    )


def test_an_error_goes_to_the_log_and_to_the_terminal(tmp_path):
    log = tmp_path / "stage.log"
    with log.open("w") as handle:  # as the rules run a stage: 2> {log}
        result = _command("check-config", str(tmp_path / "absent.yaml"), stderr=handle)
    assert result.returncode == 2
    line = f"tts-pipeline check-config: error: config file not found: {tmp_path / 'absent.yaml'}"
    assert line in log.read_text() and line in result.stdout


def test_the_terminal_hears_it_when_the_log_cannot_be_written(tmp_path):
    if not os.path.exists("/dev/full"):
        pytest.skip("needs /dev/full, a device every write to fails with ENOSPC")
    with open("/dev/full", "w") as full:
        result = _command("check-config", str(tmp_path / "absent.yaml"), stderr=full)
    assert result.returncode == 2
    assert "tts-pipeline check-config: error: config file not found" in result.stdout


def test_by_hand_in_one_stream_the_error_is_said_once(tmp_path):
    result = _command("check-config", str(tmp_path / "absent.yaml"), stderr=subprocess.STDOUT)
    assert result.stdout.count("config file not found") == 1


def test_a_bug_keeps_its_traceback_in_the_log_and_names_it_on_the_terminal(tmp_path):
    log = tmp_path / "stage.log"
    code = (
        "from tts_pipeline import cli; from tts_pipeline.commands import where;"
        "where.run = lambda args: (_ for _ in ()).throw(RuntimeError('boom'));"
        "cli.main(['where', '--config', 'config/demo.yaml'])"
    )
    with log.open("w") as handle:
        result = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=handle, text=True)
    assert result.returncode == 1
    assert "Traceback" in log.read_text() and "RuntimeError: boom" in log.read_text()
    assert f"tts-pipeline where: failed: RuntimeError: boom (traceback in {log})" in result.stdout


def test_the_outputs_come_first_among_the_written_paths():
    from argparse import Namespace

    from tts_pipeline.failure import written_paths

    args = Namespace(manifest_dir=Path("data"), section="{}", work_dir=Path("work"), model=Path("m.pt"), gpus=0)
    assert written_paths(args) == [Path("work"), Path("m.pt"), Path("data")]
