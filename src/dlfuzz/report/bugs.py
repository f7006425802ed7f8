"""One bug in the report: its record, case, inputs, outputs per backend with the values
that differ highlighted, the statuses and errors, and each reproducer.

A bug is a ``<details>`` section, and so are its log and reproducers: a campaign with
hundreds of bugs stays fast to open because closed sections are not laid out.

Which values differ is decided the way the judge decides it (``oracles.compare``, the
dtype's tolerance), against a backend that is not the guilty one: the reader sees the
elements the finding is about, not every last-bit difference. The judge also allows for
the inputs' rounding sensitivity, which the report cannot recompute, so an element
highlighted here can be one the judge forgave; the message says what the judge saw.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any

import numpy as np

from dlfuzz.cases.kind import kind_named
from dlfuzz.oracles.compare import bad_elements
from dlfuzz.oracles.tolerances import tolerance_for
from dlfuzz.report.markup import collapsible, kv_table
from dlfuzz.store.db import BugRow, Store

PREVIEW = 64  # input elements shown per tensor
ROWS = 24  # output elements shown per output: a window starting just before the first diff
LEAD = 4  # elements shown before the first differing one
COMPARABLE = "biufc"  # numpy dtype kinds the highlight compares (others are shown only)


@dataclass(frozen=True)
class OutputDiff:
    """One output of every backend, and where each differs from the reference backend."""

    key: str
    reference: str  # the backend the others are compared with ("" : nothing to compare)
    arrays: dict[str, np.ndarray]  # backend -> its value of this output
    differs: dict[str, np.ndarray]  # backend -> flat bool mask (same-shaped outputs only)
    shape_differs: tuple[str, ...]  # backends whose shape or kind is not the reference's

    def first(self) -> int:
        """Flat index of the first element some backend gets differently (-1: none)."""
        hits = [int(np.argmax(m)) for m in self.differs.values() if m.any()]
        return min(hits, default=-1)


def _places(places: list[dict[str, Any]]) -> str:
    return "; ".join(f"{p.get('backend')} {p.get('api')} ({p.get('dtypes')}, "
                     f"{p.get('symptom')}) ×{p.get('count', 1)}" for p in places)


def _preview(path: Path, limit: int = PREVIEW) -> list[tuple[str, str]]:
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


def _load_outputs(folder: Path) -> dict[str, dict[str, np.ndarray]]:
    """backend -> output name -> array, from ``outputs/<backend>.npz``."""
    outputs: dict[str, dict[str, np.ndarray]] = {}
    for path in sorted((folder / "outputs").glob("*.npz")):
        with np.load(path) as data:
            outputs[path.stem] = {k: data[k] for k in data.files}
    return outputs


def _differs(actual: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Flat mask of ``actual``'s elements off ``expected`` beyond ``actual``'s dtype's
    tolerance (``expected`` rounded to that dtype first, as the judge does)."""
    if actual.dtype.kind in "fc" and expected.dtype.kind in "fc":
        expected = expected.astype(actual.dtype)
    tol = tolerance_for(str(actual.dtype))
    return bad_elements(actual, expected, tol).reshape(-1)


def output_diffs(outputs: dict[str, dict[str, np.ndarray]], guilty: str) -> list[OutputDiff]:
    """Per output name: each backend against a backend that is not the guilty one:
    NumPy where it ran (the float64-capable reference library), else the first other
    backend by name."""
    diffs = []
    for key in sorted({k for arrays in outputs.values() for k in arrays}):
        arrays = {b: outs[key] for b, outs in sorted(outputs.items()) if key in outs}
        others = sorted((b for b in arrays if b != guilty), key=lambda b: (b != "numpy", b))
        reference = others[0] if others else ""
        if reference:  # its column first: the one the others are read against
            arrays = {reference: arrays[reference],
                      **{b: a for b, a in arrays.items() if b != reference}}
        differs: dict[str, np.ndarray] = {}
        odd: list[str] = []
        for backend, arr in arrays.items():
            if not reference or backend == reference:
                continue
            ref = arrays[reference]
            if (arr.shape != ref.shape or arr.dtype.kind not in COMPARABLE
                    or ref.dtype.kind not in COMPARABLE):
                odd.append(backend)
            else:
                differs[backend] = _differs(arr, ref)
        diffs.append(OutputDiff(key, reference, arrays, differs, tuple(odd)))
    return diffs


def _value(arr: np.ndarray, index: int) -> str:
    return str(arr.reshape(-1)[index]) if index < arr.size else ""


def _position(shape: tuple[int, ...], index: int) -> str:
    return str([int(i) for i in np.unravel_index(index, shape)]) if shape else "[]"


