"""Static HTML report of a campaign: summary, backends, bugs with inputs, outputs, repros.

Everything shown comes from the store and the bug folders, and every piece of text is
HTML-escaped: exception messages and library output are untrusted.
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any

import numpy as np

from dlfuzz.cases.kind import kind_named
from dlfuzz.errors import UsageError
from dlfuzz.store.db import BugRow, Store
from dlfuzz.triage.severity import SEVERITIES, rank
from dlfuzz.triage.stored import filled

_CSS = """
body{font-family:system-ui,sans-serif;margin:2em;max-width:70em;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.3em .6em;
text-align:left;vertical-align:top}th{background:#f3f3f3}pre{background:#f7f7f7;padding:.8em;
overflow:auto;max-height:30em}.confirmed{color:#a00}.flaky{color:#888}
section{border-top:2px solid #ddd;margin-top:2em}
.crash,.wrong-result{color:#a00;font-weight:bold}
"""


def _places(places: list[dict[str, Any]]) -> str:
    return "; ".join(f"{p.get('backend')} {p.get('api')} ({p.get('dtypes')}, "
                     f"{p.get('symptom')}) ×{p.get('count', 1)}" for p in places)


def _preview(path: Path, limit: int = 64) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    if not path.is_file():
        return rows
    with np.load(path) as data:
        for key in data.files:
            arr = data[key]
            flat = arr.reshape(-1)[:limit]
            more = " …" if arr.size > limit else ""
            rows.append((f"{key} {arr.dtype}{list(arr.shape)}",
                         np.array2string(flat, threshold=limit, max_line_width=100) + more))
    return rows


def _kv_table(rows: list[tuple[str, Any]]) -> str:
    body = "".join(f"<tr><th>{escape(str(k))}</th><td>{escape(str(v))}</td></tr>"
                   for k, v in rows)
    return f"<table>{body}</table>"


def _bug_section(store: Store, bug: BugRow) -> str:
    sev, key, places = filled(store, bug)
    parts = [f'<section id="{escape(bug.id)}"><h2>{escape(bug.id)}: '
             f'<span class="{escape(sev)}">{escape(sev)}</span> — '
             f'{escape(bug.symptom)} in {escape(bug.guilty_backend or "?")} — '
             f'{escape(bug.api)}</h2>']
    parts.append(_kv_table([("severity", sev), ("root cause", key),
                            ("places", _places(places)), ("status", bug.status),
                            ("stage", bug.stage),
                            ("message", bug.message), ("occurrences", bug.occurrences),
                            ("confirmation", f"{bug.confirm_hits}/{bug.confirm_runs} re-runs"),
                            ("signature", bug.signature)]))
    folder = store.root / bug.dir if bug.dir else None
    if folder is None or not (folder / "meta.json").is_file():
        parts.append("<p>No folder (only confirmed bugs get one).</p></section>")
        return "".join(parts)
    meta = json.loads((folder / "meta.json").read_text())
    if (folder / "issue.md").is_file():
        parts.append(f"<p>Issue-ready report: <code>{escape(str(folder / 'issue.md'))}"
                     "</code></p>")
    if meta.get("reduced"):
        parts.append(f"<p>Reduced in {meta.get('reduce_runs')} runs.</p>")
    parts.append("<h3>Case</h3><pre>" + escape((folder / "case.json").read_text()) + "</pre>")
    # What a bug of this kind shows besides (its calls, model, program); a folder written
    # before bug folders recorded their kind shows the generic parts only.
    if meta.get("case_kind"):
        parts.append(kind_named(str(meta["case_kind"])).report_section(folder, meta))
    parts.append("<h3>Inputs</h3>" + _kv_table(_preview(folder / "inputs.npz")))
    parts.append("<h3>Outputs per backend</h3>")
    for out in sorted((folder / "outputs").glob("*.npz")):
        parts.append(f"<h4>{escape(out.stem)}</h4>" + _kv_table(_preview(out)))
    log = (folder / "error.log").read_text(errors="replace")
    parts.append("<h3>Statuses and errors</h3><pre>" + escape(log[-20000:]) + "</pre>")
    for backend, name in sorted(meta.get("repro", {}).items()):
        text = (folder / name).read_text()
        parts.append(f"<h3>Reproducer for {escape(backend)} "
                     f"(<code>{escape(str(folder / name))}</code>)</h3>"
                     f"<pre>{escape(text)}</pre>")
    parts.append("</section>")
    return "".join(parts)


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
    fill = {b.id: filled(store, b) for b in store.bugs()}

    def severity(b: BugRow) -> str:
        return fill[b.id][0]

    def root_cause(b: BugRow) -> str:
        return fill[b.id][1]

    bugs = sorted(store.bugs(), key=lambda b: (not b.confirmed, rank(severity(b))))
    confirmed = [b for b in bugs if b.confirmed]
    settings = meta.get("settings", {})
    html = [f"<!doctype html><html><head><meta charset='utf-8'><title>dlfuzz report</title>"
            f"{_MARK}"
            f"<style>{_CSS}</style></head><body><h1>dlfuzz campaign report</h1>"]
    html.append(_kv_table([
        ("directory", store.root), ("engine", settings.get("engine")),
        ("backends", ", ".join(meta.get("backends_resolved", settings.get("backends", [])))),
        ("seed", settings.get("seed")), ("cases", totals["cases"]),
        ("time", f"{totals['seconds']:.0f} s"), ("confirmed bugs", len(confirmed)),
        ("flaky findings", sum(b.status == "flaky" for b in bugs))]))
    counts = {s: len({root_cause(b) for b in confirmed if severity(b) == s}) for s in SEVERITIES}
    html.append("<h2>Confirmed root causes per class</h2><table><tr>"
                + "".join(f"<th class='{escape(s)}'>{escape(s)}</th>" for s in counts)
                + "</tr><tr>" + "".join(f"<td>{n}</td>" for n in counts.values())
                + "</tr></table>")
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
                    f"<td class='{escape(severity(b))}'>{escape(severity(b))}</td>"
                    f"<td>{escape(root_cause(b))}</td>"
                    f"<td class='{escape(b.status)}'>{escape(b.status)}</td>"
                    f"<td>{escape(b.symptom)}</td><td>{escape(b.guilty_backend)}</td>"
                    f"<td>{escape(b.api)}</td><td>{escape(b.message[:200])}</td></tr>")
    html.append("</table>")
    html.append(_api_stats_section(meta.get("api_stats") or {}))
    html.extend(_bug_section(store, b) for b in bugs)
    html.append("</body></html>")
    out.write_text("".join(html), encoding="utf-8", errors="backslashreplace")
    return out
