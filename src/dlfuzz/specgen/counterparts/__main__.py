"""``python -m dlfuzz.specgen.counterparts validate|candidates|stats``.

``validate`` builds the candidates of the chosen kinds for the APIs of the chosen
libraries' spec files, validates them in sandboxed workers and rewrites
``data/counterparts/<library>.json``: entries of the candidates validated in this run are
replaced, every other entry is kept (so ``--only`` and ``--kinds`` refresh a part).
``candidates`` lists what would be validated; ``stats`` counts the files' contents.
``specials`` runs the special-value check (``specials.py``) on the files' dlfuzz-written
counterparts and rewrites their ``specials`` (the kinds they may judge) in place.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dlfuzz.engines.api.counterparts.model import (
    DATA_DIR,
    KINDS,
    LIBRARIES,
    MODE_BACKENDS,
    Counterpart,
    dump,
    load_file,
)
from dlfuzz.errors import UsageError
from dlfuzz.specgen.counterparts.validate import (
    API_BACKENDS,
    Verdict,
    rejected_entry,
    validate,
)

RESTART_JAX = 3000  # cases between restarts of the eager JAX worker
SPECIAL_ROUNDS = 2  # rounds of fresh inputs of the special-value check
# Spec libraries validated against the eager libraries: their own backend joins the pool.
SPEC_LIBRARIES = (*LIBRARIES, *API_BACKENDS)


def _specs(libraries: Sequence[str], folder: str | None = None) -> dict[str, dict[str, Any]]:
    """Each library's specs: the built-in files, or ``<folder>/<library>.json``."""
    from dlfuzz.engines.api.libspecs import LIBRARY_FILES, load_library

    out = {}
    for lib in libraries:
        path = Path(folder) / LIBRARY_FILES[lib] if folder else None
        try:
            out[lib] = load_library(lib, path)
        except UsageError as exc:
            print(f"no specs for {lib}: {exc}", file=sys.stderr)
    return out


def build_candidates(specs: dict[str, dict[str, Any]], libraries: Sequence[str],
                     kinds: Sequence[str], only: Sequence[str] = (),
                     torch_compile_max: int = 40) -> list[Counterpart]:
    """Candidates of ``kinds`` for the APIs of ``libraries`` (``only``: these APIs)."""
    from dlfuzz.specgen.counterparts import sources
    from dlfuzz.specgen.counterparts.same_name import candidates as same_name

    mine = {api: s for lib in libraries for api, s in specs.get(lib, {}).items()
            if not only or api in only}
    out: list[Counterpart] = []
    if "same-name" in kinds:
        out += [c for c in same_name(specs, libraries) if c.api in mine]
    if "composition" in kinds:
        out += sources.composition_candidates(mine)
    paired = frozenset(c.api for c in out)
    if "mode" in kinds:
        out += sources.mode_candidates(mine, torch_compile_max, prefer=paired)
    if "precision" in kinds:
        out += sources.precision_candidates(mine)
    return out


def _write(out_dir: Path, verdicts: list[Verdict], specs: dict[str, dict[str, Any]],
           versions: dict[str, str]) -> None:
    by_lib: dict[str, list[Verdict]] = {}
    for v in verdicts:
        lib = next(lib for lib, table in specs.items() if v.candidate.api in table)
        by_lib.setdefault(lib, []).append(v)
    for lib, vs in by_lib.items():
        path = out_dir / f"{lib}.json"
        done = {v.candidate.key for v in vs}
        kept: list[Counterpart] = []
        rejected: list[dict[str, Any]] = []
        if path.exists():
            old = load_file(path)
            kept = [c for c in old.counterparts if c.key not in done]
            rejected = [r for r in old.rejected if (
                r.get("api"), r.get("library"), r.get("kind"), r.get("target"),
                tuple(r.get("requires_value", ()))) not in done]
        kept += [v.accepted for v in vs if v.accepted is not None]
        rejected += [rejected_entry(v) for v in vs if v.accepted is None]
        dump(lib, kept, path, rejected, header={"versions": versions})
        print(f"wrote {path}: {len(kept)} counterparts, {len(rejected)} rejected",
              file=sys.stderr)


