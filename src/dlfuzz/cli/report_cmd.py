"""``dlfuzz report DIR``: write the static HTML report and print its path."""

from __future__ import annotations

import argparse
import sys
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
    p.add_argument("--screenshot", type=Path, metavar="PNG",
                   help="also open the report in headless Chromium (as the tfjs-webgl "
                        "backend does) and save what it shows as this PNG; says on stderr "
                        "if the page logged an error or a chart drew nothing")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    out = resolve_out(args.out) if args.out is not None else None  # before opening DIR
    store = Store.open(args.dir)
    try:
        path = write_report(store, out)
    finally:
        store.close()
    print(printable(path.resolve()))
    if args.screenshot is not None:
        from dlfuzz.report.browser import check_page  # Node and Chromium: only when asked

        check = check_page(path, args.screenshot)
        print(printable(args.screenshot.resolve()))
        for problem in check.problems:
            print(printable(f"report check: {problem}"), file=sys.stderr)
    return 0
