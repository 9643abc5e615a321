"""What every stage command shares: the config slice a rule passes, and the stage's MLflow child run."""

from __future__ import annotations

import argparse
import json
from typing import Any

from tts_pipeline.errors import UserError


def add_section_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--section",
        required=True,
        metavar="JSON",
        help="the config this stage reads, as JSON (the workflow passes it; see tts_pipeline.wiring)",
    )


def load_section(args: argparse.Namespace, *required: str) -> dict[str, Any]:
    """Parse ``--section`` and check that it carries the keys this stage needs."""
    try:
        payload = json.loads(args.section)
    except json.JSONDecodeError as error:
        raise UserError(f"--section: expected a JSON object, got invalid JSON ({error.msg})") from None
    if not isinstance(payload, dict):
        raise UserError(f"--section: expected a JSON object, got {type(payload).__name__}")
    missing = [key for key in required if key not in payload]
    if missing:
        raise UserError(f"--section: missing keys {missing}; expected {list(required)}")
    return payload
