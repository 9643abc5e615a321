"""Byte counts as a person reads them."""

from __future__ import annotations


def describe_bytes(count: float) -> str:
    """``count`` bytes in the largest binary unit that keeps it readable (``3.2 GiB``, ``512 B``)."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if count < 1024:
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1024
    return f"{count:.1f} PiB"
