"""Config of what each job asks a scheduler for (memory, time limit, CPUs) and of running on a cluster.

Every rule declares ``mem_mb``, ``runtime`` and ``cpus_per_task`` from ``cluster.resources.<rule>``
(``tts_pipeline.workflow.cluster.job_resources``). Locally Snakemake only counts them (``--resources
mem_mb=N`` caps the sum); the Slurm executor turns them into ``sbatch --mem``, ``-t`` and
``--cpus-per-task``. A key left out (or null) takes the rule's default from :data:`DEFAULT_RESOURCES`,
sized for the LJSpeech recipe of ``config/config.yaml`` (4 GPUs per training job).
"""

from __future__ import annotations

from pydantic import Field, create_model

from tts_pipeline.config.base import StrictModel
from tts_pipeline.stage_table import STAGES

# rule -> (mem_mb, runtime in minutes, cpus_per_task) for LJSpeech (13,100 clips, 24 h of audio).
# Training times: NVIDIA's HiFi-GAN takes 32.9 h on 8 A100 (about 66 h on the recipe's 4); FastPitch
# 1500 epochs about 3 h on 8 A100. Training jobs resume from their checkpoints, so a time limit
# below these only costs resubmissions (``--retries``). CPUs: data-loader workers for 4 GPUs.
DEFAULT_RESOURCES: dict[str, tuple[int, int, int]] = {
    "corpus": (4000, 120, 2),  # download (2.6 GB) and unpack
    "manifest": (4000, 60, 2),
    "features": (16000, 240, 16),  # mels and pitch of every clip, one process per CPU
    "train_aligner": (32000, 720, 8),
    "durations": (16000, 120, 8),
    "train_hifigan": (128000, 4320, 32),
    "train_fastpitch": (128000, 720, 32),
    "extract_fastpitch_mels": (32000, 120, 8),
    "finetune_hifigan": (128000, 1440, 32),
    "synthesize": (16000, 60, 4),
    "benchmark": (32000, 240, 8),
    "report_pages": (4000, 30, 2),
    "export_voice": (16000, 60, 4),  # traces both models, checks each file on the validation texts
    # optional: FastPitch 1.0's path (NVIDIA: Tacotron 2 about 1 day, WaveGlow about 2.5 days on 8 GPUs)
    "train_waveglow": (128000, 4320, 32),
    "train_tacotron2": (128000, 1440, 32),
}


class RuleResources(StrictModel):
    """What one rule's job asks for; null = the rule's default (``cluster_sections.DEFAULT_RESOURCES``)."""

    mem_mb: int | None = Field(None, ge=1, description="Memory in MB (sbatch --mem).")
    runtime: int | None = Field(None, ge=1, description="Time limit in minutes (sbatch -t).")
    cpus_per_task: int | None = Field(None, ge=1, description="CPUs of the job (sbatch --cpus-per-task).")
    threads: int | None = Field(
        None,
        ge=1,
        description="Threads of the job's process (OMP_NUM_THREADS); Snakemake runs jobs side by side while "
        "their threads fit in --cores. null = the rule's own (2 for training, 1-8 for data stages). On a "
        "small CPU, 1 for trainings that may run at once (a small model gains 1.3-1.5x from a second "
        "thread, a second job 2x).",
    )


def _default_line(rule: str) -> str:
    mem_mb, runtime, cpus = DEFAULT_RESOURCES[rule]
    return f"Job of rule {rule}; defaults: mem_mb {mem_mb}, runtime {runtime} min, cpus_per_task {cpus}."


ResourcesConfig = create_model(
    "ResourcesConfig",
    __base__=StrictModel,
    __doc__="Per-rule job resources; a rule left out takes its defaults.",
    **{
        row.rule: (RuleResources, Field(RuleResources(), description=_default_line(row.rule)))
        for row in STAGES
    },
)


class ClusterConfig(StrictModel):
    """Job resources of every rule, and the MLflow store's rule on clusters."""

    resources: ResourcesConfig = Field(ResourcesConfig(), description="Per rule: mem_mb, runtime, cpus_per_task.")
    allow_sqlite: bool = Field(
        False,
        description="Let cluster jobs (e.g. --profile workflow/profiles/slurm) write the SQLite MLflow store; "
        "safe only when every job runs on the host that runs snakemake. Otherwise set tracking.uri to an "
        "MLflow server (http://host:5000).",
    )
