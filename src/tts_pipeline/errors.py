"""Errors that describe bad input (the user's to fix), as opposed to bugs."""

from __future__ import annotations


class UserError(Exception):
    """Bad input or configuration; the message names the file, utterance or key and what was expected."""
