"""What every config section shares: strictness and the error type."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from tts_pipeline.errors import UserError


class ConfigError(UserError, ValueError):
    """A config that cannot be used; the message names every offending key."""


class StrictModel(BaseModel):
    """Base for every section: unknown keys are errors, values are immutable once loaded."""

    model_config = ConfigDict(extra="forbid", frozen=True)
