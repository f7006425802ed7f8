"""The CI gate shared by ``dlfuzz run`` and ``dlfuzz findings``: ``--fail-on``,
``--baseline`` and the re-check of baseline entries.

``--fail-on SEVERITY`` makes the command exit 1 when the campaign holds a *confirmed* bug
whose class is SEVERITY or more severe (``triage.severity.SEVERITIES`` order: crash,
wrong-result, special-value, inconsistency, validation, performance) and whose root cause
is not in the ``--baseline`` file; 0 otherwise. Flaky findings never fail the gate: a
maintainer would close them.

Re-checking whether a baseline entry is fixed costs one reproducer run (a subprocess that
imports the library) per entry the campaign did *not* find again; an entry it found again
is evidently still there. ``findings --baseline`` does it by default (the report is where
fixed bugs are wanted) and ``--no-check-fixed`` skips it; ``run --baseline`` does it only
with ``--check-fixed`` (a CI job usually calls ``findings`` next anyway).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from dlfuzz.settings import CampaignSettings
from dlfuzz.triage.baseline import Baseline, EntryCheck, ReproEnv, check_entry, not_seen
from dlfuzz.triage.severity import SEVERITIES, rank

EXIT_CODES = """exit status:
  0    success; with --fail-on: no new confirmed bug at or above that severity
  1    with --fail-on: new confirmed bug(s) at or above it (root causes not in
       --baseline); also another failure dlfuzz reports (`reproduce`: the bug is still
       there; a backend that cannot start)
  2    usage error: a bad argument, file or folder (one line names it and the fix)
  3    internal error of dlfuzz (one line names the file holding the traceback)
  130  interrupted (Ctrl-C, SIGTERM); `dlfuzz run --resume DIR` continues"""


def add_gate_arguments(p: argparse.ArgumentParser, check_by_default: bool) -> None:
    p.add_argument("--fail-on", choices=SEVERITIES, metavar="SEVERITY",
                   help="exit 1 when a new confirmed bug is of this class or a more severe "
                        f"one ({', '.join(SEVERITIES)}, most severe first)")
    p.add_argument("--baseline", type=Path, metavar="FILE",
                   help="known root causes (written by `dlfuzz baseline`): listed apart, "
                        "never failing --fail-on; entries not found again are re-checked "
                        "with their reproducer and reported fixed when it passes")
    if check_by_default:
        p.add_argument("--no-check-fixed", dest="check_fixed", action="store_false",
                       help="with --baseline: do not run the reproducers of baseline "
                            "entries this campaign did not find again")
    else:
        p.add_argument("--check-fixed", action="store_true",
                       help="with --baseline: run the reproducer of each baseline entry "
                            "this campaign did not find again, and report the fixed ones")


def at_or_above(severity: str, threshold: str) -> bool:
    return rank(severity) <= rank(threshold)


def failing(new: Iterable[Mapping[str, Any]], fail_on: str | None) -> list[Mapping[str, Any]]:
    """The new confirmed root causes that fail the gate (none without ``--fail-on``)."""
    if fail_on is None:
        return []
    return [r for r in new
            if r.get("status") == "confirmed" and at_or_above(str(r["severity"]), fail_on)]


def gate_code(new: Sequence[Mapping[str, Any]], fail_on: str | None, known: int) -> int:
    """0 or 1, with one line on stderr saying why (stdout may be JSON or SARIF)."""
    if fail_on is None:
        return 0
    bad = failing(new, fail_on)
    also = f"; {known} known root cause(s) in the baseline not counted" if known else ""
    if not bad:
        print(f"dlfuzz: gate --fail-on {fail_on}: passed, no new confirmed bug at or above "
              f"{fail_on}{also}", file=sys.stderr)
        return 0
    keys = ", ".join(f"{r['root_cause']} ({r['severity']}, {r['id']})" for r in bad[:10])
    more = f" and {len(bad) - 10} more" if len(bad) > 10 else ""
    print(f"dlfuzz: gate --fail-on {fail_on}: FAILED, {len(bad)} new confirmed root "
          f"cause(s) at or above {fail_on}: {keys}{more}{also}", file=sys.stderr)
    return 1


def absent_entries(baseline: Baseline | None, records: Iterable[Mapping[str, Any]],
                   settings: CampaignSettings, check: bool) -> list[EntryCheck]:
    """Baseline entries the campaign did not confirm again, each re-checked with its
    reproducer when ``check`` (in the campaign's interpreter and with its preloads for that
    backend, as ``dlfuzz reproduce`` runs scripts), else marked ``not-checked``."""
    seen = {str(r["root_cause"]) for r in records if r.get("status") == "confirmed"}
    entries = not_seen(baseline, seen)
    if not check:
        return [EntryCheck(e, "not-checked", "not re-checked (--check-fixed runs its "
                           "reproducer)") for e in entries]
    if entries:
        print(f"dlfuzz: re-checking {len(entries)} baseline entr"
              f"{'y' if len(entries) == 1 else 'ies'} not found in this campaign "
              "(one reproducer each)", file=sys.stderr, flush=True)
    pythons = dict(settings.pythons)
    preload: dict[str, list[str]] = {}
    for backend, module in settings.preload:
        preload.setdefault(backend, []).append(module)
    checks = []
    for e in entries:
        backend = e.reproducer.backend if e.reproducer else e.guilty_backend
        env = ReproEnv(pythons.get(backend) or sys.executable, tuple(preload.get(backend, [])))
        checks.append(check_entry(e, env, settings.case_timeout_s))
    return checks
