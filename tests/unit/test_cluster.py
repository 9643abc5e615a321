"""Job resources per rule from the config, and the SQLite store refused under a cluster executor."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tts_pipeline.config import ConfigError, load_config, parse_config
from tts_pipeline.config.cluster_sections import DEFAULT_RESOURCES
from tts_pipeline.errors import UserError
from tts_pipeline.stage_table import STAGES
from tts_pipeline.workflow.cluster import check_tracking_store, executor_name, job_resources

from ..conftest import REPO


def config(**cluster):
    return parse_config({"experiment": "x", "cluster": cluster})


def test_every_rule_has_defaults():
    assert set(DEFAULT_RESOURCES) == {row.rule for row in STAGES}


def test_a_key_left_out_takes_the_rules_default():
    chosen = config(resources={"train_hifigan": {"runtime": 2880}})
    assert job_resources(chosen, "train_hifigan") == {"mem_mb": 128000, "runtime": 2880, "cpus_per_task": 32}
    assert job_resources(chosen, "corpus") == dict(zip(("mem_mb", "runtime", "cpus_per_task"),
                                                       DEFAULT_RESOURCES["corpus"], strict=True))


def test_the_demo_config_fits_a_small_node():
    demo = load_config(REPO / "config/demo.yaml")
    for row in STAGES:
        resources = job_resources(demo, row.rule)
        assert resources["mem_mb"] <= 4000 and resources["cpus_per_task"] == 1, row.rule


@pytest.mark.parametrize(
    ("cluster", "message"),
    [
        ({"resources": {"train_hifigan": {"mem_gb": 4}}}, "cluster.resources.train_hifigan.mem_gb: unknown key"),
        ({"resources": {"train_hifi": {}}}, "cluster.resources.train_hifi: unknown key"),
        ({"resources": {"corpus": {"runtime": 0}}}, "cluster.resources.corpus.runtime"),
        ({"allow_sqlite": "yes"}, "cluster.allow_sqlite"),
    ],
)
def test_bad_cluster_settings_name_the_key(cluster, message):
    with pytest.raises(ConfigError, match=message.replace(".", r"\.")):
        config(**cluster)


def test_executor_name_of_a_workflow():
    assert executor_name(SimpleNamespace(non_local_exec=False)) == "local"
    slurm = SimpleNamespace(non_local_exec=True, executor_plugin=SimpleNamespace(name="slurm"))
    assert executor_name(slurm) == "slurm"


def test_sqlite_is_refused_under_a_cluster_executor_unless_allowed():
    sqlite = "sqlite:////shared/results/mlflow.db"
    with pytest.raises(UserError, match=r"cluster\.allow_sqlite.*tracking\.uri|tracking\.uri.*allow_sqlite"):
        check_tracking_store(config(), sqlite, "slurm")
    check_tracking_store(config(), sqlite, "local")
    check_tracking_store(config(allow_sqlite=True), sqlite, "slurm")
    check_tracking_store(config(), "http://mlflow:5000", "slurm")
    off = parse_config({"experiment": "x", "tracking": {"enabled": False}})
    check_tracking_store(off, sqlite, "slurm")


def test_shell_quoted_folder_names_are_refused_under_a_cluster_executor_only(tmp_path):
    from tts_pipeline.workflow.cluster import check_folder_names

    hostile = parse_config({"experiment": "x", "results_dir": "out 'a' $(x)/results"})
    with pytest.raises(UserError, match=r"^results_dir .+ holds \$ ': under the slurm executor"):
        check_folder_names(hostile, "slurm", tmp_path)
    check_folder_names(hostile, "local", tmp_path)
    check_folder_names(parse_config({"experiment": "x", "results_dir": "out dir/results"}), "slurm", tmp_path)


def test_threads_come_from_the_config_else_the_rule():
    from tts_pipeline.workflow.pipeline import Pipeline

    demo = Pipeline(load_config(REPO / "config/demo.yaml"))
    # on 2 cores the vocoder's training runs beside the aligner -> durations -> FastPitch chain
    for rule in ("train_hifigan", "train_aligner", "durations", "train_fastpitch", "extract_fastpitch_mels"):
        assert demo.threads(rule, 2) == 1, rule
    assert demo.threads("benchmark", 2) == 2 and demo.threads("features", 8) == 8
    import yaml

    raw = yaml.safe_load((REPO / "config/demo.yaml").read_text())
    raw["cluster"]["resources"]["benchmark"]["threads"] = 3
    assert Pipeline(raw).threads("benchmark", 2) == 3
    rules = "\n".join(path.read_text() for path in (REPO / "workflow/rules").glob("*.smk"))
    assert "threads: pipeline.threads(\"train_hifigan\", 2)" in rules
    assert not [line for line in rules.splitlines() if line.strip().startswith("threads:") and "pipeline." not in line]
