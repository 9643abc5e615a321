"""Validate a config file and print the resolved values (defaults filled in).

Use it after editing a config: it reports every unknown key, wrong type and bad value with the
key's full path, exactly as the workflow does before any job starts.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("config", type=Path, help="YAML config, e.g. config/demo.yaml")
    parser.add_argument("--quiet", action="store_true", help="only validate, print nothing on success")


def run(args: argparse.Namespace) -> None:
    import yaml

    from tts_pipeline.config import load_config

    config = load_config(args.config)
    if not args.quiet:
        print(yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False), end="")
