"""Validate a config file and print the resolved values (defaults filled in).

Use it after editing a config: it reports every unknown key, wrong type and bad value with the
key's full path, exactly as the workflow does before any job starts. ``--section STAGE`` prints
instead the JSON the workflow passes to that stage's ``--section``, to run a stage by hand.
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

    from tts_pipeline.config import check_folders, load_config

    config = load_config(args.config)
    check_folders(config, source=str(args.config))
    if args.section:
        from tts_pipeline.errors import UserError
        from tts_pipeline.stage_table import BY_RULE, stage_params

        if args.section not in BY_RULE:
            raise UserError(f"--section: unknown stage {args.section!r}; expected one of {sorted(BY_RULE)}")
        print(stage_params(config, args.section))
        return
    if not args.quiet:
        print(yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False), end="")
