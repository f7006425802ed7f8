"""``dlfuzz backends``: which backends work here, their versions, why others do not."""

from __future__ import annotations

import argparse
import sys

from rich.table import Table

from dlfuzz import registry
from dlfuzz.cli.common import literal, parse_list, parse_pairs, plain_console
from dlfuzz.errors import UsageError
from dlfuzz.executor.pool import Pool, WorkerConfig


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("backends", help="list backends, versions, and why any is unavailable")
    p.add_argument("--require", help="comma-separated backends that must be available "
                                     "(exit 1 otherwise)")
    p.add_argument("--python", action="append", metavar="BACKEND=PATH",
                   help="run a backend's worker under another interpreter")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    names = registry.names("backend")
    required = parse_list(args.require, "--require") or ()
    for name in required:
        registry.import_string("backend", name)
    pythons = dict(parse_pairs(args.python, "--python"))
    for name in pythons:
        if name not in names:
            raise UsageError(f"--python {name}=...: unknown backend {name!r}")
    configs = [WorkerConfig(n, python=pythons.get(n) or WorkerConfig.python) for n in names]
    # Each worker imports its library (seconds each, a minute for all): say what is done
    # as it happens, on stderr, so the table on stdout stays clean for pipes.
    print(f"probing {len(configs)} backends (each imports its library in a worker) ...",
          file=sys.stderr, flush=True)
    with Pool(configs) as pool:
        versions = pool.start(_probed)
        unavailable = dict(pool.unavailable)
    table = Table(title="dlfuzz backends")
    for col in ("backend", "library", "mode", "status", "version / reason"):
        table.add_column(col)
    for name in names:
        cls = registry.load("backend", name)
        mode = "compiled" if cls.compiled else "eager"
        if name in versions:
            table.add_row(name, cls.library, mode, literal("available", "green"),
                          literal(versions[name]))
        else:
            table.add_row(name, cls.library, mode, literal("unavailable", "red"),
                          literal(unavailable[name]))
    plain_console().print(table)
    missing = [n for n in required if n not in versions]
    if missing:
        plain_console(stderr=True).print(f"required backend(s) unavailable: {', '.join(missing)}")
        return 1
    return 0


def _probed(name: str, done: int, total: int, version: str | None, reason: str) -> None:
    state = f"available, {version}" if version is not None else "unavailable"
    print(f"  ({done}/{total}) {name}: {state}", file=sys.stderr, flush=True)
