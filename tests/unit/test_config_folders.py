"""Folder keys checked on disk: a file where a folder must go is a config error, before any job."""

from __future__ import annotations

import pytest
import yaml

from tts_pipeline import cli
from tts_pipeline.config import ConfigError
from tts_pipeline.workflow import Pipeline

from ..conftest import REPO


@pytest.fixture
def demo() -> dict:
    return yaml.safe_load((REPO / "config/demo.yaml").read_text())


def _write_config(tmp_path, raw: dict):
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


@pytest.mark.parametrize("key", ["results_dir", "resources_dir"])
@pytest.mark.parametrize("below", ["", "/inner"])
def test_a_file_where_a_folder_goes_is_refused(tmp_path, demo, capsys, key, below):
    (tmp_path / "blocker").write_text("not a folder")
    demo[key] = str(tmp_path / "blocker") + below
    with pytest.raises(ConfigError) as info:
        Pipeline(demo)
    assert f"{key}: " in str(info.value) and "blocker" in str(info.value) and "is a file" in str(info.value)
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["check-config", "--quiet", str(_write_config(tmp_path, demo))])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert key in err and "blocker" in err and "Traceback" not in err


def test_a_tracking_database_below_a_file_is_refused(tmp_path, demo):
    (tmp_path / "blocker").write_text("not a folder")
    demo["tracking"]["uri"] = f"sqlite:///{tmp_path}/blocker/mlflow.db"
    with pytest.raises(ConfigError, match=r"tracking\.uri: .*blocker.* is a file"):
        Pipeline(demo)
    demo["tracking"]["enabled"] = False
    Pipeline(demo)  # tracking off: its store is never opened


def test_folders_that_exist_or_can_be_made_pass(tmp_path, demo):
    demo["results_dir"] = str(tmp_path / "results")
    demo["resources_dir"] = str(tmp_path / "new" / "resources")
    demo["tracking"]["uri"] = f"sqlite:///{tmp_path}/store/mlflow.db"
    (tmp_path / "results").mkdir()
    Pipeline(demo)


def test_a_question_mark_on_the_way_to_the_default_store_is_refused(tmp_path, demo):
    # sqlite:///<results_dir>/mlflow.db: SQLAlchemy would open the database at the part before '?'.
    demo["results_dir"] = str(tmp_path / "runs?v=2" / "results")
    with pytest.raises(ConfigError, match=r"results_dir: .*runs\?v=2.* contains '\?'"):
        Pipeline(demo)
    demo["tracking"]["uri"] = f"sqlite:///{tmp_path}/store/mlflow.db"
    Pipeline(demo)  # the store lives elsewhere: the folder itself is fine
    demo["tracking"]["uri"] = None
    demo["tracking"]["enabled"] = False
    Pipeline(demo)


def test_shell_characters_in_folder_names_are_accepted(tmp_path, demo):
    """The rules quote every path (tests/workflow runs the whole DAG in such a folder)."""
    hostile = tmp_path / "a b 'c' \"d\" $(touch INJECTED) `touch INJECTED2` %20 #e"
    demo["results_dir"] = str(hostile / "results")
    demo["resources_dir"] = str(hostile / "resources")
    Pipeline(demo)
