"""Argument parsing helpers shared by the verbs: durations, NAME=VALUE lists."""

from __future__ import annotations

import re
from typing import Any

from rich.console import Console
from rich.text import Text

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


def printable(text: object) -> str:
    """``text`` with any undecodable bytes (a non-UTF-8 path) written as escapes.

    Paths from the command line may hold lone surrogates (Python's stand-in for bytes
    that are not UTF-8); writing those to a terminal raises UnicodeEncodeError.
    """
    return str(text).encode("utf-8", "backslashreplace").decode("utf-8")


def plain_console(stderr: bool = False, **kwargs: Any) -> Console:
    """A rich console that prints strings literally: no markup, no highlighting.

    Library messages and paths are untrusted text; ``[dim]`` or ``[batch, 3]`` in them
    must appear as written and ``[/x]`` must not raise a markup error. Styling, where
    wanted, is given explicitly with ``rich.text.Text``.
    """
    return Console(stderr=stderr, markup=False, highlight=False, emoji=False, **kwargs)


def literal(text: object, style: str = "") -> Text:
    """``text`` as a rich Text (never parsed as markup), in ``style`` if given."""
    return Text(printable(text), style=style)
