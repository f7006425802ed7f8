"""Precision of dlfuzz's confirmed bugs, scored against a hand-labelled corpus.

dlfuzz's users paste its reports into upstream trackers, so what matters is how many of
them a maintainer would keep open. This benchmark runs fixed campaigns (fixed seed, fixed
backends, ``--budget`` seconds each), reads each campaign's bugs through the CLI
(``dlfuzz findings DIR --json --all``, the interface users script against), groups the
confirmed ones by root cause and looks every root cause up in ``benchmarks/labels/``
(root-cause key -> real | low-value | false, a reason, what was checked, an upstream
link where upstream has spoken). It prints, per campaign and overall: confirmed root
causes, how many are labelled real / low-value / false, precision (real / labelled) per
severity class and overall, precision of crash + wrong-result, and every unlabelled root
cause with its reproducers so a person can label it.

Campaigns (the three of issue 13 plus the model engine):
  a  API engine on numpy, torch, jax, tf
  b  API engine on tfjs-cpu, tfjs-wasm and tf (TF.js 4.22.0)
  c  program engine on keras-tf, keras-jax, keras-torch (the nine built-in Keras
     seeds, batches of 8 programs)
  d  model engine (LEMON on LeNet-5) on torch, jax, tf, ort, ort-noopt

Root-cause keys: the ``root_cause`` field of ``findings --json``; where a campaign's
listing has none (campaigns stored before triage computed it), the key is derived as
``<library of the guilty backend>/<api>/<symptom>`` and the output says so. A label may
list ``aliases`` (other keys of the same mechanism, such as its derived key) so that it
keeps matching when the key scheme changes.

Run: ``.venv/bin/python benchmarks/precision.py [--budget 600] [--only a,b]
[--out DIR] [--from DIR] [--labels DIR]``. ``--from DIR`` scores campaign folders
``DIR/a``, ``DIR/b``, ... that an earlier ``--out DIR`` kept, without running anything.
Numbers go to docs/precision.md by hand.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from corpus import read_folder
from dlfuzz.errors import UsageError

LABELS = Path(__file__).resolve().parent / "labels"
VERDICTS = ("real", "low-value", "false")
# Reporting order of the severity classes, as `dlfuzz findings` lists them (issue 13):
# what a maintainer reads first. A root cause seen in several classes counts in the first.
SEVERITIES = ("crash", "wrong-result", "special-value", "inconsistency", "validation",
              "performance")
UNKNOWN_SEVERITY = "(no severity)"
HIGH = ("crash", "wrong-result")  # the classes that must be >= 90% real


KERAS_SEEDS = ("keras_lenet", "keras_alexnet", "keras_vgg", "keras_googlenet",
               "keras_resnet18", "keras_mobilenet", "keras_squeezenet", "keras_pointnet",
               "keras_lstm")


@dataclass(frozen=True)
class Campaign:
    """One fixed campaign: the ``dlfuzz run`` arguments besides budget and folder."""

    name: str
    title: str
    args: tuple[str, ...]


CAMPAIGNS = {c.name: c for c in (
    Campaign("a", "API engine on numpy, torch, jax, tf",
             ("--engine", "api", "--backends", "numpy,torch,jax,tf", "--seed", "1")),
    Campaign("b", "API engine on tfjs-cpu, tfjs-wasm, tf (TF.js 4.22.0)",
             ("--engine", "api", "--backends", "tfjs-cpu,tfjs-wasm,tf",
              "--tfjs-version", "4.22.0", "--seed", "1")),
    # Small batches: a program trains a model on three backends, so a default batch of
    # 256 does not finish within a short budget and the campaign would judge nothing.
    # The Keras seeds only: with no --seed-program the engine takes every built-in seed
    # and adds the torch backend for the torch ones (most of a 600 s run went there).
    Campaign("c", "program engine on keras-tf, keras-jax, keras-torch (Keras seeds)",
             ("--engine", "program", "--backends", "keras-tf,keras-jax,keras-torch",
              *(arg for seed in KERAS_SEEDS for arg in ("--seed-program", seed)),
              "--batch-size", "8", "--seed", "1")),
    Campaign("d", "model engine (LEMON, LeNet-5) on torch, jax, tf, ort, ort-noopt",
             ("--engine", "model", "--method", "lemon", "--seed-model", "lenet5",
              "--backends", "torch,jax,tf,ort,ort-noopt", "--seed", "1")),
)}


# ---- the label corpus ------------------------------------------------------------------
@dataclass(frozen=True)
class Label:
    """A person's verdict on one root cause, with why and how it was reached."""

    key: str
    verdict: str
    reason: str
    checked: str
    upstream: str = ""
    aliases: tuple[str, ...] = ()
    file: str = ""


