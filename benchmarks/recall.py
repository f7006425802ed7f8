"""Recall of dlfuzz on real, still-open bugs of the installed releases (and planted ones).

dlfuzz exists to find bugs; this benchmark says how many known ones it finds. The bugs
are in ``benchmarks/recall/bugs/*.json``: each was reported upstream (its link), and
each has a standalone trigger that reproduces it here (``--verify`` runs them all). A
bug names the library backend that shows it, its API (dlfuzz's spelling: the spec name,
or the layer/op at model level), and the severity classes that count as finding it.

Unaided (the default): one campaign per engine and backend mix, with dlfuzz's default
settings, no ``--apis`` and nothing from the benchmark: the benchmark measures, it never
feeds the generator. A bug counts as found when a confirmed bug of the campaign (or one
of its places, after root-cause dedup) is on the bug's backend and API with one of its
severity classes; the time to the first hit is when that bug row was stored, counted
from the campaign's start (worker start-up included, a few seconds).

``--directed``: one short campaign per API-level bug in the specs, with ``--apis`` set to
the bug's API (what a maintainer checking one API would run); prints the time to the
first hit and the median.

``--planted``: the planted bugs of the test suite (``tests/planted``), each in an
unaided campaign over all specs with its module preloaded in the worker.

Run: ``.venv/bin/python benchmarks/recall.py [--budget 1200] [--only api,tfjs]
[--out DIR] [--from DIR] [--directed [--directed-budget 120]] [--planted
[--planted-budget 300]] [--verify]``. Numbers go to docs/recall.md by hand.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from corpus import read_folder
from dlfuzz.errors import UsageError
from precision import Campaign

HERE = Path(__file__).resolve().parent
BUGS = HERE / "recall" / "bugs"
ROOT = HERE.parent
PLANTED = ROOT / "tests" / "planted"
TFJS_CACHE = Path.home() / ".cache" / "dlfuzz" / "tfjs"
SEVERITIES = ("crash", "wrong-result", "special-value", "inconsistency", "validation",
              "performance")
LEVELS = ("api", "model", "program")
KINDS = ("crash", "wrong-result", "nan-inf", "validation", "compile-mode")
_REQUIRED = ("id", "library", "level", "kind", "upstream", "title", "reproduces_on", "api",
             "backend", "severity", "symptom", "trigger_lang", "trigger", "verify")
_OPTIONAL = ("reported_on", "tfjs_version", "in_specs", "campaign", "note")


# ---- the bugs ------------------------------------------------------------------------------
@dataclass(frozen=True)
class KnownBug:
    """One upstream bug, with what dlfuzz should report for it (see the module doc)."""

    id: str
    library: str
    level: str
    kind: str
    upstream: str
    title: str
    api: str
    backend: str
    severity: tuple[str, ...]
    symptom: str
    trigger_lang: str
    trigger: str
    verify: str
    reproduces_on: str = ""
    reported_on: str = ""
    tfjs_version: str | None = None
    in_specs: bool = True
    campaign: str = ""
    note: str = ""
    file: str = ""

    @property
    def campaign_name(self) -> str:
        """The unaided campaign that should find it (an entry may name its own)."""
        if self.campaign:
            return self.campaign
        if self.level == "model":
            return "model"
        if self.level == "program":
            return "program"
        if self.backend.startswith("tfjs-"):
            version = self.tfjs_version or ""
            return f"tfjs-{version}" if version and version != DEFAULT_TFJS else "tfjs"
        if self.backend in ("torch-compile", "jax-jit", "tf-xla"):
            return "api-compiled"
        return "api"


DEFAULT_TFJS = "4.22.0"


def load_bugs(folder: Path = BUGS) -> list[KnownBug]:
    """Every entry of every ``*.json`` in ``folder`` (``{"bugs": [...]}``); a malformed
    entry is a UsageError naming the file, the entry and the key."""
    out: list[KnownBug] = []
    seen: dict[str, str] = {}
    for path, entries in read_folder(folder, "bugs", list, "the known bugs", "--bugs",
                                     "bug"):
        for i, entry in enumerate(entries):
            bug = _bug(path, i, entry)
            if bug.id in seen:
                raise UsageError(f"{path}: bug id {bug.id!r} is used already in "
                                 f"{seen[bug.id]}; give each bug its own id")
            seen[bug.id] = path.name
            out.append(bug)
    return out


def _bug(path: Path, index: int, entry: Any) -> KnownBug:
    where = f"{path}: bugs[{index}]"
    if not isinstance(entry, dict):
        raise UsageError(f"{where}: an entry must be an object")
    missing = [k for k in _REQUIRED if not entry.get(k)]
    if missing:
        raise UsageError(f"{where} ({entry.get('id', '?')}): missing {', '.join(missing)}")
    unknown = set(entry) - set(_REQUIRED) - set(_OPTIONAL)
    if unknown:
        raise UsageError(f"{where} ({entry['id']}): unknown key(s) {sorted(unknown)}")
    severity = entry["severity"]
    if isinstance(severity, str):
        severity = [severity]
    bad = [s for s in severity if s not in SEVERITIES]
    if bad:
        raise UsageError(f"{where} ({entry['id']}): severity {bad} unknown; use "
                         f"{', '.join(SEVERITIES)}")
    for key, allowed in (("level", LEVELS), ("kind", KINDS),
                         ("trigger_lang", ("python", "js")), ("verify", ("signal", "stdout"))):
        if entry[key] not in allowed:
            raise UsageError(f"{where} ({entry['id']}): {key} {entry[key]!r}; use one of "
                             f"{', '.join(allowed)}")
    if not str(entry["upstream"]).startswith("https://github.com/"):
        raise UsageError(f"{where} ({entry['id']}): upstream must be a GitHub issue link")
    values = {k: entry[k] for k in _REQUIRED + _OPTIONAL if k in entry}
    values["severity"] = tuple(severity)
    values["in_specs"] = bool(entry.get("in_specs", True))
    return KnownBug(file=path.name, **values)


# ---- campaigns -------------------------------------------------------------------------------
CAMPAIGNS = {c.name: c for c in (
    Campaign("api", "API engine on numpy, torch, jax, tf",
             ("--engine", "api", "--backends", "numpy,torch,jax,tf")),
    Campaign("api-compiled", "API engine on torch, torch-compile, jax, jax-jit, tf, tf-xla",
             ("--engine", "api", "--backends",
              "torch,torch-compile,jax,jax-jit,tf,tf-xla")),
    Campaign("tfjs", f"API engine on tfjs-cpu, tfjs-wasm, tf (TF.js {DEFAULT_TFJS})",
             ("--engine", "api", "--backends", "tfjs-cpu,tfjs-wasm,tf",
              "--tfjs-version", DEFAULT_TFJS)),
    Campaign("tfjs-4.1.0", "API engine on tfjs-cpu, tfjs-wasm, tf (TF.js 4.1.0)",
             ("--engine", "api", "--backends", "tfjs-cpu,tfjs-wasm,tf",
              "--tfjs-version", "4.1.0")),
    Campaign("model", "model engine (defaults) on torch, torch-compile, jax, jax-jit, tf, "
             "tf-xla, ort, ort-noopt",
             ("--engine", "model", "--backends",
              "torch,torch-compile,jax,jax-jit,tf,tf-xla,ort,ort-noopt")),
    Campaign("program", "program engine (defaults) on keras-tf, keras-jax, keras-torch",
             ("--engine", "program", "--backends", "keras-tf,keras-jax,keras-torch",
              "--batch-size", "8")),
)}


def run_campaign(args: Sequence[str], out: Path, budget_s: float, seed: int,
                 extra: Sequence[str] = (), env: dict[str, str] | None = None) -> float:
    """``dlfuzz run`` into ``out``; returns the wall seconds it took."""
    cmd = [sys.executable, "-m", "dlfuzz", "run", *args, "--seed", str(seed), "--budget",
           f"{int(budget_s)}s", "--out", str(out), "--quiet", *extra]
    t0 = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env,
                          timeout=budget_s * 3 + 900)
    if proc.returncode not in (0, 130):
        raise UsageError(f"campaign {' '.join(cmd)} failed ({proc.returncode}):\n"
                         f"{proc.stderr[-2000:]}")
    return time.time() - t0


# ---- scoring ------------------------------------------------------------------------------
@dataclass
class Hit:
    bug_id: str
    root_cause: str
    seconds: float


@dataclass
class CampaignBugs:
    """The confirmed bugs of a campaign folder, with when each was stored."""

    started: float
    rows: list[dict[str, Any]] = field(default_factory=list)


def read_campaign(folder: Path) -> CampaignBugs:
    from dlfuzz.store.db import Store

    store = Store.open(folder)
    try:
        started = float(store.meta().get("created_at", 0.0))
        rows = []
        for row in store.bugs():
            if row.status not in ("confirmed", "duplicate"):
                continue
            places = list(row.places or [])
            rows.append({"id": row.id, "api": row.api, "backend": row.guilty_backend,
                         "severity": row.severity, "root_cause": row.root_cause,
                         "places": places, "created_at": row.created_at,
                         "updated_at": row.updated_at,
                         "suspect_op": str(row.details.get("suspect_op", ""))})
        return CampaignBugs(started, rows)
    finally:
        store.close()


def _same_api(ours: str, theirs: str) -> bool:
    a, b = ours.lower(), theirs.lower()
    return a == b or a.endswith("." + b) or b.endswith("." + a)


def match(bug: KnownBug, found: CampaignBugs) -> Hit | None:
    """The earliest confirmed bug of the campaign that is this known bug."""
    best: Hit | None = None
    for row in found.rows:
        if row["severity"] not in bug.severity:
            continue
        when = None
        apis = (row["api"], row["suspect_op"])
        if row["backend"] == bug.backend and any(_same_api(a, bug.api) for a in apis if a):
            when = row["created_at"]
        else:
            for place in row["places"]:
                if place.get("backend") == bug.backend and _same_api(
                        str(place.get("api", "")), bug.api):
                    when = row["updated_at"]  # a later place: at the latest by then
                    break
        if when is None:
            continue
        hit = Hit(row["id"], row["root_cause"], max(0.0, when - found.started))
        if best is None or hit.seconds < best.seconds:
            best = hit
    return best


# ---- verification of the triggers ------------------------------------------------------------
def verify(bug: KnownBug, timeout: float = 180) -> tuple[bool, str]:
    """Whether the bug's trigger shows the bug here (as its ``verify`` says)."""
    if bug.trigger_lang == "python":
        cmd = [sys.executable, "-c", bug.trigger]
        env = None
    else:
        version = bug.tfjs_version or DEFAULT_TFJS
        modules = TFJS_CACHE / version / "node_modules"
        if not modules.is_dir():
            return False, f"TF.js {version} not installed (run `dlfuzz tfjs install {version}`)"
        cmd = ["node", "-e", bug.trigger]
        env = dict(os.environ, NODE_PATH=str(modules))
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return False, "timed out"
    if bug.verify == "signal":
        ok = proc.returncode < 0 or proc.returncode in (134, 136, 139)
        return ok, f"exit {proc.returncode}"
    ok = "REPRODUCED" in proc.stdout
    tail = (proc.stdout.strip().splitlines() or [""])[-1]
    return ok, tail[:100]


