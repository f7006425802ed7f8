"""Entry point: parses the verb and hands over; usage errors become one line and exit 2."""

from __future__ import annotations

import argparse
import sys

from dlfuzz import __version__
from dlfuzz.errors import DlfuzzError, InternalError, UsageError

VERBS = {
    "backends": "dlfuzz.cli.backends_cmd",
    "run": "dlfuzz.cli.run_cmd",
    "findings": "dlfuzz.cli.findings_cmd",
    "reproduce": "dlfuzz.cli.reproduce_cmd",
    "report": "dlfuzz.cli.report_cmd",
    "specs": "dlfuzz.cli.specs_cmd",
    "tfjs": "dlfuzz.cli.tfjs_cmd",
}


class _Parser(argparse.ArgumentParser):
    """argparse that raises UsageError instead of printing usage and exiting."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message} (see {self.prog} --help)")


def build_parser() -> argparse.ArgumentParser:
    import importlib

    parser = _Parser(prog="dlfuzz", description="Find bugs in deep learning libraries.")
    parser.add_argument("--version", action="version", version=f"dlfuzz {__version__}")
    sub = parser.add_subparsers(dest="verb", required=True, parser_class=_Parser)
    for module in VERBS.values():
        importlib.import_module(module).add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> None:
    try:
        args = build_parser().parse_args(argv)
        code = args.func(args)
    except UsageError as exc:
        print(f"dlfuzz: error: {exc}", file=sys.stderr)
        sys.exit(2)
    except InternalError:
        raise  # a dlfuzz bug: show the traceback, never hide it
    except DlfuzzError as exc:
        print(f"dlfuzz: error: {exc}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        print("dlfuzz: interrupted", file=sys.stderr)
        sys.exit(130)
    sys.exit(code or 0)