_FIELDS = {"verdict", "reason", "checked", "upstream", "aliases"}


def load_labels(folder: Path = LABELS) -> dict[str, Label]:
    """Every label of every ``*.json`` file in ``folder``, by key and by alias.

    Each file is ``{"labels": {KEY: {"verdict", "reason", "checked"[, "upstream"]
    [, "aliases"]}}}`` (a ``"about"`` string may say what the file covers). A malformed
    file or entry is a ``UsageError`` naming the file, the key and the fix, because a
    silently skipped label would make the precision look better or worse than it is.
    A key (or alias) given twice, in one file or two, is an error too: two verdicts on
    one root cause cannot both count.
    """
    out: dict[str, Label] = {}
    for path, labels in read_folder(folder, "labels", dict, "root-cause key -> entry",
                                    "--labels", "label"):
        for key, entry in labels.items():
            label = _label(path, key, entry)
            for k in (label.key, *label.aliases):
                if k in out:
                    raise UsageError(f"{path}: key {k!r} is labelled already (in "
                                     f"{out[k].file}, entry {out[k].key!r}); keep one")
                out[k] = label
    return out


def _label(path: Path, key: str, entry: Any) -> Label:
    where = f"{path}: label {key!r}"
    if not key.strip() or key != key.strip():
        raise UsageError(f"{where}: the key must be non-empty without surrounding spaces")
    if not isinstance(entry, dict):
        raise UsageError(f"{where}: needs an object with verdict, reason, checked")
    unknown = set(entry) - _FIELDS
    if unknown:
        raise UsageError(f"{where}: unknown field(s) {sorted(unknown)}; allowed: "
                         f"{', '.join(sorted(_FIELDS))}")
    verdict = entry.get("verdict")
    if verdict not in VERDICTS:
        raise UsageError(f"{where}: verdict {verdict!r} is not one of "
                         f"{', '.join(VERDICTS)}")
    for name in ("reason", "checked"):
        value = entry.get(name)
        if not isinstance(value, str) or not value.strip():
            raise UsageError(f"{where}: {name} must be a non-empty string (say "
                             + ("why a maintainer would give this verdict)" if name == "reason"
                                else "what was done: repro run, docs read, thread read)"))
        if "\n" in value:
            raise UsageError(f"{where}: {name} must be one line")
    upstream = entry.get("upstream", "")
    if not isinstance(upstream, str) or (upstream and not upstream.startswith("https://")):
        raise UsageError(f"{where}: upstream {upstream!r} must be an https:// link or absent")
    aliases = entry.get("aliases", [])
    if not isinstance(aliases, list) or not all(isinstance(a, str) and a.strip()
                                                for a in aliases):
        raise UsageError(f"{where}: aliases must be a list of non-empty key strings")
    return Label(key, verdict, entry["reason"], entry["checked"], upstream,
                 tuple(aliases), path.name)


# ---- reading a campaign ----------------------------------------------------------------
@dataclass
class RootCause:
    """The confirmed bugs of one campaign that share a root-cause key."""

    key: str
    derived: str
    severity: str
    bugs: list[dict[str, Any]] = field(default_factory=list)


def library_of(backend: str | None) -> str:
    """The library a backend runs (tf-xla -> tf), for keys derived without triage's."""
    from dlfuzz.libraries import of_backend

    lib = of_backend(backend or "")
    return lib.name if lib is not None else (backend or "?")


def derived_key(bug: Mapping[str, Any]) -> str:
    """``<library>/<api>/<symptom>``: the fallback root-cause key of a bug."""
    return f"{library_of(bug.get('guilty_backend'))}/{bug.get('api') or '?'}/" \
           f"{bug.get('symptom') or '?'}"


def list_bugs(campaign_dir: Path) -> list[dict[str, Any]]:
    """``dlfuzz findings DIR --json --all`` of one campaign, through the CLI."""
    proc = subprocess.run([sys.executable, "-m", "dlfuzz", "findings", str(campaign_dir),
                           "--json", "--all"], capture_output=True, text=True)
    if proc.returncode != 0:
        raise UsageError(f"{campaign_dir}: `dlfuzz findings --json --all` failed "
                         f"(exit {proc.returncode}): {proc.stderr.strip()[-400:]}")
    bugs = json.loads(proc.stdout)
    assert isinstance(bugs, list), bugs
    return bugs