# ---- planted bugs ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Plant:
    """A planted bug of the test suite: the module, where it shows, and how it counts."""

    module: str
    backend: str
    api: str
    severity: tuple[str, ...]
    campaign: str = "api"
    extra: tuple[str, ...] = ()


PLANTS = (
    Plant("planted_torch_cumsum", "torch", "torch.cumsum", ("wrong-result",)),
    Plant("planted_torch_conv_dilated", "torch", "torch.nn.functional.conv2d",
          ("wrong-result",)),
    Plant("planted_torch_dropout_range", "torch", "torch.nn.functional.dropout",
          ("validation",)),
    Plant("planted_torch_hardswish_bf16", "torch", "torch.nn.functional.hardswish",
          ("wrong-result",)),
    Plant("planted_torch_floordiv_extreme", "torch", "torch.floor_divide", ("crash",)),
    Plant("planted_torch_gcd_extreme", "torch", "torch.gcd", ("crash",)),
    Plant("planted_torch_pool_rank_abort", "torch", "torch.nn.functional.avg_pool2d",
          ("crash",)),
    Plant("planted_jax_cumsum", "jax", "jax.numpy.cumsum", ("wrong-result",)),
)


# ---- output --------------------------------------------------------------------------------
def _table(rows: Iterable[Sequence[str]], header: Sequence[str]) -> str:
    rows = [list(map(str, r)) for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(header)]
    line = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True))  # noqa: E731
    return "\n".join([line(header), line(["-" * w for w in widths])] + [line(r) for r in rows])


