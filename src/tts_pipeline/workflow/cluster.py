"""What the workflow needs to run on a cluster: each job's resources, and a tracking store jobs share.

* :func:`job_resources`: the ``mem_mb``, ``runtime`` and ``cpus_per_task`` a rule declares, from
  ``cluster.resources.<rule>`` over the rule's default (``config.cluster_sections.DEFAULT_RESOURCES``).
  ``snakemake --set-resources RULE:mem_mb=N`` still overrides them per run.
* :func:`check_tracking_store`: under a cluster executor (``--profile workflow/profiles/slurm``),
  jobs run on other hosts; SQLite over a network filesystem loses writes and locks, so the default
  SQLite store is refused there unless ``cluster.allow_sqlite`` says every job runs on this host.
  An MLflow server (``tracking.uri: http://host:5000``) is the store for clusters.
* :func:`check_cluster_run`: both checks before any job of a cluster executor.
* :func:`check_folder_names`: Snakemake 9.27 hands a cluster job its input files through a shell
  command it quotes wrongly (``'a \\'b'``), and the Slurm plugin submits it through a shell: a folder
  name with a quote breaks every job, ``$(...)`` or backticks in one run on the submitting host.
  Local runs quote every path correctly; cluster runs refuse such folder names before any job.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tts_pipeline import tracking
from tts_pipeline.config import PipelineConfig
from tts_pipeline.config.cluster_sections import DEFAULT_RESOURCES
from tts_pipeline.errors import UserError

RESOURCE_KEYS = ("mem_mb", "runtime", "cpus_per_task")

# Characters a shell treats specially inside the wrongly quoted job command of a cluster job.
UNSAFE_FOR_CLUSTER = "'\"$`\\"


def job_resources(config: PipelineConfig, rule: str) -> dict[str, int]:
    """``{"mem_mb": ..., "runtime": ..., "cpus_per_task": ...}`` of one rule (runtime in minutes)."""
    if rule not in DEFAULT_RESOURCES:
        raise KeyError(f"unknown rule {rule!r}; expected one of {sorted(DEFAULT_RESOURCES)}")
    chosen = getattr(config.cluster.resources, rule)
    defaults = dict(zip(RESOURCE_KEYS, DEFAULT_RESOURCES[rule], strict=True))
    return {key: getattr(chosen, key) or defaults[key] for key in RESOURCE_KEYS}


def executor_name(workflow: Any) -> str:
    """The executor a Snakemake ``workflow`` object runs its jobs with: ``"local"`` for local runs
    (also dry runs and Snakemake's own remote job steps), else the plugin's name (``"slurm"``)."""
    if not getattr(workflow, "non_local_exec", False):
        return "local"
    plugin = getattr(workflow, "executor_plugin", None)
    return str(getattr(plugin, "name", None) or "cluster")


def check_tracking_store(config: PipelineConfig, tracking_uri: str, executor: str) -> None:
    """Refuse a SQLite MLflow store when jobs may run on other hosts.

    Args:
        config: The pipeline config (``tracking.enabled``, ``cluster.allow_sqlite``).
        tracking_uri: The resolved tracking URI the jobs will use.
        executor: ``"local"`` or the cluster executor's name (:func:`executor_name`).

    Raises:
        UserError: Tracking is on, the store is SQLite, the executor is not local, and
            ``cluster.allow_sqlite`` is false.
    """
    if executor == "local" or not config.tracking.enabled or config.cluster.allow_sqlite:
        return
    if not tracking_uri.startswith("sqlite:"):
        return
    raise UserError(
        f"tracking: the MLflow store is the SQLite file {tracking_uri!r}, but the {executor} executor runs "
        "jobs on other hosts, which must not write one SQLite file over a network filesystem. Start an "
        "MLflow server (README.md, 'On a Slurm cluster') and set tracking.uri: http://<host>:5000, or set "
        "cluster.allow_sqlite: true if every job runs on this host, or tracking.enabled: false."
    )


def check_folder_names(config: PipelineConfig, executor: str, workdir: str | Path = ".") -> None:
    """Refuse, under a cluster executor, folders whose names a cluster job's command would mangle.

    Args:
        config: The pipeline config (``results_dir``, ``resources_dir``).
        executor: ``"local"`` or the cluster executor's name (:func:`executor_name`).
        workdir: The working directory (absolute paths of the working directory reach the jobs too).

    Raises:
        UserError: A folder holds a quote, ``$``, a backtick or a backslash, naming the key.
    """
    if executor == "local":
        return
    folders = {
        "results_dir": config.results_dir,
        "resources_dir": config.resources_dir,
        "the working directory": str(Path(workdir).resolve()),
    }
    for key, folder in folders.items():
        bad = sorted({char for char in folder if char in UNSAFE_FOR_CLUSTER})
        if bad:
            raise UserError(
                f"{key} {folder!r} holds {' '.join(bad)}: under the {executor} executor Snakemake passes "
                "input paths to each job through a shell command that does not quote these characters "
                "safely. Choose a folder name without quotes, $, backticks or backslashes (spaces are fine), "
                "or run locally."
            )


def check_cluster_run(config: PipelineConfig, workflow: Any) -> None:
    """Before any job of a cluster executor: refuse a SQLite MLflow store (``cluster.allow_sqlite``)
    and folder names the jobs' commands would mangle (:func:`check_folder_names`)."""
    executor = executor_name(workflow)
    check_folder_names(config, executor)
    check_tracking_store(config, tracking.TrackingSettings.from_config(config).uri, executor)