def root_causes(bugs: Iterable[Mapping[str, Any]]) -> tuple[list[RootCause], int]:
    """Confirmed bugs grouped by root cause (first seen first), and how many of the
    groups are keyed by the derived key because their bugs carry no ``root_cause``."""
    groups: dict[str, RootCause] = {}
    for bug in bugs:
        if bug.get("status", "confirmed" if bug.get("confirmed") else "") != "confirmed":
            continue
        key = bug.get("root_cause") or ""
        dkey = derived_key(bug)
        rc = groups.setdefault(key or dkey, RootCause(key or dkey, dkey,
                                                      UNKNOWN_SEVERITY))
        rc.bugs.append(dict(bug))
        severity = bug.get("severity") or UNKNOWN_SEVERITY
        rc.severity = min(rc.severity, severity, key=_severity_rank)
    derived = sum(not any(b.get("root_cause") for b in rc.bugs) for rc in groups.values())
    return list(groups.values()), derived


def _severity_rank(severity: str) -> int:
    return SEVERITIES.index(severity) if severity in SEVERITIES else len(SEVERITIES)


def label_for(rc: RootCause, labels: Mapping[str, Label]) -> Label | None:
    """The label of a root cause: by its key, else by its derived key."""
    return labels.get(rc.key) or labels.get(rc.derived)


# ---- scoring ---------------------------------------------------------------------------
@dataclass
class Tally:
    """Verdict counts of a set of root causes."""

    total: int = 0
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(VERDICTS, 0))

    def add(self, verdict: str | None) -> None:
        self.total += 1
        if verdict is not None:
            self.counts[verdict] += 1

    @property
    def labelled(self) -> int:
        return sum(self.counts.values())

    def precision(self) -> str:
        """``real/labelled = p%``, or ``-`` when nothing is labelled."""
        n = self.labelled
        if n == 0:
            return "-"
        return f"{self.counts['real']}/{n} = {100 * self.counts['real'] / n:.0f}%"

    def line(self) -> str:
        c = self.counts
        return (f"{self.total} root causes, {self.labelled} labelled: {c['real']} real, "
                f"{c['low-value']} low-value, {c['false']} false, "
                f"{self.total - self.labelled} unlabelled; precision {self.precision()}")


@dataclass
class Score:
    """A set of root causes scored: overall, per severity class, crash + wrong-result."""

    overall: Tally = field(default_factory=Tally)
    by_severity: dict[str, Tally] = field(default_factory=dict)
    high: Tally = field(default_factory=Tally)
    unlabelled: list[RootCause] = field(default_factory=list)
    # Root causes whose own key has no label but whose derived key has one: worth an
    # alias in the corpus, and a hint that two mechanisms may share the derived key.
    by_derived: list[RootCause] = field(default_factory=list)


def score(causes: Sequence[RootCause], labels: Mapping[str, Label]) -> Score:
    out = Score()
    for rc in causes:
        label = label_for(rc, labels)
        verdict = label.verdict if label else None
        out.overall.add(verdict)
        out.by_severity.setdefault(rc.severity, Tally()).add(verdict)
        if rc.severity in HIGH:
            out.high.add(verdict)
        if label is None:
            out.unlabelled.append(rc)
        elif rc.key != rc.derived and rc.key not in labels:
            out.by_derived.append(rc)
    return out


def report(title: str, s: Score, indent: str = "  ") -> list[str]:
    lines = [f"{title}: {s.overall.line()}"]
    for sev in (*SEVERITIES, UNKNOWN_SEVERITY):
        if sev in s.by_severity:
            lines.append(f"{indent}{sev:14s} {s.by_severity[sev].line()}")
    lines.append(f"{indent}{'crash+wrong':14s} precision {s.high.precision()} "
                 f"({s.high.total} root causes, {s.high.labelled} labelled)")
    return lines


