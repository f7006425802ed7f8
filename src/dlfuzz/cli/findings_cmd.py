"""``dlfuzz findings DIR``: the confirmed bugs of a campaign (``--json`` for scripts).

Bugs are listed most severe first (crash, wrong-result, special-value, inconsistency,
validation, performance), one line per root cause with the places it showed at, under a
line of counts per class. A campaign stored before severities and root causes existed
gets them computed from its stored fields (``triage.severity``, ``triage.root_cause``).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich import box
from rich.table import Table

from dlfuzz.cli.common import literal, plain_console
from dlfuzz.store.db import BugRow, Store
from dlfuzz.triage.severity import SEVERITIES, rank
from dlfuzz.triage.stored import filled


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("findings", help="list the confirmed bugs of a campaign")
    p.add_argument("dir", type=Path, help="campaign directory")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--all", action="store_true", help="include flaky (unconfirmed) findings")
    p.add_argument("--stats", action="store_true",
                   help="per API: cases, valid rate, yield, findings, crashes, energy "
                        "(instead of the bugs)")
    p.add_argument("--top", type=int, default=40, metavar="N",
                   help="with --stats: the N APIs with the most cases (0: all)")
    p.set_defaults(func=run)


def bug_record(store: Store, bug: BugRow) -> dict[str, Any]:
    """The stable JSON shape of one bug (scripts depend on these keys)."""
    folder = store.root / bug.dir if bug.dir else None
    repro: dict[str, str] = {}
    if folder is not None and (folder / "meta.json").is_file():
        meta = json.loads((folder / "meta.json").read_text())
        repro = {b: str((folder / name).resolve()) for b, name in meta.get("repro", {}).items()}
    severity, root_cause, places = filled(store, bug)
    return {
        "id": bug.id, "symptom": bug.symptom, "guilty_backend": bug.guilty_backend,
        "api": bug.api, "stage": bug.stage, "message": bug.message,
        "confirmed": bug.confirmed, "status": bug.status, "occurrences": bug.occurrences,
        "reduced": bug.reduced_blob is not None,
        "dir": str(folder.resolve()) if folder else None, "repro": repro,
        "signature": bug.signature,
        "severity": severity, "root_cause": root_cause, "places": places,
    }


def ordered(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Most severe first; within a class, in the order they were found (stable)."""
    return sorted(records, key=lambda r: rank(str(r["severity"])))