def diff_table(diff: OutputDiff) -> str:
    """One row per element (a window of ``ROWS`` from just before the first difference),
    one column per backend; a differing value is a ``<mark class='diff'>``."""
    first = diff.first()
    size = max(a.size for a in diff.arrays.values())
    start = max(0, first - LEAD) if first >= ROWS - LEAD else 0
    stop = min(size, start + ROWS)
    ref = diff.arrays.get(diff.reference)
    shape = ref.shape if ref is not None else next(iter(diff.arrays.values())).shape
    counts = [f"{backend}: {int(bad.sum())} of {bad.size} differ"
              for backend, bad in diff.differs.items()]
    counts += [f"{b}: shape or kind differs ({diff.arrays[b].dtype}"
               f"{list(diff.arrays[b].shape)})" for b in diff.shape_differs]
    against = f" from {diff.reference} (reference)" if diff.reference else ""
    caption = (f"{diff.key}: " + ("; ".join(counts) or "one backend only") + against
               + (f"; elements {start}–{stop - 1} of {size} shown" if size else ""))
    head = "".join(
        f"<th>{escape(b)} {escape(str(a.dtype))}{escape(str(list(a.shape)))}"
        f"{' (reference)' if b == diff.reference else ''}</th>"
        for b, a in diff.arrays.items())
    rows = []
    for i in range(start, stop):
        cells = []
        for backend, arr in diff.arrays.items():
            text = escape(_value(arr, i))
            mask = diff.differs.get(backend)
            if backend in diff.shape_differs or (mask is not None and i < mask.size
                                                 and mask[i]):
                text = f"<mark class='diff'>{text}</mark>"
            cells.append(f"<td>{text}</td>")
        rows.append(f"<tr><th>{escape(_position(shape, i))}</th>{''.join(cells)}</tr>")
    return (f"<table class='outputs'><caption>{escape(caption)}</caption>"
            f"<tr><th>element</th>{head}</tr>{''.join(rows)}</table>")


def bug_section(store: Store, bug: BugRow, severity: str, root_cause: str,
                places: list[dict[str, Any]], is_open: bool = False) -> str:
    """The bug's ``<details id=ID>``; ``is_open`` for the few shown unfolded."""
    summary = (f"<strong>{escape(bug.id)}</strong>: "
               f"<span class='{escape(severity)}'>{escape(severity)}</span> — "
               f"{escape(bug.symptom)} in {escape(bug.guilty_backend or '?')} — "
               f"{escape(bug.api)} <span class='{escape(bug.status)}'>"
               f"({escape(bug.status)})</span>")
    parts = [kv_table([("severity", severity), ("root cause", root_cause),
                       ("places", _places(places)), ("status", bug.status),
                       ("stage", bug.stage), ("message", bug.message),
                       ("occurrences", bug.occurrences),
                       ("confirmation", f"{bug.confirm_hits}/{bug.confirm_runs} re-runs"),
                       ("signature", bug.signature)])]
    parts.extend(_folder_parts(store, bug))
    opened = " open" if is_open else ""
    return (f"<details class='bug' id='{escape(bug.id)}'{opened}><summary>{summary}"
            f"</summary>{''.join(parts)}</details>")


def _folder_parts(store: Store, bug: BugRow) -> list[str]:
    folder = store.root / bug.dir if bug.dir else None
    if folder is None or not (folder / "meta.json").is_file():
        return ["<p>No folder (only confirmed bugs get one).</p>"]
    meta = json.loads((folder / "meta.json").read_text())
    parts = []
    if (folder / "issue.md").is_file():
        parts.append(f"<p>Issue-ready report: <code>{escape(str(folder / 'issue.md'))}"
                     "</code></p>")
    if meta.get("reduced"):
        parts.append(f"<p>Reduced in {escape(str(meta.get('reduce_runs')))} runs.</p>")
    parts.append(collapsible("Case", "<pre>" + escape((folder / "case.json").read_text())
                             + "</pre>"))
    # What a bug of this kind shows besides (its calls, model, program); a folder written
    # before bug folders recorded their kind shows the generic parts only.
    if meta.get("case_kind"):
        parts.append(kind_named(str(meta["case_kind"])).report_section(folder, meta))
    parts.append("<h3>Inputs</h3>" + kv_table(_preview(folder / "inputs.npz")))
    parts.append("<h3>Outputs per backend</h3>")
    outputs = _load_outputs(folder)
    if bug.guilty_backend and outputs and bug.guilty_backend not in outputs:
        parts.append(f"<p>{escape(bug.guilty_backend)} gave no output (its status is in "
                     "the log below).</p>")
    parts.extend(diff_table(d) for d in output_diffs(outputs, bug.guilty_backend))
    log_file = folder / "error.log"
    log = log_file.read_text(errors="replace") if log_file.is_file() else ""
    parts.append(collapsible("Statuses and errors",
                             "<pre>" + escape(log[-20000:]) + "</pre>"))
    for backend, name in sorted(meta.get("repro", {}).items()):
        text = (folder / name).read_text()
        parts.append(collapsible(
            f"Reproducer for {escape(backend)} (<code>{escape(str(folder / name))}</code>)",
            f"<pre>{escape(text)}</pre>", css="repro"))
    return parts
