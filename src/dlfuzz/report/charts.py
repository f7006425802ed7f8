"""The report's plots: what each chart shows, computed from the store, and the page part
that draws them.

The data goes into the page as one JSON block; ``charts.js`` draws it with Chart.js,
which is vendored (``vendor/``) and inlined, so the report opens with no network and
stays one file a CI job can keep as an artifact. Every number here comes from the store:

* over time: the ``batches`` table (cases and fuzzing seconds per batch, when each
  finished) and each bug's ``created_at`` placed on the same fuzzing-time axis, so a
  resumed campaign's pause is not drawn as time spent;
* outcomes per backend: the ``outcome:BACKEND:STATUS`` counters the campaign adds per
  batch; a campaign stored before them has only the ``backends`` table (cases, crashes,
  timeouts), drawn with ok and exception merged;
* severities: one count per confirmed root cause (flaky ones apart);
* per API: the engine's ``api_stats`` (valid rate and yield) for the most tried APIs.
"""

from __future__ import annotations

import json
import sqlite3
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from importlib import resources
from typing import Any

from dlfuzz.cases.core import STATUSES
from dlfuzz.errors import InternalError
from dlfuzz.store.db import OUTCOME_COUNTER, BugRow, Store
from dlfuzz.triage.severity import SEVERITIES

# The x axis of the timeline keeps at most this many points: Chart.js draws a few
# thousand quickly, but a campaign of days has tens of thousands of batches.
MAX_POINTS = 400
# APIs shown in the per-API chart: the most tried ones (the table below lists them all).
TOP_APIS = 25
VENDORED = "vendor/chart.umd.min.js"  # Chart.js 4.6.1, MIT (vendor/README.md)

# (id, title): the charts in page order; charts.js draws each from data[id].
CHARTS = (("timeline", "Cases and bugs over fuzzing time"),
          ("outcomes", "Outcomes per backend"),
          ("severity", "Root causes per severity"),
          ("apis", f"Valid rate and yield per API (the {TOP_APIS} most tried)"))


@dataclass(frozen=True)
class FuzzClock:
    """Maps a wall-clock instant to seconds of fuzzing: the batches finished before it
    plus the part of the one running then. A resumed campaign's pause is no time."""

    ends: tuple[float, ...]  # each batch's finished_at, ascending
    seconds: tuple[float, ...]  # each batch's fuzzing seconds
    before: tuple[float, ...]  # fuzzing seconds before each batch, and the total last

    @classmethod
    def of(cls, rows: Sequence[sqlite3.Row]) -> FuzzClock:
        """From the ``batches`` rows, in order."""
        seconds = tuple(float(r["seconds"]) for r in rows)
        before = [0.0]
        for s in seconds:
            before.append(before[-1] + s)
        return cls(tuple(float(r["finished_at"]) for r in rows), seconds, tuple(before))

    def at(self, instant: float) -> float:
        """A bug stored after the last batch (triage of a cut batch) is at the end."""
        i = bisect_left(self.ends, instant)
        if i == len(self.ends):
            return self.before[-1]
        start = self.ends[i] - self.seconds[i]
        return self.before[i] + min(max(instant - start, 0.0), self.seconds[i])


