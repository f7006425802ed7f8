"""Hand-kept JSON corpora of the benchmarks: the label files of ``precision.py`` and the
known-bug files of ``recall.py``. One reader, so a malformed file gets the same clear
error (the file, what is wrong, the fix) in both."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dlfuzz.errors import UsageError


def read_folder(folder: Path, key: str, kind: type, what: str, flag: str, noun: str
                ) -> list[tuple[Path, Any]]:
    """``(path, doc[key])`` for every ``*.json`` in ``folder``, sorted by name. Each file
    must be an object whose ``key`` is a ``kind`` (``what`` says what it holds) and may
    have an ``"about"`` string; anything else is a UsageError naming the file. ``flag``
    and ``noun`` name the folder's option and its files in the error of an empty one."""
    import json

    files = sorted(Path(folder).glob("*.json"))
    if not files:
        raise UsageError(f"{flag} {folder}: no *.json {noun} files there")
    out = []
    for path in files:
        try:
            doc = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise UsageError(f"{path}: not readable JSON ({exc}); fix the file") from None
        if not isinstance(doc, dict) or not isinstance(doc.get(key), kind):
            raise UsageError(f"{path}: needs an object with a {key!r} {kind.__name__} "
                             f"({what})")
        extra = set(doc) - {key, "about"}
        if extra:
            raise UsageError(f"{path}: unknown top-level key(s) {sorted(extra)}; "
                             f"allowed: {key}, about")
        out.append((path, doc[key]))
    return out
