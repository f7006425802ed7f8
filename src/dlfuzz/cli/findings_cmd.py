"""``dlfuzz findings DIR``: the confirmed bugs of a campaign (``--json`` for scripts)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

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
    table = Table(title=f"bugs in {args.dir}")
    for col in ("id", "status", "symptom", "guilty", "api", "seen", "message"):
        table.add_column(col, overflow="fold")
    for r in records:
        table.add_row(r["id"], r["status"], r["symptom"], r["guilty_backend"], r["api"],
                      str(r["occurrences"]), r["message"][:120])
    Console().print(table)
    if not records:
        Console().print("no confirmed bugs" + ("" if args.all else " (--all shows flaky ones)"))
    return 0