def by_root_cause(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One record per root cause (the first bug of each, most severe class of all),
    places merged and occurrences summed; a campaign written by this version has one
    confirmed bug per root cause already, an older one may have several."""
    groups: dict[str, dict[str, Any]] = {}
    # A confirmed bug stands for its root cause before a flaky one (``--all``).
    for r in sorted(records, key=lambda r: not r["confirmed"]):
        key = str(r["root_cause"])
        if key not in groups:
            groups[key] = {**r, "places": [dict(p) for p in r["places"]], "ids": [r["id"]]}
            continue
        g = groups[key]
        g["ids"].append(r["id"])
        g["occurrences"] += r["occurrences"]
        if rank(str(r["severity"])) < rank(str(g["severity"])):
            g["severity"] = r["severity"]
        g["places"].extend(dict(p) for p in r["places"])
    return ordered(list(groups.values()))


def where(places: list[dict[str, Any]]) -> str:
    """Where a root cause showed, short: backends, then APIs (if several), then dtypes."""
    def uniq(key: str) -> list[str]:
        return list(dict.fromkeys(str(p.get(key, "")) for p in places if p.get(key)))
    backends, apis = uniq("backend"), uniq("api")
    dtypes = sorted({d for p in places for d in str(p.get("dtypes", "")).split(",")
                     if d and d not in ("?", "-")})
    parts = [",".join(backends)]
    if len(apis) > 1:
        parts.append(",".join(apis))
    if dtypes:
        parts.append(",".join(dtypes))
    return " ".join(p for p in parts if p)


def class_counts(records: list[dict[str, Any]]) -> str:
    """``crash 1 · wrong-result 2 · ...``: root causes per class, every class named."""
    counts = {s: 0 for s in SEVERITIES}
    for r in records:
        counts[str(r["severity"])] = counts.get(str(r["severity"]), 0) + 1
    return " · ".join(f"{s} {n}" for s, n in counts.items())


def run(args: argparse.Namespace) -> int:
    if args.stats:
        return show_stats(args)
    store = Store.open(args.dir)
    try:
        bugs = store.bugs() if args.all else store.bugs("confirmed")
        records = ordered([bug_record(store, b) for b in bugs])
    finally:
        store.close()
    if args.json:
        print(json.dumps(records, indent=2))
        return 0
    console = plain_console()
    grouped = by_root_cause(records)
    console.print(findings_table(grouped, str(args.dir), min(console.width, 160)))
    if records:
        console.print(literal(f"{len(grouped)} root causes: {class_counts(grouped)}"))
    if not records:
        console.print("no confirmed bugs" + ("" if args.all else " (--all shows flaky ones)"))
    return 0


def findings_table(records: list[dict[str, Any]], title: str, width: int = 80) -> Table:
    """The root causes as a table ``width`` columns wide: ids, severities and counts are
    never wrapped or cut; the root-cause key is cut only on a very narrow line, the places
    and the message share the rest, cut with an ellipsis. Every cell is literal text
    (library messages may hold ``[dim]`` or ``[/x]``)."""
    heads = ("id", "severity", "root cause", "where", "seen", "message")
    rows = [(str(r["id"]) + (f"+{len(r['ids']) - 1}" if len(r.get("ids", [])) > 1 else ""),
             str(r["severity"]) + ("" if r["status"] == "confirmed" else f" ({r['status']})"),
             str(r["root_cause"]), where(r["places"]), str(r["occurrences"]),
             " ".join(str(r["message"]).split()))
            for r in records]
    widths = [max([len(h)] + [len(row[i]) for row in rows]) for i, h in enumerate(heads)]
    gaps = 2 * (len(heads) - 1)  # a space of padding each side between columns
    # What id, severity and count leave goes to the key first (it names the bug), then
    # to the places (up to 60% of the rest), then to the message.
    free = max(width - gaps - widths[0] - widths[1] - widths[4], 26)
    widths[2] = min(widths[2], max(free - 16, 10))
    widths[3] = min(widths[3], max((free - widths[2]) * 3 // 5, 5))
    widths[5] = max(width - gaps - sum(widths[:5]), 8)
    table = Table(title=literal(f"bugs in {title}"), box=box.SIMPLE_HEAD, show_edge=False,
                  pad_edge=False, collapse_padding=True)
    for head, w in zip(heads, widths, strict=True):
        table.add_column(head, width=w, no_wrap=True, overflow="ellipsis",
                         justify="right" if head == "seen" else "left")
    for row in rows:
        table.add_row(*(literal(v) for v in row))
    return table


# (key in the stats, column head): cases in valid mode, their valid rate, the yield (share
# of cases that showed something new), new ones, findings, worker deaths, violate-mode
# cases and the share of their rejections from native code, the schedule's energy.
STAT_COLUMNS = (("tried", "cases"), ("valid_rate", "valid"), ("yield", "yield"),
                ("novel", "new"), ("findings", "finds"), ("crashes", "crash"),
                ("violate_tried", "viol"), ("native_rate", "native"),
                ("weight", "energy"))


def show_stats(args: argparse.Namespace) -> int:
    """Per-API stats of the campaign's engine (``Engine.api_stats``), most cases first."""
    store = Store.open(args.dir)
    try:
        stats = store.meta().get("api_stats") or {}
    finally:
        store.close()
    rows = sorted(stats.items(), key=lambda kv: (-kv[1].get("tried", 0), kv[0]))
    if args.json:
        print(json.dumps(dict(rows), indent=2))
        return 0
    console = plain_console()
    if not rows:
        console.print(literal(f"no per-API stats in {args.dir} (an engine without them, or "
                              "a campaign stored before they existed)"))
        return 0
    shown = rows[:args.top] if args.top > 0 else rows
    cells = [[_cell(row.get(key, 0)) for key, _ in STAT_COLUMNS] for _, row in shown]
    widths = [max([len(head)] + [len(c[i]) for c in cells])
              for i, (_, head) in enumerate(STAT_COLUMNS)]
    width = min(console.width, 160)
    api_width = max(12, width - sum(widths) - 2 * len(widths) - 2)
    table = Table(title=literal(f"per-API stats in {args.dir}"), box=box.SIMPLE_HEAD,
                  show_edge=False, pad_edge=False, collapse_padding=True)
    table.add_column("api", width=api_width, no_wrap=True, overflow="ellipsis")
    for (_, head), w in zip(STAT_COLUMNS, widths, strict=True):
        table.add_column(head, width=w, justify="right", no_wrap=True)
    for (api, _), row_cells in zip(shown, cells, strict=True):
        table.add_row(literal(api), *row_cells)
    console.print(table)
    cases = sum(int(r.get("tried", 0)) for _, r in rows)
    valid = sum(float(r.get("valid_rate", 0)) * int(r.get("tried", 0)) for _, r in rows)
    console.print(literal(
        f"{len(rows)} APIs tried, {cases} valid-mode cases, valid rate "
        f"{valid / max(cases, 1):.1%}; shown: {len(shown)} (--top 0 shows all)"))
    return 0


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.2f}" if value >= 0.01 or value == 0 else f"{value:.3g}"
    return str(value)