def timeline(store: Store, bugs: Sequence[BugRow]) -> dict[str, Any]:
    """Cumulative cases and bugs (confirmed, and every finding filed) on fuzzing time."""
    rows = list(store.conn.execute("SELECT cases, seconds, finished_at FROM batches "
                                   "ORDER BY idx"))
    clock = FuzzClock.of(rows)
    cases = [0]
    for r in rows:
        cases.append(cases[-1] + int(r["cases"]))
    points = list(zip(clock.before, cases, strict=True))
    step = max(1, len(points) // MAX_POINTS)
    kept = points[::step]
    if kept[-1] != points[-1]:
        kept.append(points[-1])

    def steps(rows: Sequence[BugRow]) -> list[list[float]]:
        times = sorted(clock.at(b.created_at) for b in rows)
        return [[round(x, 2), n] for n, x in enumerate(times, 1)]

    return {"cases": [[round(x, 2), n] for x, n in kept], "end": round(clock.before[-1], 2),
            "confirmed": steps([b for b in bugs if b.confirmed]),
            "filed": steps(bugs)}


def outcomes(store: Store) -> dict[str, Any]:
    """Per backend, how many of its cases ended in each status."""
    counts: dict[str, dict[str, int]] = {}
    for name, value in store.counters().items():
        if name.startswith(OUTCOME_COUNTER):
            backend, _, status = name[len(OUTCOME_COUNTER):].rpartition(":")
            counts.setdefault(backend, {})[status] = value
    if counts:
        backends = sorted(counts)
        return {"recorded": True, "backends": backends, "statuses": list(STATUSES),
                "counts": {s: [counts[b].get(s, 0) for b in backends] for s in STATUSES}}
    rows = store.backend_rows()
    return {"recorded": False, "backends": [r["name"] for r in rows],
            "statuses": ["ok or exception", "crash", "timeout"],
            "counts": {"ok or exception": [max(0, r["cases"] - r["crashes"] - r["timeouts"])
                                           for r in rows],
                       "crash": [r["crashes"] for r in rows],
                       "timeout": [r["timeouts"] for r in rows]}}


def severities(bugs: Sequence[BugRow], severity: dict[str, str],
               root_cause: dict[str, str]) -> dict[str, Any]:
    """Root causes per severity class: confirmed and flaky ones, each counted once."""
    def count(status: str) -> list[int]:
        return [len({root_cause[b.id] for b in bugs
                     if b.status == status and severity[b.id] == s}) for s in SEVERITIES]
    return {"classes": list(SEVERITIES), "confirmed": count("confirmed"),
            "flaky": count("flaky")}


def api_rates(stats: dict[str, dict[str, Any]], top: int = TOP_APIS) -> dict[str, Any]:
    """Valid rate and yield (shares, 0-1) of the ``top`` most tried APIs."""
    rows = sorted(stats.items(), key=lambda kv: (-float(kv[1].get("tried", 0)), kv[0]))[:top]
    return {"apis": [api for api, _ in rows],
            "tried": [int(r.get("tried", 0)) for _, r in rows],
            "valid_rate": [float(r.get("valid_rate", 0)) for _, r in rows],
            "yield": [float(r.get("yield", 0)) for _, r in rows]}


def chart_data(store: Store, bugs: Sequence[BugRow], severity: dict[str, str],
               root_cause: dict[str, str]) -> dict[str, Any]:
    return {"timeline": timeline(store, bugs), "outcomes": outcomes(store),
            "severity": severities(bugs, severity, root_cause),
            "apis": api_rates(store.meta().get("api_stats") or {})}


def _script_text(name: str, text: str) -> str:
    """``text`` (our own JS) as the body of a <script>: it must hold no ``</script`` or
    ``<!--``, which would end or bend the element; rewriting code is no fix, so a
    vendored update that brings one is refused loudly."""
    lowered = text.lower()
    if "</script" in lowered or "<!--" in lowered:
        raise InternalError(f"report/{name} holds '</script' or '<!--' and cannot be "
                            "inlined into the report page")
    return text


def _empty(key: str, data: dict[str, Any]) -> str:
    """Why chart ``key`` has nothing to draw ("" when it has)."""
    if key == "timeline" and len(data["timeline"]["cases"]) < 2:
        return "no batch finished yet"
    if key == "outcomes" and not data["outcomes"]["backends"]:
        return "no backend ran a case yet"
    if key == "apis" and not data["apis"]["apis"]:
        return "this engine keeps no per-API statistics (only the API engines do)"
    return ""


def figures(data: dict[str, Any]) -> str:
    """A box per chart, in page order (``scripts`` fills them); a chart with nothing to
    draw is a line saying why instead of empty axes."""
    boxes = []
    for key, title in CHARTS:
        why = _empty(key, data)
        if why:
            boxes.append(f"<p class='no-chart'>{escape(title)}: {escape(why)}.</p>")
            continue
        boxes.append(
            f"<figure class='chart'><figcaption>{escape(title)}</figcaption>"
            f"<div class='chart-box'><canvas id='chart-{escape(key)}' "
            f"data-chart='{escape(key)}' role='img' aria-label='{escape(title)}'></canvas>"
            f"</div></figure>")
    return f"<h2>Charts</h2><div class='charts'>{''.join(boxes)}</div>"


def scripts(data: dict[str, Any]) -> str:
    """The data, the vendored library and the drawing script, for the end of the body
    (the drawing script also opens the bug section the address names, so the sections
    must be in the page before it runs).

    Each ``<script>`` carries ``data-dlfuzz`` so a test can tell the report's own scripts
    from anything (escaped) that came from library output."""
    package = resources.files("dlfuzz.report")
    library = package.joinpath(VENDORED).read_text(encoding="utf-8")
    drawing = package.joinpath("charts.js").read_text(encoding="utf-8")
    # JSON needs no "<" at all: \u003c keeps it one token for the parser.
    blob = json.dumps(data, separators=(",", ":")).replace("<", "\\u003c")
    return (f"<script type='application/json' id='dlfuzz-data' data-dlfuzz='data'>{blob}"
            "</script>"
            f"<script data-dlfuzz='chart.js'>{_script_text(VENDORED, library)}</script>"
            f"<script data-dlfuzz='charts'>{_script_text('charts.js', drawing)}</script>")
