"""Settings checked before any job against the data, memory and time they imply.

The config's own validation (:mod:`tts_pipeline.config`) checks each value's type and range, and the
rules between sections. What it cannot see is whether a value fits the data it will meet: a HiFi-GAN
segment longer than every clip, a batch larger than the training set or than any GPU's memory,
epochs that would train for years, a warm-start file (``<section>.init_from``) trained on other mels or
symbols. These checks read what is known before any job runs (the training
manifest when an earlier run wrote it, else the bounds the config implies) and name the key, what it
was and what was expected. ``tts-pipeline check-config`` and the workflow's start
(:class:`tts_pipeline.workflow.Pipeline`) both run them: an error refuses the config, a warning (the
time a training implies, an estimate) is printed and the run goes on.

Modules: ``training_data`` (what the trainings will meet), ``memory`` (per-item memory estimates),
``training_time`` (steps x per-step time), ``warm_start`` (warm-start files against the config), ``checks``
(the rules), ``findings`` (their outcome).
"""

from tts_pipeline.preflight.checks import MEMORY_CEILING, check_settings
from tts_pipeline.preflight.findings import Finding, settle

__all__ = ["MEMORY_CEILING", "Finding", "check_settings", "settle"]
