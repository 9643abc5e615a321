"""What every config section shares: strictness and the error type."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict

from tts_pipeline.errors import UserError


class ConfigError(UserError, ValueError):
    """A config that cannot be used; the message names every offending key."""


class StrictModel(BaseModel):
    """Base for every section: unknown keys are errors, values are immutable once loaded.

    Types are strict, as in the JSON schema Snakemake checks: ``true`` is not an int, ``"10"`` is not
    a number, ``"yes"`` is not a bool. An int is still a float (YAML writes ``1`` for ``1.0``).
    """

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


def _list_as_tuple(value: Any) -> Any:
    """YAML and JSON have no tuples: a list of the right length fills a tuple field."""
    return tuple(value) if isinstance(value, list) else value


IntPair = Annotated[tuple[int, int], BeforeValidator(_list_as_tuple)]
"""Two ints, written ``[a, b]`` in the config."""

FloatPair = Annotated[tuple[float, float], BeforeValidator(_list_as_tuple)]
"""Two floats, written ``[a, b]`` in the config."""


# A folder name of letters, digits, "_", "-" and ".", with at least one character that is not a dot:
# "." and ".." would put outputs in the working directory or above it.
FOLDER_NAME_PATTERN = r"^[A-Za-z0-9_.-]*[A-Za-z0-9_-][A-Za-z0-9_.-]*$"
