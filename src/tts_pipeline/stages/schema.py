"""Write (or check) the JSON schema of the config, generated from the typed model.

The Snakefile validates every config against ``workflow/schemas/config.schema.json``; this command
regenerates it after a change to ``tts_pipeline/config.py`` (a test fails while it is stale).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tts_pipeline.errors import UserError

DEFAULT_PATH = Path("workflow/schemas/config.schema.json")


def render() -> str:
    from tts_pipeline.config import json_schema

    return json.dumps(json_schema(), indent=2, sort_keys=True) + "\n"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, default=DEFAULT_PATH, help="schema file (default: %(default)s)")
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is stale instead of writing")


def run(args: argparse.Namespace) -> None:
    from tts_pipeline.files import write_text

    text = render()
    if args.check:
        current = args.out.read_text(encoding="utf-8") if args.out.exists() else ""
        if current != text:
            raise UserError(f"{args.out} is stale: run 'tts-pipeline schema' and commit the result")
        print(f"{args.out} is up to date")
        return
    write_text(args.out, text)
    print(f"wrote {args.out}", file=sys.stderr)
