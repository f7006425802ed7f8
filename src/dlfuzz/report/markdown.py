"""``dlfuzz findings --format markdown``: the root causes as Markdown, for a pull-request
comment, a CI job summary or an issue.

A heading per severity class (most severe first), a table row per root cause with the
paths of its reproducers; then the known ones (in the baseline) and the baseline entries
the campaign did not find again (fixed or not). Library messages are untrusted text: cells
are one line, with ``|`` and backticks escaped, and cut to a readable length.
"""

from __future__ import annotations

from collections.abc import Iterable

from dlfuzz.report.view import FindingsView, Record, is_confirmed, where
from dlfuzz.triage.severity import SEVERITIES, rank

MESSAGE_CHARS = 160


def cell(text: object, limit: int = 0) -> str:
    """One table cell: a single line, pipes and HTML-ish characters escaped."""
    value = " ".join(str(text).split())
    if limit and len(value) > limit:
        value = value[:limit - 1] + "…"
    return (value.replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;")
            .replace(">", "&gt;").replace("`", "\\`"))


def code(text: object) -> str:
    """Inline code that survives backticks inside (a path holding one)."""
    value = " ".join(str(text).split()).replace("|", "\\|")
    fence = "``" if "`" in value else "`"
    return f"{fence} {value} {fence}" if fence == "``" else f"`{value}`"


def _where(record: Record) -> str:
    return where(list(record.get("places") or []))


def _rows(records: Iterable[Record]) -> list[str]:
    lines = ["| id | root cause | where | seen | message | reproducers |",
             "|---|---|---|---:|---|---|"]
    for r in records:
        ids = list(r.get("ids") or [r["id"]])
        ident = cell(ids[0]) + (f" (+{len(ids) - 1})" if len(ids) > 1 else "")
        if not is_confirmed(r):
            ident += f" ({cell(r.get('status', ''))})"
        repro = r.get("repro") or {}
        scripts = "<br>".join(code(path) for _, path in sorted(repro.items())) or "—"
        lines.append(f"| {ident} | {code(r['root_cause'])} | {cell(_where(r))} | "
                     f"{r.get('occurrences', '')} | {cell(r.get('message', ''), MESSAGE_CHARS)} "
                     f"| {scripts} |")
    return lines


def render(view: FindingsView) -> str:
    out = [f"# dlfuzz findings: {cell(view.label)}", ""]
    counts = {s: 0 for s in SEVERITIES}
    for r in view.new:
        counts[str(r["severity"])] = counts.get(str(r["severity"]), 0) + 1
    head = "new root causes" if view.baseline else "root causes"
    out.append(f"{len(view.new)} {head}: "
               + ", ".join(f"{s} {n}" for s, n in counts.items()) + ".")
    if view.baseline:
        out.append(f"{len(view.known)} known (in {code(view.baseline)}), "
                   f"{len(view.fixed)} fixed since the baseline.")
    out.append("")
    by_class: dict[str, list[Record]] = {}
    for r in view.new:
        by_class.setdefault(str(r["severity"]), []).append(r)
    for severity in sorted(by_class, key=rank):
        out += [f"## {severity} ({len(by_class[severity])})", ""]
        out += _rows(by_class[severity])
        out.append("")
    if not view.new:
        out += ["No new confirmed bugs." if view.baseline else "No confirmed bugs.", ""]
    if view.known:
        out += [f"## Known (in the baseline) ({len(view.known)})", ""]
        out += _rows(view.known)
        out.append("")
    if view.absent:
        out += ["## Baseline entries not found in this campaign", "",
                "| root cause | severity | state | reproducer verdict |", "|---|---|---|---|"]
        for c in view.absent:
            out.append(f"| {code(c.entry.key)} | {cell(c.entry.severity or '?')} | "
                       f"{cell(c.state)} | {cell(c.verdict, MESSAGE_CHARS)} |")
        out.append("")
    return "\n".join(out)
