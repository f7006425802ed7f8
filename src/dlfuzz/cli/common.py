"""Argument parsing helpers shared by the verbs: durations, NAME=VALUE lists."""

from __future__ import annotations

import re

from dlfuzz.errors import UsageError

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, None: 1.0}


def parse_duration(text: str, flag: str = "--budget") -> float:
    """'90', '60s', '2m', '1.5h' -> seconds."""
    m = _DURATION.match(text)
    if not m:
        raise UsageError(f"{flag} {text!r}: not a duration; write e.g. 60s, 2m or 1h")
    value = float(m.group(1)) * _UNITS[m.group(2)]
    if value <= 0:
        raise UsageError(f"{flag} {text!r}: must be positive")
    return value


def parse_pairs(items: list[str] | None, flag: str) -> tuple[tuple[str, str], ...]:
    """['tf=/x/python', ...] -> (('tf', '/x/python'), ...)."""
    pairs = []
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            raise UsageError(f"{flag} {item!r}: expected NAME=VALUE, e.g. {flag} tf=/path/python")
        pairs.append((name.strip(), value.strip()))
    return tuple(pairs)


def parse_list(text: str | None, flag: str) -> tuple[str, ...] | None:
    if text is None:
        return None
    items = tuple(x.strip() for x in text.split(",") if x.strip())
    if not items:
        raise UsageError(f"{flag} {text!r}: give a comma-separated list, e.g. numpy,torch,jax")
    return items