def unlabelled_lines(causes: Sequence[RootCause], indent: str = "  ") -> list[str]:
    lines = []
    for rc in causes:
        bug = rc.bugs[0]
        others = f" (+{len(rc.bugs) - 1} more bugs)" if len(rc.bugs) > 1 else ""
        lines.append(f"{indent}{rc.key}  [{rc.severity}] bug {bug.get('id')} "
                     f"({bug.get('guilty_backend') or '?'}){others}: "
                     f"{' '.join(str(bug.get('message', '')).split())[:160]}")
        if rc.key != rc.derived:
            lines.append(f"{indent}    derived key: {rc.derived}")
        for backend, path in sorted((bug.get("repro") or {}).items()):
            lines.append(f"{indent}    repro {backend}: {path}")
        if not bug.get("repro") and bug.get("dir"):
            lines.append(f"{indent}    folder: {bug['dir']}")
    return lines


# ---- running ---------------------------------------------------------------------------
def run_campaign(c: Campaign, budget: float, out: Path) -> float:
    """``dlfuzz run`` of one fixed campaign into ``out``; the wall seconds it took."""
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "dlfuzz", "run", *c.args, "--budget",
                           f"{budget:.0f}s", "--out", str(out), "--quiet"],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise UsageError(f"campaign {c.name} ({c.title}) failed with exit "
                         f"{proc.returncode}: {proc.stderr.strip()[-600:]}")
    return time.perf_counter() - t0


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=float, default=600.0, help="seconds per campaign")
    ap.add_argument("--only", default=",".join(CAMPAIGNS),
                    help=f"campaigns to run or score ({', '.join(CAMPAIGNS)})")
    ap.add_argument("--out", type=Path, default=None,
                    help="keep the campaign folders as DIR/<name> (default: a temp dir)")
    ap.add_argument("--from", dest="source", type=Path, default=None,
                    help="score the campaign folders DIR/<name> without running")
    ap.add_argument("--labels", type=Path, default=LABELS, help="label corpus folder")
    args = ap.parse_args(argv)
    names = [n for n in args.only.split(",") if n]
    for n in names:
        if n not in CAMPAIGNS:
            raise UsageError(f"--only {args.only}: unknown campaign {n!r}; choose from "
                             f"{', '.join(CAMPAIGNS)}")
    if args.source is not None and args.out is not None:
        raise UsageError("--from and --out: give one (--from scores kept folders, --out "
                         "keeps the folders of new runs)")
    labels = load_labels(args.labels)
    n_labels = len({lb.key for lb in labels.values()})
    print(f"labels: {n_labels} root causes in {args.labels}")
    root = args.source or args.out or Path(tempfile.mkdtemp(prefix="dlfuzz-precision-"))
    everything: dict[str, RootCause] = {}
    for name in names:
        c = CAMPAIGNS[name]
        folder = root / name
        if args.source is None:
            spent = run_campaign(c, args.budget, folder)
            print(f"\ncampaign {name}: {c.title}, budget {args.budget:.0f} s, "
                  f"{spent:.0f} s wall with start-up and triage, in {folder}")
        else:
            print(f"\ncampaign {name}: {c.title}, scored from {folder}")
        bugs = list_bugs(folder)
        causes, n_derived = root_causes(bugs)
        flaky = sum(b.get("status") != "confirmed" for b in bugs)
        print(f"  {len(bugs)} bugs listed ({flaky} not confirmed, left out), "
              f"{sum(len(rc.bugs) for rc in causes)} confirmed in {len(causes)} root causes")
        if n_derived:
            print(f"  {n_derived} of {len(causes)} root causes without a root_cause field "
                  "in the listing: keyed <library>/<api>/<symptom> here")
        s = score(causes, labels)
        print("\n".join(report(f"  campaign {name}", s, "    ")))
        for rc in s.by_derived:
            print(f"    {rc.key}: labelled through its derived key {rc.derived} "
                  "(add the key as an alias)")
        if s.unlabelled:
            print(f"  unlabelled root causes of campaign {name} (label them in "
                  f"{args.labels}):")
            print("\n".join(unlabelled_lines(s.unlabelled, "    ")))
        for rc in causes:
            if rc.key in everything:
                everything[rc.key].bugs.extend(rc.bugs)
                everything[rc.key].severity = min(everything[rc.key].severity, rc.severity,
                                                  key=_severity_rank)
            else:
                everything[rc.key] = RootCause(rc.key, rc.derived, rc.severity, list(rc.bugs))
    print()
    total = score(list(everything.values()), labels)
    print("\n".join(report(f"overall ({', '.join(names)})", total)))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
