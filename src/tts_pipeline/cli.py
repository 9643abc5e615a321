"""Command line: ``tts-pipeline <command> ...`` and ``python -m tts_pipeline <command> ...``.

The commands come from :mod:`tts_pipeline.stage_table`: one per workflow stage, then the workflow's
helpers and the developer tools. Each lives in its own module with ``add_arguments(parser)`` and
``run(args)``; only the module of the command being run is imported, and modules keep heavy imports
(torch, mlflow, librosa) inside ``run`` so that ``--help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from tts_pipeline import failure
from tts_pipeline.stage_table import command_modules, old_command_names

# command name -> module; the module's docstring first line is the command's help.
COMMANDS: dict[str, str] = command_modules()
# earlier names (``train_hifigan``) still work, as aliases of today's (``train-hifigan``)
ALIASES: dict[str, str] = old_command_names()


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser; with ``only`` set, just that command's module is imported."""
    parser = argparse.ArgumentParser(
        prog="tts-pipeline",
        description="Stages of the FastPitch + HiFi-GAN workflow. Snakemake calls these; so can you.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    commands = parser.add_subparsers(dest="command", metavar="<command>", required=True)
    aliases: dict[str, list[str]] = {}
    for old, new in ALIASES.items():
        aliases.setdefault(new, []).append(old)
    for name, module_name in COMMANDS.items():
        if only is not None and name != only:
            commands.add_parser(name, aliases=aliases.get(name, []))
            continue
        module = importlib.import_module(module_name)
        doc = (module.__doc__ or "").strip()
        summary = doc.splitlines()[0] if doc else name
        sub = commands.add_parser(
            name,
            aliases=aliases.get(name, []),
            help=summary,
            description=doc,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        module.add_arguments(sub)
        sub.set_defaults(_module=module, command=name)
    return parser


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    # Import only the command being run: a stage never pays for (or breaks on) another's imports.
    command = next((arg for arg in argv if not arg.startswith("-")), None)
    command = ALIASES.get(command or "", command)
    args = build_parser(command if command in COMMANDS else None).parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    # Library errors that are the user's to fix (bad config, bad input, a full disk) end with a clear
    # message, not a traceback; anything else is a bug and keeps its traceback.
    from tts_pipeline.errors import UserError
    from tts_pipeline.full_disk import full_disk_message
    from tts_pipeline.stop_request import StopRequested

    try:
        args._module.run(args)
    except StopRequested as stop:
        failure.report(f"tts-pipeline {args.command}: {stop}; run the same command again to resume from it")
        sys.exit(130)  # as a shell reports a process ended by Ctrl-C
    except UserError as error:
        failure.report(f"tts-pipeline {args.command}: error: {error}")
        sys.exit(2)
    except Exception as error:
        message = full_disk_message(error, failure.written_paths(args))
        if message is not None:
            failure.report(f"tts-pipeline {args.command}: error: {message}")
            sys.exit(1)
        failure.report(f"tts-pipeline {args.command}: failed: {type(error).__name__}: {error}", terminal_only=True)
        raise