def unaided(bugs: list[KnownBug], only: set[str] | None, out: Path, budget_s: float,
            seed: int, reuse: bool) -> dict[str, Hit | None]:
    wanted = sorted({b.campaign_name for b in bugs})
    unknown = [c for c in wanted if c not in CAMPAIGNS]
    if unknown:
        raise UsageError(f"bugs name unknown campaigns {unknown}; known: "
                         f"{', '.join(CAMPAIGNS)}")
    hits: dict[str, Hit | None] = {}
    for name in wanted:
        if only and name not in only:
            continue
        folder = out / name
        if not (reuse and folder.exists()):
            c = CAMPAIGNS[name]
            print(f"[recall] campaign {name}: {c.title}, {int(budget_s)} s ...", flush=True)
            wall = run_campaign(c.args, folder, budget_s, seed)
            print(f"[recall] campaign {name} done in {wall:.0f} s", flush=True)
        found = read_campaign(folder)
        for bug in bugs:
            if bug.campaign_name == name:
                hits[bug.id] = match(bug, found)
    return hits


def directed(bugs: list[KnownBug], out: Path, budget_s: float, seed: int
             ) -> dict[str, Hit | None]:
    hits: dict[str, Hit | None] = {}
    for bug in bugs:
        if bug.level != "api" or not bug.in_specs:
            continue
        c = CAMPAIGNS[bug.campaign_name]
        folder = out / f"directed-{bug.id}"
        print(f"[recall] directed {bug.id} ({bug.api}), {int(budget_s)} s ...", flush=True)
        run_campaign((*c.args, "--apis", bug.api), folder, budget_s, seed)
        hits[bug.id] = match(bug, read_campaign(folder))
    return hits


