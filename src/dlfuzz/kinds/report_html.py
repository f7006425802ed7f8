"""Small HTML pieces the kinds' report sections share (every text escaped)."""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any


def table(rows: list[tuple[str, Any]]) -> str:
    body = "".join(f"<tr><th>{escape(str(k))}</th><td>{escape(str(v))}</td></tr>"
                   for k, v in rows)
    return f"<table>{body}</table>"


def described_case(folder: Path) -> dict[str, Any] | None:
    """The bug folder's ``case.json`` (the kind's ``describe``), or None without one."""
    path = folder / "case.json"
    if not path.is_file():
        return None
    described: dict[str, Any] = json.loads(path.read_text())
    return described


def file_block(folder: Path, name: str, heading: str, limit: int = 20000) -> str:
    """A heading and the (escaped, cut) text of a file of the folder; "" if absent."""
    path = folder / name
    if not path.is_file():
        return ""
    text = path.read_text(errors="replace")
    more = "\n…" if len(text) > limit else ""
    return (f"<h3>{escape(heading)} (<code>{escape(name)}</code>)</h3>"
            f"<pre>{escape(text[:limit])}{more}</pre>")
