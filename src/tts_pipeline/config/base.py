"""What every config section shares: strictness and the error type."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from tts_pipeline.errors import UserError


class ConfigError(UserError, ValueError):
    """A config that cannot be used; the message names every offending key."""


class StrictModel(BaseModel):
    """Base for every section: unknown keys are errors, values are immutable once loaded."""

    model_config = ConfigDict(extra="forbid", frozen=True)


# A folder name of letters, digits, "_", "-" and ".", with at least one character that is not a dot:
# "." and ".." would put outputs in the working directory or above it.
FOLDER_NAME_PATTERN = r"^[A-Za-z0-9_.-]*[A-Za-z0-9_-][A-Za-z0-9_.-]*$"