def planted(out: Path, budget_s: float, seed: int) -> list[tuple[Plant, Hit | None]]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [str(PLANTED), os.environ.get("PYTHONPATH")])))
    results = []
    for plant in PLANTS:
        if not (PLANTED / f"{plant.module}.py").exists():
            print(f"[recall] plant {plant.module}: no such module, skipped", flush=True)
            continue
        c = CAMPAIGNS[plant.campaign]
        folder = out / f"planted-{plant.module}"
        print(f"[recall] planted {plant.module}, {int(budget_s)} s unaided ...", flush=True)
        run_campaign(c.args, folder, budget_s, seed,
                     ("--preload", f"{plant.backend}={plant.module}", *plant.extra), env=env)
        bug = KnownBug(id=plant.module, library=plant.backend, level="api", kind="crash",
                       upstream="", title="", api=plant.api, backend=plant.backend,
                       severity=plant.severity, symptom="", trigger_lang="python",
                       trigger="", verify="stdout")
        results.append((plant, match(bug, read_campaign(folder))))
    return results


def _seconds(hit: Hit | None) -> str:
    return "-" if hit is None else f"{hit.seconds:.0f}"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--budget", type=float, default=1200, help="seconds per unaided campaign")
    ap.add_argument("--only", help="comma-separated campaigns: " + ", ".join(CAMPAIGNS))
    ap.add_argument("--out", type=Path, help="keep the campaign folders here")
    ap.add_argument("--from", dest="from_dir", type=Path,
                    help="score campaign folders an earlier --out kept, running nothing")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bugs", type=Path, default=BUGS)
    ap.add_argument("--directed", action="store_true", help="also the directed runs")
    ap.add_argument("--directed-budget", type=float, default=120)
    ap.add_argument("--planted", action="store_true",
                    help="only the planted bugs of the test suite, unaided")
    ap.add_argument("--planted-budget", type=float, default=300)
    ap.add_argument("--verify", action="store_true",
                    help="only run every bug's trigger and say whether it reproduces")
    args = ap.parse_args(argv)
    try:
        return _main(args)
    except UsageError as exc:
        print(f"recall.py: {exc}", file=sys.stderr)
        return 2


