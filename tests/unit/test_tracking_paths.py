"""The MLflow store in a folder whose name holds spaces, quotes, ``$()``, backticks, ``%`` and ``#``.

SQLAlchemy takes the path of ``sqlite:///<path>`` literally (it does not percent-decode it), so the
default URI must name the folder as it is: a percent-encoded URI would open a database in a folder
literally named ``a%20b``. (A ``?`` is the one character it cannot carry; the config refuses it, see
test_config_folders.py.)
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse
from urllib.request import url2pathname

from tts_pipeline.config.folders import sqlite_path
from tts_pipeline.tracking import TrackingSettings, default_uri, get_run, stage_run

HOSTILE = "a b 'c' \"d\" $(touch INJECTED) `touch INJECTED2` %20 #e"


def test_the_default_uri_names_the_folder_as_it_is(tmp_path, monkeypatch):
    from sqlalchemy.engine import make_url

    monkeypatch.chdir(tmp_path)
    uri = default_uri(Path(HOSTILE) / "results")  # relative, as in a config
    database = tmp_path.resolve() / HOSTILE / "results" / "mlflow.db"
    assert sqlite_path(uri) == database
    assert make_url(uri).database == str(database)  # what MLflow's SQL store opens
    settings = TrackingSettings.from_parts(results_dir=Path(HOSTILE) / "results", experiment="e")
    location = settings.artifact_location
    assert location is not None
    assert Path(url2pathname(urlparse(location).path)) == database.parent / "mlartifacts" / "e"


def test_a_stage_run_logs_into_the_store_inside_that_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    results = tmp_path / HOSTILE / "results"
    settings = TrackingSettings.from_parts(results_dir=results, experiment="e")
    sample = tmp_path / "sample.txt"
    sample.write_text("a sample")
    with stage_run("corpus", {"corpus": {"n": 3}}, settings=settings) as run:
        run.log_metrics({"n_wavs": 3.0})
        run.log_artifact(sample, "samples")
    assert (results / "mlflow.db").is_file()
    assert [path.name for path in (results / "mlartifacts" / "e").rglob("sample.txt")] == ["sample.txt"]
    logged = get_run(settings, run.run_id)
    assert logged["status"] == "FINISHED" and logged["metrics"]["n_wavs"] == 3.0
    assert logged["params"] == {"corpus.n": "3"}
    # nothing beside the folder: no database opened at a truncated or percent-decoded path, no ./mlruns
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted([HOSTILE, "sample.txt"])
    assert sorted(path.name for path in (tmp_path / HOSTILE).iterdir()) == ["results"]


def test_a_new_store_opens_from_a_folder_named_with_both_quotes(tmp_path, monkeypatch):
    """MLflow's own default would put the Default experiment at ``<current folder>/mlruns``, a path its
    SQL cannot hold when the folder's name has both ' and "; the store's own folder is used instead."""
    from tts_pipeline import tracking

    odd = tmp_path / """it's "odd" """
    odd.mkdir()
    monkeypatch.chdir(odd)
    settings = tracking.TrackingSettings(enabled=True, uri=f"sqlite:///{tmp_path / 'store' / 'mlflow.db'}",
                                         experiment="quotes")  # fmt: skip
    with tracking.stage_run("corpus", {"corpus": {}}, settings=settings) as run:
        run.log_metrics({"n_wavs": 1.0})
    location = tracking.LockedClient(settings.uri).call(lambda client: client.get_experiment("0").artifact_location)
    assert location == (tmp_path / "store" / "mlartifacts" / "0").as_uri()
    assert not (odd / "mlruns").exists()
