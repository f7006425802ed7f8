"""``dlfuzz bisect DIR BUG_ID --versions A..B``: the release where a bug came or went.

Runs the bug's guilty-backend reproducer under releases of the guilty library (each
installed into dlfuzz's cache: TF.js side by side, a Python library in one venv per
release) and binary-searches the change (``triage.bisect``). Prints each probe as it
ends and then "first bad X, last good Y" (a regression) or "fixed in Y, last bad X".
Exit 0 with a result; 1 when the range's ends give the same verdict or no verdict (no
change to find there); 2 for a usage error.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from dlfuzz.cli.bug_folder import open_bug_folder
from dlfuzz.errors import DlfuzzError, UsageError
from dlfuzz.libraries import get, of_backend
from dlfuzz.libraries.record import Library
from dlfuzz.triage import bisect as bs


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "bisect", help="find the release of a library where a bug came or went",
        description="Run a confirmed bug's reproducer under releases of the guilty library "
                    "and binary-search where its verdict changes (assumes one change in the "
                    "range). Releases are installed into dlfuzz's cache (TF.js through "
                    "`dlfuzz tfjs install`, Python libraries in one venv per release); "
                    "verdicts are cached, so a re-run is instant.")
    p.add_argument("dir", type=Path, help="campaign directory")
    p.add_argument("bug_id", help="bug id from `dlfuzz findings`")
    p.add_argument("--versions", required=True, metavar="A..B|A,B,C",
                   help="a range of registry releases (both ends included) or an explicit "
                        "list of releases")
    p.add_argument("--library", default=None,
                   help="library to bisect (default: the guilty backend's library)")
    p.add_argument("--pre", action="store_true", help="include pre-releases in a range")
    p.add_argument("--installed-only", action="store_true",
                   help="probe only releases already installed (nothing is downloaded)")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds per reproducer run")
    p.add_argument("--cache-dir", type=Path, default=None, metavar="DIR",
                   help="where release venvs and verdicts are kept "
                        "(default: ~/.cache/dlfuzz/bisect, or $DLFUZZ_CACHE/bisect)")
    p.add_argument("--no-preload", action="store_true",
                   help="run without the campaign's --preload modules")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=run)


def _reproducer(args: argparse.Namespace) -> tuple[bs.Reproducer, str]:
    """The bug's guilty-backend reproducer and that backend's library name."""
    bug, settings, folder, meta = open_bug_folder(args.dir, args.bug_id)
    name = meta.get("repro", {}).get(bug.guilty_backend)
    if not name or not (folder / name).is_file():
        raise UsageError(f"bug {bug.id}: no reproducer for its guilty backend "
                         f"{bug.guilty_backend} in {folder}; nothing to bisect with")
    preload = () if args.no_preload else tuple(
        m for b, m in settings.preload if b == bug.guilty_backend)
    lib = of_backend(bug.guilty_backend)
    repro = bs.Reproducer(folder, folder / name, bug.guilty_backend, bug.symptom,
                          bug.signature, preload)
    return repro, lib.name if lib is not None else ""


def _library(args: argparse.Namespace, guilty_lib: str, backend: str) -> Library:
    if args.library is None and not guilty_lib:
        raise UsageError(f"backend {backend} belongs to no known library; name one with "
                         "--library")
    lib = get(args.library or guilty_lib)
    if not lib.npm and not lib.distributions:
        raise UsageError(f"--library {lib.name}: has no registry releases to bisect")
    guilty_is_js = bool(guilty_lib) and bool(get(guilty_lib).npm)
    if lib.name != guilty_lib and (lib.npm or guilty_is_js):  # a .js script needs TF.js
        raise UsageError(f"--library {lib.name}: the bug's guilty backend is {backend} "
                         f"({guilty_lib or 'no known library'}), whose reproducer cannot run "
                         f"on releases of {lib.name}; bisect {guilty_lib or 'its library'}")
    return lib


def _cache(args: argparse.Namespace) -> Path:
    if args.cache_dir is not None:
        return Path(args.cache_dir).expanduser().resolve()
    from dlfuzz.cachedir import dlfuzz_cache

    return dlfuzz_cache() / "bisect"


def run(args: argparse.Namespace) -> int:
    if args.timeout <= 0:
        raise UsageError(f"--timeout {args.timeout:g}: give a positive number of seconds")
    repro, guilty_lib = _reproducer(args)
    lib = _library(args, guilty_lib, repro.backend)
    cache = _cache(args)
    versions = bs.select_versions(args.versions, lambda: bs.registry_versions(lib, args.pre),
                                  args.pre)
    if args.installed_only:
        have = set(bs.installed_versions(lib, cache))
        versions = [v for v in versions if v in have]
        if len(versions) < 2:
            raise UsageError(f"--installed-only: only {len(versions)} release(s) of "
                             f"{lib.name} in --versions {args.versions} are installed "
                             f"({', '.join(versions) or 'none'}); install more or drop "
                             "--installed-only")
    if lib.name == "torch":
        have = set(bs.installed_versions(lib, cache))
        bs.check_torch([v for v in versions if v not in have], bs.local_wheel_dirs())
    out = sys.stderr if args.json else sys.stdout
    print(f"bisecting bug {args.bug_id} ({repro.backend}) over {len(versions)} release(s) "
          f"of {lib.name}: {versions[0]} .. {versions[-1]} (assumes the verdict changes "
          "once in the range)", file=out, flush=True)
    results = bs.VerdictCache(cache, repro.key())

    def probe_at(version: str) -> bs.Probe:
        found = results.get(version)
        if found is None:
            try:
                release = bs.prepare(lib, version, cache)
            except DlfuzzError as exc:
                found = bs.Probe(version, bs.SKIP, 0.0, f"not installed: {exc}")
            else:
                found = bs.probe(repro, release, args.timeout)
                results.put(found)
        note = " (cached)" if found.cached else ""
        print(f"  {found.version:<12} {found.verdict:<5} {found.seconds:6.1f} s{note}  "
              f"{found.line[:160]}", file=out, flush=True)
        return found

    try:
        outcome = bs.search(versions, probe_at)
    except bs.NoTransition as exc:
        if args.json:
            print(json.dumps({"error": str(exc), "probes": [bs.asdict(p) for p in exc.probes]},
                             indent=2))
        raise
    if args.json:
        print(json.dumps({"bug": args.bug_id, "library": lib.name, "backend": repro.backend,
                          "versions": versions, **outcome.as_json()}, indent=2))
    else:
        print(f"bug {args.bug_id}: {outcome.summary()}")
    return 0