def _main(args: argparse.Namespace) -> int:
    bugs = load_bugs(args.bugs)
    if args.verify:
        rows = []
        for bug in bugs:
            ok, why = verify(bug)
            rows.append((bug.id, bug.backend, "yes" if ok else "NO", why))
        print(_table(rows, ("bug", "backend", "reproduces", "evidence")))
        bad = sum(r[2] == "NO" for r in rows)
        print(f"{len(rows) - bad}/{len(rows)} triggers reproduce their bug")
        return 1 if bad else 0
    out = args.from_dir or args.out or Path(tempfile.mkdtemp(prefix="dlfuzz-recall-"))
    out.mkdir(parents=True, exist_ok=True)
    if args.planted:
        results = planted(out, args.planted_budget, args.seed)
        rows = [(p.module, p.backend, p.api, "yes" if h else "no", _seconds(h))
                for p, h in results]
        print(_table(rows, ("plant", "backend", "api", "found", "s to first hit")))
        print(f"planted bugs found unaided: {sum(h is not None for _, h in results)}"
              f"/{len(results)} ({int(args.planted_budget)} s each)")
        return 0
    only = set(args.only.split(",")) if args.only else None
    hits = unaided(bugs, only, out, args.budget, args.seed, reuse=args.from_dir is not None)
    direct = directed(bugs, out, args.directed_budget, args.seed) if args.directed else {}
    rows = []
    for bug in bugs:
        if bug.id not in hits:
            continue
        h = hits[bug.id]
        rows.append((bug.id, bug.level, bug.kind, bug.campaign_name,
                     "yes" if h else "no", _seconds(h),
                     _seconds(direct.get(bug.id)) if args.directed else "",
                     h.root_cause if h else ""))
    print(_table(rows, ("bug", "level", "kind", "campaign", "found", "s to hit",
                        "directed s", "root cause")))
    found = sum(r[4] == "yes" for r in rows)
    print(f"\nfound unaided: {found}/{len(rows)} "
          f"({100.0 * found / max(1, len(rows)):.0f}%), {int(args.budget)} s per campaign")
    for level in LEVELS:
        sub = [r for r in rows if r[1] == level]
        if sub:
            print(f"  {level}: {sum(r[4] == 'yes' for r in sub)}/{len(sub)}")
    if args.directed:
        times = [h.seconds for h in direct.values() if h is not None]
        print(f"directed: {len(times)}/{len(direct)} found; median time to find "
              f"{statistics.median(times):.0f} s" if times else
              f"directed: 0/{len(direct)} found")
    print(f"campaign folders: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
