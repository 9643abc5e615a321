"""Validate a config file and print the resolved values (defaults filled in).

Use it after editing a config: it reports every unknown key, wrong type and bad value with the
key's full path, exactly as the workflow does before any job starts, and then the settings the data
cannot carry (:mod:`tts_pipeline.preflight`): a HiFi-GAN segment longer than the longest training
clip, a batch larger than the training set or than memory allows, benchmark batch sizes past any
memory, a warm-start file (``fastpitch.init_from``, ``hifigan.init_from``) trained on other mels, symbols
or network sizes; epochs or steps that imply months of training are a warning with the estimate. The training
manifest is read when an earlier run wrote it (relative paths from the working directory, as the
workflow reads them). ``--section STAGE`` prints instead the JSON the workflow passes to that stage's
``--section``, to run a stage by hand.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("config", type=Path, help="YAML config, e.g. config/demo.yaml")
    parser.add_argument("--quiet", action="store_true", help="only validate, print nothing on success")
    parser.add_argument("--section", metavar="STAGE", help="print the --section JSON of this stage (e.g. synthesize)")


def run(args: argparse.Namespace) -> None:
    import yaml

    from tts_pipeline.config import load_config
    from tts_pipeline.workflow import Pipeline

    config = load_config(args.config)
    Pipeline(config, source=str(args.config))  # folders, then the settings against the data (preflight)
    if args.section:
        from tts_pipeline.errors import UserError
        from tts_pipeline.stage_table import BY_RULE, stage_params

        if args.section not in BY_RULE:
            raise UserError(f"--section: unknown stage {args.section!r}; expected one of {sorted(BY_RULE)}")
        print(stage_params(config, args.section))
        return
    if not args.quiet:
        print(yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False), end="")
