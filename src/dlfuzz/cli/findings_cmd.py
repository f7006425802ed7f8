"""``dlfuzz findings DIR``: the confirmed bugs of a campaign, as a table or for machines.

Bugs are listed most severe first (crash, wrong-result, special-value, inconsistency,
validation, performance), one line per root cause with the places it showed at, under a
line of counts per class. A campaign stored before severities and root causes existed
gets them computed from its stored fields (``triage.severity``, ``triage.root_cause``).

``--format`` picks the output: ``table`` (fits the terminal, 80 columns included),
``json`` (one record per bug; ``--json`` is an alias), ``markdown``, ``sarif`` (SARIF
2.1.0) or ``junit`` (JUnit XML); the writers live in ``dlfuzz.report``. ``--baseline`` and
``--fail-on`` make it a CI gate (``cli.gate``).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich import box
from rich.table import Table

from dlfuzz.cli.common import literal, plain_console
from dlfuzz.cli.gate import absent_entries, add_gate_arguments, gate_code
from dlfuzz.errors import UsageError
from dlfuzz.report.view import FindingsView, where
from dlfuzz.settings import CampaignSettings
from dlfuzz.store.db import PHASE_COUNTER, BugRow, Store
from dlfuzz.triage.baseline import load_baseline, split
from dlfuzz.triage.severity import SEVERITIES, rank
from dlfuzz.triage.stored import filled

FORMATS = ("table", "json", "markdown", "sarif", "junit")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("findings", help="list the confirmed bugs of a campaign")
    p.add_argument("dir", type=Path, help="campaign directory")
    p.add_argument("--format", choices=FORMATS, default=None,
                   help="table (default; fits the terminal), json (one record per bug), "
                        "markdown, sarif (SARIF 2.1.0) or junit (JUnit XML)")
    p.add_argument("--json", action="store_true", help="same as --format json")
    p.add_argument("--all", action="store_true", help="include flaky (unconfirmed) findings")
    p.add_argument("--stats", action="store_true",
                   help="per API: cases, valid rate, yield, findings, crashes, energy "
                        "(instead of the bugs)")
    p.add_argument("--top", type=int, default=40, metavar="N",
                   help="with --stats: the N APIs with the most cases (0: all)")
    add_gate_arguments(p, check_by_default=True)
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


def class_counts(records: list[dict[str, Any]]) -> str:
    """``crash 1 · wrong-result 2 · ...``: root causes per class, every class named."""
    counts = {s: 0 for s in SEVERITIES}
    for r in records:
        counts[str(r["severity"])] = counts.get(str(r["severity"]), 0) + 1
    return " · ".join(f"{s} {n}" for s, n in counts.items())


def output_format(args: argparse.Namespace) -> str:
    """The chosen format; ``--json`` is ``--format json`` (and conflicts with another)."""
    if args.json and args.format not in (None, "json"):
        raise UsageError(f"--json and --format {args.format} disagree; --json is "
                         "--format json, give one of them")
    return "json" if args.json else (args.format or "table")


def collect(store: Store, include_flaky: bool) -> list[dict[str, Any]]:
    """Every confirmed bug of the campaign (flaky ones too with ``include_flaky``) as
    records, most severe first."""
    bugs = store.bugs() if include_flaky else store.bugs("confirmed")
    return ordered([bug_record(store, b) for b in bugs])


def run(args: argparse.Namespace) -> int:
    fmt = output_format(args)
    if args.stats:
        if fmt not in ("table", "json") or args.baseline or args.fail_on:
            raise UsageError("--stats lists per-API statistics as a table or JSON; --format "
                             "markdown/sarif/junit, --baseline and --fail-on apply to the "
                             "bug listing (drop --stats)")
        return show_stats(args, fmt)
    # The baseline is read first: a bad file is reported before anything else runs.
    baseline = load_baseline(args.baseline) if args.baseline else None
    store = Store.open(args.dir)
    try:
        records = collect(store, args.all)
        meta = store.meta()
        versions = {str(r["name"]): str(r["version"]) for r in store.backend_rows()}
        root = store.root.resolve()
    finally:
        store.close()
    settings = _stored_settings(meta)
    grouped = by_root_cause(records)
    new, known = split(grouped, baseline)
    absent = absent_entries(baseline, records, settings, args.check_fixed)
    view = FindingsView(campaign=root, label=str(args.dir), new=tuple(new),
                        known=tuple(known), absent=tuple(absent),
                        baseline=args.baseline, engine=settings.engine, versions=versions)
    if fmt == "json":
        print(json.dumps(json_listing(records, view), indent=2))
    elif fmt == "table":
        print_tables(view, args.all)
    else:
        import importlib

        writer = importlib.import_module(f"dlfuzz.report.{fmt}")
        print(writer.render(view))
    return gate_code(new, args.fail_on, len(known))


def _stored_settings(meta: dict[str, Any]) -> CampaignSettings:
    """The campaign's settings (engine name; interpreters and preloads for re-checking
    baseline entries); the defaults for a campaign stored without them."""
    stored = meta.get("settings")
    if not stored:
        return CampaignSettings()
    try:
        return CampaignSettings.from_json(stored)
    except (TypeError, ValueError, KeyError):
        return CampaignSettings()


def json_listing(records: list[dict[str, Any]], view: FindingsView) -> Any:
    """Without a baseline: the list of bug records (the stable shape scripts read). With
    one: ``{"new": [...], "known": [...], "fixed": [...], "not_seen": [...]}``, the first
    two bug records, the last two baseline entries with their ``state`` and ``verdict``."""
    if view.baseline is None:
        return records
    keys = {str(r["root_cause"]) for r in view.known}
    return {"new": [r for r in records if str(r["root_cause"]) not in keys],
            "known": [r for r in records if str(r["root_cause"]) in keys],
            "fixed": [c.as_json() for c in view.fixed],
            "not_seen": [c.as_json() for c in view.absent if c.state != "fixed"]}


def print_tables(view: FindingsView, include_flaky: bool) -> None:
    console = plain_console()
    width = min(console.width, 160)
    new = [dict(r) for r in view.new]
    if new:
        title = f"new bugs in {view.label}" if view.baseline else f"bugs in {view.label}"
        console.print(findings_table(new, title, width))
        head = "new root causes" if view.baseline else "root causes"
        console.print(literal(f"{len(new)} {head}: {class_counts(new)}"))
    else:
        none = "no new confirmed bugs" if view.baseline else "no confirmed bugs"
        console.print(literal(f"{none} in {view.label}"
                              + ("" if include_flaky else " (--all shows flaky ones)")))
    if view.known:
        console.print()
        console.print(findings_table([dict(r) for r in view.known],
                                     f"known bugs (in {view.baseline})", width))
    if view.absent:
        console.print()
        console.print(literal(f"baseline entries not found in this campaign: "
                              f"{len(view.absent)}"))
        for c in view.absent:
            line = f"  {c.state:<11} {c.entry.key}: {' '.join(c.verdict.split())}"
            console.print(literal(line if len(line) <= width else line[:width - 1] + "…"))


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
    table = Table(title=literal(title), box=box.SIMPLE_HEAD, show_edge=False,
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


def show_stats(args: argparse.Namespace, fmt: str) -> int:
    """Per-API stats of the campaign's engine (``Engine.api_stats``), most cases first."""
    store = Store.open(args.dir)
    try:
        stats = store.meta().get("api_stats") or {}
        triage = triage_line(store)
        time_split = phases_line(store)
    finally:
        store.close()
    rows = sorted(stats.items(), key=lambda kv: (-kv[1].get("tried", 0), kv[0]))
    if fmt == "json":
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
    console.print(literal(triage))
    if time_split:
        console.print(literal(time_split))
    return 0


