"""What the Snakefile calls, split by concern: the object it holds (:mod:`.pipeline`), the path
catalogue (:mod:`.paths`), code hashes (:mod:`.code_hash`), the parent MLflow run (:mod:`.parent_run`,
:mod:`.run_summary`) and cluster checks (:mod:`.cluster`). Nothing below this layer imports it.
"""

from tts_pipeline.workflow.pipeline import Pipeline

__all__ = ["Pipeline"]
