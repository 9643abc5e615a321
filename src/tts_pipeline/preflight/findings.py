"""What a check finds about one config key, and how the findings end: an error or a warning."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, TextIO

from tts_pipeline.config.base import ConfigError


@dataclass(frozen=True)
class Finding:
    """One setting the data or the machine cannot carry.

    Attributes:
        key: The config key's full path (``hifigan.segment_size``).
        message: What is wrong and what was expected, with the figures it rests on.
        severity: ``"error"`` refuses the config; ``"warning"`` is said and the run goes on.
    """

    key: str
    message: str
    severity: Literal["error", "warning"] = "error"

    def line(self) -> str:
        return f"  - {self.key}: {self.message}"


def settle(findings: Iterable[Finding], source: str, stream: TextIO | None = None) -> None:
    """Raise :class:`ConfigError` listing every error; otherwise write the warnings to ``stream``
    (stderr), one block naming ``source``."""
    findings = list(findings)
    errors = [finding.line() for finding in findings if finding.severity == "error"]
    if errors:
        raise ConfigError("\n".join([f"invalid config ({source}):", *errors]))
    warnings = [finding.line() for finding in findings if finding.severity == "warning"]
    if warnings:
        print("\n".join([f"config warning ({source}):", *warnings]), file=stream or sys.stderr)
