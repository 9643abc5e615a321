"""What every stage command shares: the config slice a rule passes, and the stage's MLflow child run."""

from __future__ import annotations

import argparse
import contextlib
import json
from collections.abc import Iterator
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


@contextlib.contextmanager
def tracked(stage: str, payload: dict[str, Any], *, dataset: str) -> Iterator[Any]:
    """The stage's MLflow child run, as the workflow's environment describes it.

    Under Snakemake the ``TTS_*`` variables (exported by the Snakefile) switch tracking on and name the
    store, the experiment and the parent run; a stage run by hand without them logs nothing.
    """
    from tts_pipeline import tracking

    off = tracking.TrackingSettings(enabled=False, uri="", experiment="")
    settings = tracking.settings_from_env(off)
    with tracking.stage_run(stage, payload, settings=settings, tags={"dataset": dataset}) as run:
        yield run
