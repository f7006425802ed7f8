"""Static HTML report of a campaign: summary, charts, backends, APIs, and each bug with
its inputs, outputs per backend (differences highlighted) and reproducers.

Everything shown comes from the store and the bug folders, and every piece of text is
HTML-escaped: exception messages and library output are untrusted. The page is one file
that opens with no network: the charting library is inlined (``charts.py``). The parts
live beside this file: ``charts.py`` (plots), ``bugs.py`` (one bug), ``markup.py``.
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

from dlfuzz.errors import UsageError
from dlfuzz.report import charts
from dlfuzz.report.bugs import bug_section
from dlfuzz.report.markup import kv_table
from dlfuzz.store.db import Store
from dlfuzz.triage.severity import SEVERITIES, rank
from dlfuzz.triage.stored import filled

_CSS = """
body{font-family:system-ui,sans-serif;margin:2em;max-width:80em;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.3em .6em;
text-align:left;vertical-align:top}th{background:#f3f3f3}pre{background:#f7f7f7;padding:.8em;
overflow:auto;max-height:30em}.confirmed{color:#a00}.flaky{color:#888}
.crash,.wrong-result{color:#a00;font-weight:bold}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(32em,1fr));gap:1.5em}
.chart{margin:0;border:1px solid #ddd;padding:.6em}.chart figcaption{font-weight:bold}
.chart-box{position:relative;height:18em}
details.bug{border-top:2px solid #ddd;margin-top:1em;padding-top:.5em}
details.bug>summary{font-size:1.15em;cursor:pointer}
details details{margin:.4em 0}details details>summary{cursor:pointer;color:#245}
table.outputs caption{text-align:left;font-style:italic;padding:.2em 0}
table.outputs td{font-family:ui-monospace,monospace}
mark.diff{background:#ffb3b3;color:#600;font-weight:bold;padding:0 .2em}
"""
# Bug sections shown unfolded: the most severe confirmed ones; the rest open on a click.
OPEN_BUGS = 3


_MARK = "<meta name='generator' content='dlfuzz report'>"
_TITLE = "<h1>dlfuzz campaign report</h1>"


def is_report(path: Path) -> bool:
    """Whether ``path`` is an HTML file this module wrote (safe to overwrite)."""
    try:
        with path.open("rb") as fh:
            head = fh.read(4096).decode("utf-8", "replace")
    except OSError:
        return False
    return _MARK in head or _TITLE in head


def resolve_out(out: Path) -> Path:
    """The HTML file ``--out`` asks for, or a UsageError saying why it cannot be written.

    An existing folder gets ``index.html`` inside if it is empty or holds a previous
    report (never a folder of other files: the report's name could clobber one); a path
    whose parent is missing has its parents created when the report is written; a parent
    that is a file is refused.
    """
    if out.is_dir():
        index = out / "index.html"
        entries = list(out.iterdir())
        if entries and not is_report(index):
            raise UsageError(f"--out {out}: is a folder that is not empty and holds no "
                             "dlfuzz report; give an HTML file name, an empty or new folder, "
                             "or the folder of a previous report")
        return index
    for parent in out.parents:
        if parent.exists():
            if not parent.is_dir():
                raise UsageError(f"--out {out}: {parent} is a file, not a folder; "
                                 "choose another --out")
            break
    return out


# Per-API stats shown in the report (key, head): the engine's schedule at the end.
_API_COLUMNS = (("tried", "cases"), ("valid_rate", "valid rate"), ("yield", "yield"),
                ("novel", "new outcomes"), ("findings", "findings"),
                ("crashes", "crashes"), ("violate_tried", "violate cases"),
                ("native_rate", "native rejections"), ("weight", "energy"))


def _api_stats_section(stats: dict[str, dict[str, Any]]) -> str:
    """Per-API cases, valid rate and yield (``Engine.api_stats``), most cases first."""
    if not stats:
        return ""
    rows = sorted(stats.items(), key=lambda kv: (-kv[1].get("tried", 0), kv[0]))
    cases = sum(int(r.get("tried", 0)) for _, r in rows)
    valid = sum(float(r.get("valid_rate", 0)) * int(r.get("tried", 0)) for _, r in rows)
    parts = [f"<h2>APIs ({len(rows)} tried; valid rate {valid / max(cases, 1):.1%})</h2>"
             "<table><tr><th>API</th>"
             + "".join(f"<th>{escape(h)}</th>" for _, h in _API_COLUMNS) + "</tr>"]
    for api, row in rows:
        parts.append(f"<tr><td>{escape(api)}</td>" + "".join(
            f"<td>{escape(str(row.get(k, '')))}</td>" for k, _ in _API_COLUMNS) + "</tr>")
    parts.append("</table>")
    return "".join(parts)


def write_report(store: Store, out: Path | None = None) -> Path:
    out = out or store.root / "report" / "index.html"
    out.parent.mkdir(parents=True, exist_ok=True)
    meta = store.meta()
    totals = store.totals()
    # Most severe first: crash and wrong-result lead the report.
    stored = store.bugs()
    fill = {b.id: filled(store, b) for b in stored}
    severity = {b.id: fill[b.id][0] for b in stored}
    root_cause = {b.id: fill[b.id][1] for b in stored}
    bugs = sorted(stored, key=lambda b: (not b.confirmed, rank(severity[b.id])))
    confirmed = [b for b in bugs if b.confirmed]
    settings = meta.get("settings", {})
    html = [f"<!doctype html><html><head><meta charset='utf-8'><title>dlfuzz report</title>"
            f"{_MARK}"
            f"<style>{_CSS}</style></head><body><h1>dlfuzz campaign report</h1>"]
    html.append(kv_table([
        ("directory", store.root), ("engine", settings.get("engine")),
        ("backends", ", ".join(meta.get("backends_resolved", settings.get("backends", [])))),
        ("seed", settings.get("seed")), ("cases", totals["cases"]),
        ("time", f"{totals['seconds']:.0f} s"), ("confirmed bugs", len(confirmed)),
        ("flaky findings", sum(b.status == "flaky" for b in bugs))]))
    counts = {s: len({root_cause[b.id] for b in confirmed if severity[b.id] == s}) for s in SEVERITIES}
    html.append("<h2>Confirmed root causes per class</h2><table><tr>"
                + "".join(f"<th class='{escape(s)}'>{escape(s)}</th>" for s in counts)
                + "</tr><tr>" + "".join(f"<td>{n}</td>" for n in counts.values())
                + "</tr></table>")
    plots = charts.chart_data(store, bugs, severity, root_cause)
    html.append(charts.figures(plots))
    html.append("<h2>Backends</h2><table><tr><th>backend</th><th>version</th><th>cases</th>"
                "<th>crashes</th><th>timeouts</th><th>restarts</th></tr>")
    for r in store.backend_rows():
        html.append("<tr>" + "".join(f"<td>{escape(str(r[k]))}</td>" for k in
                    ("name", "version", "cases", "crashes", "timeouts", "restarts")) + "</tr>")
    html.append("</table><h2>Bugs</h2><table><tr><th>id</th><th>severity</th>"
                "<th>root cause</th><th>status</th><th>symptom</th>"
                "<th>guilty</th><th>API</th><th>message</th></tr>")
    for b in bugs:
        html.append(f"<tr><td><a href='#{escape(b.id)}'>{escape(b.id)}</a></td>"
                    f"<td class='{escape(severity[b.id])}'>{escape(severity[b.id])}</td>"
                    f"<td>{escape(root_cause[b.id])}</td>"
                    f"<td class='{escape(b.status)}'>{escape(b.status)}</td>"
                    f"<td>{escape(b.symptom)}</td><td>{escape(b.guilty_backend)}</td>"
                    f"<td>{escape(b.api)}</td><td>{escape(b.message[:200])}</td></tr>")
    html.append("</table>")
    html.append(_api_stats_section(meta.get("api_stats") or {}))
    html.append(f"<h2>Bugs in detail</h2><p>The {OPEN_BUGS} most severe confirmed bugs are "
                "unfolded; click a bug to unfold it. Highlighted: output values that differ "
                "from the reference backend beyond their dtype's tolerance.</p>")
    html.extend(bug_section(store, b, severity[b.id], root_cause[b.id], fill[b.id][2],
                            is_open=b.confirmed and i < OPEN_BUGS)
                for i, b in enumerate(bugs))
    html.append(charts.scripts(plots))
    html.append("</body></html>")
    out.write_text("".join(html), encoding="utf-8", errors="backslashreplace")
    return out