def phases_line(store: Store) -> str:
    """Where the batches' time went: generating, running, each oracle, triage, the rest
    (feedback, storing); "" for a campaign stored before the batches were timed."""
    counters = store.counters()
    parts = {name[len(PHASE_COUNTER):-3]: ms / 1000.0 for name, ms in counters.items()
             if name.startswith(PHASE_COUNTER) and name.endswith("_ms")}
    if not parts:
        return ""
    seconds = float(store.totals()["seconds"])
    triage = sum(_triage_seconds(counters))
    oracles = sorted(((k.partition(":")[2], v) for k, v in parts.items()
                      if k.startswith("oracle:")), key=lambda kv: -kv[1])
    judged = sum(v for _, v in oracles)
    rest = seconds - parts.get("generate", 0.0) - parts.get("run", 0.0) - judged - triage
    shown = ", ".join(f"{name} {v:.0f}" for name, v in oracles if v >= 0.5)
    return (f"time: generating {parts.get('generate', 0.0):.0f} s, running "
            f"{parts.get('run', 0.0):.0f} s, judging {judged:.0f} s"
            f"{' (' + shown + ')' if shown else ''}, triage {triage:.0f} s, "
            f"the rest {max(rest, 0.0):.0f} s")


def _triage_seconds(counters: dict[str, int]) -> tuple[float, float]:
    """Triage's seconds confirming and reducing (``Triage.seconds``, per batch)."""
    return (counters.get("triage_confirm_ms", 0) / 1000.0,
            counters.get("triage_reduce_ms", 0) / 1000.0)


def triage_line(store: Store) -> str:
    """How much of the campaign's time triage took, by phase (``Triage.seconds``)."""
    counters = store.counters()
    seconds = float(store.totals()["seconds"])
    confirm, reduce = _triage_seconds(counters)
    waiting = len(store.meta().get("reductions_waiting") or [])
    return (f"triage: {confirm + reduce:.0f} s of the campaign's {seconds:.0f} s "
            f"({(confirm + reduce) / max(seconds, 1e-9):.0%}): confirming {confirm:.0f} s, "
            f"reducing {reduce:.0f} s; {waiting} reduction(s) still waiting")


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.2f}" if value >= 0.01 or value == 0 else f"{value:.3g}"
    return str(value)
