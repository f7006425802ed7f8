"""``python -m dlfuzz.specgen {torch,tf,jax}``: regenerate a spec file.

Runs the library's extractor (``specgen/<lib>_apis.py``: signatures, docstrings,
validation code, the hand-hints table), optionally the error-feedback refinement
(``--refine``: runs generated inputs in the sandboxed pool), and writes
``data/<lib>.json`` with the library versions. ``--only API ...`` regenerates those APIs
and keeps every other entry of the existing file as it is.
"""

from __future__ import annotations

import argparse
import collections
import importlib
import sys
from pathlib import Path

from dlfuzz.engines.api.libspecs import DATA_DIR, LIBRARY_FILES, LibSpec, dump, load_file
from dlfuzz.errors import DlfuzzError, UsageError
from dlfuzz.libraries import versions


def summary(specs: list[LibSpec]) -> str:
    by_source = collections.Counter(c.source for s in specs for c in s.constraints)
    skipped = [s for s in specs if s.skip]
    lines = [f"{len(specs)} APIs, {len(specs) - len(skipped)} fuzzed, {len(skipped)} skipped",
             "constraints by source: " + (", ".join(f"{k} {v}" for k, v in
                                                     sorted(by_source.items())) or "none")]
    groups = collections.Counter(s.group or "-" for s in specs)
    lines.append("groups: " + ", ".join(f"{k} {v}" for k, v in sorted(groups.items())))
    reasons = collections.Counter(s.skip.split(":")[0] for s in skipped)
    if reasons:
        lines.append("skipped: " + ", ".join(f"{k} {v}" for k, v in reasons.most_common(8)))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m dlfuzz.specgen",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("library", choices=sorted(LIBRARY_FILES))
    ap.add_argument("--refine", action="store_true", help="run error-feedback refinement")
    ap.add_argument("--rounds", type=int, default=3, help="refinement rounds (default 3)")
    ap.add_argument("--per-api", type=int, default=30, help="draws per API and round")
    ap.add_argument("--mode", default="adjust", help="generation mode for refinement")
    ap.add_argument("--only", nargs="+", metavar="API", help="regenerate only these APIs")
    ap.add_argument("--out", type=Path, help="output file (default: the built-in data file)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    try:
        return _run(args)
    except DlfuzzError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    out = args.out or DATA_DIR / LIBRARY_FILES[args.library]
    if args.rounds < 0 or args.per_api < 1:
        raise UsageError(f"--rounds {args.rounds} / --per-api {args.per_api}: use rounds >= 0 "
                         "and per-api >= 1")
    module = importlib.import_module(f"dlfuzz.specgen.{args.library}_apis")
    specs: list[LibSpec] = module.extract()
    if args.only:
        wanted = set(args.only)
        unknown = wanted - {s.api for s in specs}
        if unknown:
            raise UsageError(f"--only: {', '.join(sorted(unknown))} not produced by the "
                             f"{args.library} extractor; check the dotted API path")
        specs = [s for s in specs if s.api in wanted]
    if args.refine and args.rounds:
        from dlfuzz.specgen.refine import refine

        def progress(msg: str) -> None:
            print(msg, file=sys.stderr)

        specs, report = refine(specs, args.library, rounds=args.rounds, per_api=args.per_api,
                               mode=args.mode, seed=args.seed, progress=progress)
        print(report.summary())
    if args.only and out.exists():
        fresh = {s.api: s for s in specs}
        old = load_file(out)
        merged = [fresh.pop(s.api, s) for s in old] + list(fresh.values())
        specs = merged
    dump(args.library, specs, out,  # an extractor's own versions() first (tfjs: npm)
         getattr(module, "versions", lambda: versions(args.library))())
    load_file(out)  # what was written must load back
    print(f"wrote {out}")
    print(summary(specs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
