"""Open or close the workflow's parent MLflow run (the workflow does this itself; this is for you).

  tts-pipeline tracking open --config config/demo.yaml    # prints KEY=VALUE lines to export
  tts-pipeline tracking close --status FINISHED           # reads TTS_PARENT_RUN_ID and friends

Stages started in a shell where those variables are exported log their runs as children of it.
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

STATUSES = ("FINISHED", "FAILED", "KILLED")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="<action>", required=True)
    opener = actions.add_parser("open", help="create the experiment and a parent run; print the env to export")
    opener.add_argument("--config", required=True, type=Path, help="YAML config, e.g. config/demo.yaml")
    opener.add_argument("--description", default="", help="note shown on the run in the MLflow UI")
    closer = actions.add_parser("close", help="end the parent run named by TTS_PARENT_RUN_ID")
    closer.add_argument("--status", choices=STATUSES, default="FINISHED", help="final status (default FINISHED)")


def run(args: argparse.Namespace) -> None:
    from tts_pipeline import tracking
    from tts_pipeline.config import load_config

    if args.action == "open":
        env = tracking.open_parent_run(load_config(args.config), description=args.description)
        for key, value in env.items():
            print(f"{key}={shlex.quote(value)}")
    else:
        tracking.close_parent_run(args.status)
