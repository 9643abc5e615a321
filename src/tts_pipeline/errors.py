"""Errors that describe bad input (the user's to fix), as opposed to bugs."""

from __future__ import annotations


class UserError(Exception):
    """Bad input or configuration; the message names the file, utterance or key and what was expected."""


def name_and_value(item: str, option: str, expected: str) -> tuple[str, str]:
    """A repeated option's ``NAME=VALUE`` item -> ``(name, value)``, both stripped and non-empty; a UserError
    naming ``option`` and the ``expected`` shape otherwise."""
    name, sep, value = item.partition("=")
    if not sep or not name.strip() or not value.strip():
        raise UserError(f"{option}: expected {expected}, got {item!r}")
    return name.strip(), value.strip()
