"""What every findings format shows: a campaign's root causes, split by a baseline.

``dlfuzz findings`` builds one ``FindingsView`` and hands it to the writer of the chosen
format (``report.markdown``, ``report.sarif``, ``report.junit``), so every format lists the
same bugs in the same order and draws the same new/known/fixed line.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dlfuzz.triage.baseline import EntryCheck

# Record keys the writers read (``cli.findings_cmd.bug_record`` after ``by_root_cause``):
# id, ids, severity, root_cause, api, guilty_backend, symptom, message, status,
# confirmed, occurrences, places, repro (backend -> absolute script path), dir.
Record = Mapping[str, Any]


@dataclass(frozen=True)
class FindingsView:
    campaign: Path  # the campaign folder, resolved
    label: str  # the folder as the user named it (titles)
    new: tuple[Record, ...]  # one per root cause, most severe first; not in the baseline
    known: tuple[Record, ...]  # the same, for root causes the baseline lists
    absent: tuple[EntryCheck, ...]  # baseline entries this campaign did not show
    baseline: Path | None  # the --baseline file, if one was given
    engine: str = ""
    versions: Mapping[str, str] | None = None  # backend -> library version

    @property
    def fixed(self) -> tuple[EntryCheck, ...]:
        return tuple(c for c in self.absent if c.state == "fixed")


def reproducer_path(record: Record) -> str:
    """The guilty backend's reproducer (the script that exits 1 while the bug is there),
    else the first one; "" when the bug has no folder."""
    repro = record.get("repro") or {}
    guilty = str(record.get("guilty_backend", ""))
    if guilty in repro:
        return str(repro[guilty])
    return str(next(iter(repro.values()), ""))


def backends_of(record: Record) -> list[str]:
    """The backends a root cause showed on, in order (the guilty one when none is listed)."""
    names = [str(p.get("backend")) for p in record.get("places") or [] if p.get("backend")]
    return list(dict.fromkeys(names)) or [str(record.get("guilty_backend", "?"))]


def is_confirmed(record: Record) -> bool:
    return record.get("status") == "confirmed"


def where(places: list[Mapping[str, Any]]) -> str:
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
