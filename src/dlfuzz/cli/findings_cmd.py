"""``dlfuzz findings DIR``: the confirmed bugs of a campaign (``--json`` for scripts)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich import box
from rich.table import Table

from dlfuzz.cli.common import literal, plain_console
from dlfuzz.store.db import BugRow, Store


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("findings", help="list the confirmed bugs of a campaign")
    p.add_argument("dir", type=Path, help="campaign directory")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--all", action="store_true", help="include flaky (unconfirmed) findings")
    p.set_defaults(func=run)


def bug_record(store: Store, bug: BugRow) -> dict[str, Any]:
    """The stable JSON shape of one bug (scripts depend on these keys)."""
    folder = store.root / bug.dir if bug.dir else None
    repro: dict[str, str] = {}
    if folder is not None and (folder / "meta.json").is_file():
        meta = json.loads((folder / "meta.json").read_text())
        repro = {b: str((folder / name).resolve()) for b, name in meta.get("repro", {}).items()}
    return {
        "id": bug.id, "symptom": bug.symptom, "guilty_backend": bug.guilty_backend,
        "api": bug.api, "stage": bug.stage, "message": bug.message,
        "confirmed": bug.confirmed, "status": bug.status, "occurrences": bug.occurrences,
        "reduced": bug.reduced_blob is not None,
        "dir": str(folder.resolve()) if folder else None, "repro": repro,
        "signature": bug.signature,
    }


def run(args: argparse.Namespace) -> int:
    store = Store.open(args.dir)
    try:
        bugs = store.bugs() if args.all else store.bugs("confirmed")
        records = [bug_record(store, b) for b in bugs]
    finally:
        store.close()
    if args.json:
        print(json.dumps(records, indent=2))
        return 0
    console = plain_console()
    console.print(findings_table(records, str(args.dir), min(console.width, 160)))
    if not records:
        console.print("no confirmed bugs" + ("" if args.all else " (--all shows flaky ones)"))
    return 0


def findings_table(records: list[dict[str, Any]], title: str, width: int = 80) -> Table:
    """The bugs as a table ``width`` columns wide: ids, statuses and counts are never
    wrapped or cut; symptom, backend and API are cut with an ellipsis past a cap; the
    message gets the rest of the line, cut with an ellipsis. Every cell is literal text
    (library messages may hold ``[dim]`` or ``[/x]``)."""
    heads = ("id", "status", "symptom", "guilty", "api", "seen", "message")
    rows = [(str(r["id"]), str(r["status"]), str(r["symptom"]), str(r["guilty_backend"] or "?"),
             str(r["api"]), str(r["occurrences"]), " ".join(str(r["message"]).split()))
            for r in records]
    caps = (None, None, 14, 10, 20, None)  # None: never cut
    widths = [max([len(h)] + [len(row[i]) for row in rows]) for i, h in enumerate(heads)]
    widths[:6] = [w if cap is None else min(w, cap) for w, cap in zip(widths, caps, strict=False)]
    gaps = 2 * (len(heads) - 1)  # a space of padding each side between columns
    widths[6] = max(width - gaps - sum(widths[:6]), 8)
    table = Table(title=literal(f"bugs in {title}"), box=box.SIMPLE_HEAD, show_edge=False,
                  pad_edge=False, collapse_padding=True)
    for head, w in zip(heads, widths, strict=True):
        table.add_column(head, width=w, no_wrap=True, overflow="ellipsis",
                         justify="right" if head == "seen" else "left")
    for row in rows:
        table.add_row(*(literal(v) for v in row))
    return table
