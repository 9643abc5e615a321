"""What the workflow needs to run on a cluster: each job's resources, and a tracking store jobs share.

* :func:`job_resources`: the ``mem_mb``, ``runtime`` and ``cpus_per_task`` a rule declares, from
  ``cluster.resources.<rule>`` over the rule's default (``config.cluster_sections.DEFAULT_RESOURCES``).
  ``snakemake --set-resources RULE:mem_mb=N`` still overrides them per run.
* :func:`check_tracking_store`: under a cluster executor (``--profile workflow/profiles/slurm``),
  jobs run on other hosts; SQLite over a network filesystem loses writes and locks, so the default
  SQLite store is refused there unless ``cluster.allow_sqlite`` says every job runs on this host.
  An MLflow server (``tracking.uri: http://host:5000``) is the store for clusters.
"""

from __future__ import annotations

from typing import Any

from tts_pipeline.config import PipelineConfig
from tts_pipeline.config.cluster_sections import DEFAULT_RESOURCES
from tts_pipeline.errors import UserError

RESOURCE_KEYS = ("mem_mb", "runtime", "cpus_per_task")


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
