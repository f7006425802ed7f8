"""``dlfuzz report DIR``: write the static HTML report and print its path."""

from __future__ import annotations

import argparse
from pathlib import Path

from dlfuzz.report.html import write_report
from dlfuzz.store.db import Store


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="write the campaign's HTML report")
    p.add_argument("dir", type=Path, help="campaign directory")
    p.add_argument("--out", type=Path, help="HTML file (default DIR/report/index.html)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    store = Store.open(args.dir)
    try:
        path = write_report(store, args.out)
    finally:
        store.close()
    print(path.resolve())
    return 0
