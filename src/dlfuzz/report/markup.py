"""Small HTML pieces the report's parts share. Every piece of text is escaped here:
exception messages, library output and API names are untrusted."""

from __future__ import annotations

from collections.abc import Iterable
from html import escape
from typing import Any


def kv_table(rows: Iterable[tuple[Any, Any]]) -> str:
    """A two-column table: one header cell and one value cell per row."""
    body = "".join(f"<tr><th>{escape(str(k))}</th><td>{escape(str(v))}</td></tr>"
                   for k, v in rows)
    return f"<table>{body}</table>"


def collapsible(summary: str, body: str, is_open: bool = False, css: str = "") -> str:
    """``<details>``: closed parts cost the browser no layout, which keeps a report of
    hundreds of bugs fast. ``summary`` and ``body`` are HTML already escaped."""
    attrs = (f" class='{escape(css)}'" if css else "") + (" open" if is_open else "")
    return f"<details{attrs}><summary>{summary}</summary>{body}</details>"
