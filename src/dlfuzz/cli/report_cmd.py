"""``dlfuzz report DIR``: write the static HTML report and print its path."""

from __future__ import annotations

import argparse
from pathlib import Path

from dlfuzz.cli.common import printable
from dlfuzz.report.html import resolve_out, write_report
from dlfuzz.store.db import Store


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="write the campaign's HTML report")
    p.add_argument("dir", type=Path, help="campaign directory")
    p.add_argument("--out", type=Path,
                   help="HTML file, or a folder for index.html (default: DIR/report/index.html;"
                        " missing folders are created)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    out = resolve_out(args.out) if args.out is not None else None  # before opening DIR
    store = Store.open(args.dir)
    try:
        path = write_report(store, out)
    finally:
        store.close()
    print(printable(path.resolve()))
    return 0