def _pools(kinds: Sequence[str], candidates: Sequence[Counterpart],
           libraries: Sequence[str] = ()) -> dict[str, Any]:
    from dlfuzz.executor.pool import Pool, WorkerConfig

    # JAX's op-by-op caches grow with every new shape: a periodic restart bounds them.
    eager = Pool([WorkerConfig(lib, case_timeout_s=20.0,
                               restart_every=RESTART_JAX if lib == "jax" else 0)
                  for lib in LIBRARIES]
                 + [WorkerConfig(API_BACKENDS[lib], case_timeout_s=20.0)
                    for lib in libraries if lib in API_BACKENDS])
    pools: dict[str, Any] = {"eager": eager}
    backends = sorted({c.library for c in candidates if c.kind == "mode"})
    if backends:
        pools["compiled"] = Pool([WorkerConfig(b, case_timeout_s=30.0, restart_every=400)
                                  for b in backends])
    return pools


def cmd_validate(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    specs = _specs(SPEC_LIBRARIES, args.specs)
    libraries = [lib for lib in args.library or LIBRARIES if lib in specs]
    cands = build_candidates(specs, libraries, args.kinds, args.only, args.torch_compile_max)
    for path in args.candidates:  # e.g. LLM-written counterparts, in the file format
        cands += [c for c in load_file(path).counterparts
                  if not args.only or c.api in args.only]
    print(f"{len(cands)} candidates: {dict(Counter(c.kind for c in cands))}", file=sys.stderr)
    pools = _pools(args.kinds, cands, libraries)
    versions: dict[str, str] = {}
    try:
        for pool in pools.values():
            for backend, version in pool.start().items():
                versions[MODE_BACKENDS.get(backend, backend)] = version
            if pool.unavailable:
                print(f"unavailable: {pool.unavailable}", file=sys.stderr)
        table = {api: s for t in specs.values() for api, s in t.items()}
        verdicts = validate(table, cands, pools, seed=args.seed, versions=versions)
    finally:
        for pool in pools.values():
            pool.close()
    _write(Path(args.out), verdicts, specs, versions)
    elapsed = time.perf_counter() - started
    ok = Counter((v.accepted.kind, v.accepted.library) for v in verdicts if v.accepted)
    print(f"validated {len(verdicts)} candidates in {elapsed:.0f} s; accepted "
          f"{sum(ok.values())}: " + ", ".join(f"{k}/{lib} {n}" for (k, lib), n
                                             in sorted(ok.items())), file=sys.stderr)
    return 0


def cmd_candidates(args: argparse.Namespace) -> int:
    specs = _specs(LIBRARIES, args.specs)
    libraries = [lib for lib in args.library or LIBRARIES if lib in specs]
    for c in build_candidates(specs, libraries, args.kinds, args.only, args.torch_compile_max):
        print(f"{c.api}\t{c.kind}\t{c.library}\t{c.target}\targs={list(c.args)}"
              f"\trename={dict(c.rename)}\textra={dict(c.extra)}"
              f"\trequires_default={dict(c.requires_default)}"
              + (f"\trequires_value={list(c.requires_value)}" if c.requires_value else ""))
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    total: Counter[tuple[str, str]] = Counter()
    for lib in args.library or LIBRARIES:
        path = Path(args.out) / f"{lib}.json"
        if not path.exists():
            print(f"{lib}: no file", file=sys.stderr)
            continue
        f = load_file(path)
        counts = Counter((c.kind, c.library) for c in f.counterparts)
        apis = len({c.api for c in f.counterparts if c.kind in ("same-name", "composition")})
        print(f"{lib}: {len(f.counterparts)} counterparts ({apis} APIs with a cross-library "
              f"one), {len(f.rejected)} rejected: "
              + ", ".join(f"{k}/{t} {n}" for (k, t), n in sorted(counts.items())))
        for (k, _), n in counts.items():
            total[(lib, k)] += n
    by_kind: Counter[str] = Counter()
    for (_, k), n in total.items():
        by_kind[k] += n
    print(f"total {sum(total.values())}: " + ", ".join(f"{k} {n}" for k, n in
                                                       sorted(by_kind.items())))
    return 0


def write_specials(path: Path, updated: dict[tuple[str, str, str, str, tuple[str, ...]],
                                                Counterpart]) -> None:
    """Set ``specials`` (and the evidence of disagreements) of the checked counterparts in
    a file, leaving every other entry and the file's layout as they are."""
    import json

    text = path.read_text(encoding="utf-8")
    raw = json.loads(text)
    # Files are kept either indented (one key a line) or as ``dump`` writes them (one
    # counterpart a line): each keeps its layout, so the diff is only what changed.
    indented = json.dumps(raw, indent=1, ensure_ascii=False) == text
    for i, entry in enumerate(raw["counterparts"]):
        cp = updated.get((entry.get("api"), entry.get("library"), entry.get("kind"),
                          entry.get("target"), tuple(entry.get("requires_value", ()))))
        if cp is None:
            continue
        new = {k: v for k, v in entry.items() if k not in ("specials", "evidence")}
        if cp.specials:
            new["specials"] = list(cp.specials)
        evidence = {k: v for k, v in entry.get("evidence", {}).items()
                    if k not in ("specials_disagree", "specials_unchecked")}
        checked = cp.evidence_dict()
        disagree = checked.get("specials_disagree")
        if disagree:
            evidence["specials_disagree"] = {k: disagree[k] for k in sorted(disagree)}
        if checked.get("specials_unchecked"):
            evidence["specials_unchecked"] = list(checked["specials_unchecked"])
        if evidence:
            new["evidence"] = dict(sorted(evidence.items()))
        raw["counterparts"][i] = new
    if indented:
        path.write_text(json.dumps(raw, indent=1, ensure_ascii=False), encoding="utf-8")
        return
    old = load_file(path)
    path.write_text(json.dumps(raw), encoding="utf-8")  # read back as counterparts below
    dump(old.library, load_file(path).counterparts, path, old.rejected, dict(old.header))


def cmd_specials(args: argparse.Namespace) -> int:
    from dlfuzz.executor.pool import Pool, WorkerConfig
    from dlfuzz.specgen.counterparts.specials import check, summary

    started = time.perf_counter()
    specs = _specs(SPEC_LIBRARIES, args.specs)
    table = {api: s for t in specs.values() for api, s in t.items()}
    files = {lib: load_file(Path(args.out) / f"{lib}.json") for lib in args.library or LIBRARIES
             if (Path(args.out) / f"{lib}.json").exists()}
    wanted = [c for f in files.values() for c in f.counterparts
              if c.dlfuzz_written and (not args.only or c.api in args.only)]
    print(f"{len(wanted)} dlfuzz-written counterparts to check", file=sys.stderr)
    pool = Pool([WorkerConfig(lib, case_timeout_s=20.0) for lib in LIBRARIES])
    try:
        pool.start()
        verdicts = check(table, wanted, pool, seed=args.seed, rounds=SPECIAL_ROUNDS)
    finally:
        pool.close()
    updated = {v.candidate.key: v.updated() for v in verdicts}
    for lib in files:
        write_specials(Path(args.out) / f"{lib}.json", updated)
    for name, kinds in sorted(summary(verdicts).items()):
        print(f"not trusted on {', '.join(kinds)}: {name}", file=sys.stderr)
    print(f"checked {len(verdicts)} counterparts in {time.perf_counter() - started:.0f} s",
          file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dlfuzz.specgen.counterparts")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("validate", "candidates", "stats", "specials"):
        p = sub.add_parser(name)
        p.add_argument("--library", action="append", choices=SPEC_LIBRARIES,
                       help="APIs of this library (repeatable; default: all)")
        p.add_argument("--kinds", type=lambda s: [k.strip() for k in s.split(",")],
                       default=list(KINDS[:4]), help="comma-separated kinds (default: "
                       "same-name,composition,mode,precision)")
        p.add_argument("--only", action="append", default=[], help="this API (repeatable)")
        p.add_argument("--seed", type=int, default=0)
        p.add_argument("--torch-compile-max", type=int, default=40)
        p.add_argument("--out", default=str(DATA_DIR), help="folder of the files")
        p.add_argument("--candidates", action="append", default=[],
                       help="also validate the counterparts of this file (any kind, e.g. "
                       "llm); repeatable")
        p.add_argument("--specs", default=None, help="folder of spec files <library>.json "
                       "(default: the built-in ones)")
    args = parser.parse_args(argv)
    bad = [k for k in args.kinds if k not in KINDS]
    if bad:
        parser.error(f"unknown kinds {bad}; use {', '.join(KINDS)}")
    try:
        return {"validate": cmd_validate, "candidates": cmd_candidates,
                "stats": cmd_stats, "specials": cmd_specials}[args.command](args)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
