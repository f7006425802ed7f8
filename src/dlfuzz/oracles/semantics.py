"""Documented semantic differences (``semantics.json``): they demote a finding.

A library may document that it computes something else than the others on some inputs
(XLA's NaN handling in max/min, TF's truncating modulo). Such a disagreement is real but
not a bug a maintainer would take: the finding keeps its place in the list, lower, with
the documentation link in its ``demoted`` detail. Nothing here hides a finding.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from dlfuzz.cases import ApiCase
from dlfuzz.errors import UsageError

TABLE = Path(__file__).with_name("semantics.json")


def _floats(case: ApiCase) -> list[np.ndarray]:
    out = []
    for t in case.tensors:
        a = t.to_numpy()
        if a.dtype.kind in "fiu" or a.dtype.name == "bfloat16":
            out.append(a.astype(np.float64))
    return out


_CONDITIONS: dict[str, Callable[[ApiCase], bool]] = {
    "always": lambda case: True,
    "inputs_hold_nan": lambda case: any(np.isnan(a).any() for a in _floats(case)),
    "inputs_hold_inf": lambda case: any(np.isinf(a).any() for a in _floats(case)),
    "inputs_nonfinite": lambda case: any((~np.isfinite(a)).any() for a in _floats(case)),
    "inputs_hold_negative": lambda case: any((a < 0).any() for a in _floats(case)),
    "inputs_hold_negative_zero": lambda case: any(((a == 0) & np.signbit(a)).any()
                                                  for a in _floats(case)),
}


@dataclass(frozen=True)
class Difference:
    library: str
    mode: str
    pattern: re.Pattern[str]
    condition: str
    kind: str
    link: str
    description: str

    def reason(self) -> str:
        return f"{self.kind}: {self.description} ({self.link})"


@cache
def _table() -> tuple[Difference, ...]:
    try:
        rows = json.loads(TABLE.read_text())["rows"]
    except (OSError, ValueError, KeyError) as exc:
        raise UsageError(f"{TABLE}: cannot read its 'rows' ({exc}); restore the file from "
                         "the repository") from exc
    out = []
    for i, row in enumerate(rows):
        if row.get("condition") not in _CONDITIONS or not row.get("link") or \
                row.get("mode") not in ("compiled", "eager", "any"):
            raise UsageError(f"{TABLE}: row {i} ({row.get('pattern')}) needs a 'condition' "
                             f"in {sorted(_CONDITIONS)}, a 'mode' in compiled/eager/any "
                             "and a 'link'")
        out.append(Difference(row["library"], row["mode"], re.compile(row["pattern"]),
                              row["condition"], row.get("kind", "documented"), row["link"],
                              row["description"]))
    return tuple(out)


def documented_difference(case: ApiCase, library: str, compiled: bool) -> str:
    """The demotion reason of the first matching row for this backend, else ""."""
    call = case.call_for(library) if hasattr(case, "call_for") else None
    names = [case.api] + ([call.target] if call is not None else [])
    mode = "compiled" if compiled else "eager"
    for row in _table():
        if row.library != library or row.mode not in ("any", mode):
            continue
        if any(row.pattern.search(n) for n in names) and _CONDITIONS[row.condition](case):
            return row.reason()
    return ""
