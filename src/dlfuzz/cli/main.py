"""Entry point: parses the verb and hands over; every failure becomes one line and an exit status.

Exit statuses: 0 success, 1 a finding-like result (new confirmed bugs at or above
``--fail-on`` on ``run``/``findings``, a DlfuzzError, a still-present bug, a missing
required backend), 2 a usage error (bad argument, unusable path: the user's to fix), 3 an
internal error (a dlfuzz bug: one line plus the file holding its traceback), 130
interrupted. ``dlfuzz --help`` lists them (``cli.gate.EXIT_CODES``). A closed stdout
(``dlfuzz findings --json | head -1``) ends quietly.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
import traceback
from typing import Any, NoReturn

from dlfuzz import __version__
from dlfuzz.cli.common import printable
from dlfuzz.errors import DlfuzzError, InternalError, UsageError

VERBS = {
    "backends": "dlfuzz.cli.backends_cmd",
    "run": "dlfuzz.cli.run_cmd",
    "findings": "dlfuzz.cli.findings_cmd",
    "baseline": "dlfuzz.cli.baseline_cmd",
    "reproduce": "dlfuzz.cli.reproduce_cmd",
    "report": "dlfuzz.cli.report_cmd",
    "specs": "dlfuzz.cli.specs_cmd",
    "tfjs": "dlfuzz.cli.tfjs_cmd",
    "export-tests": "dlfuzz.cli.export_tests_cmd",
    "bisect": "dlfuzz.cli.bisect_cmd",
}

# `dlfuzz run` options whose argparse default is None because the value comes from
# --config/--profile or CampaignSettings; --help shows the CampaignSettings default.
_RUN_DEFAULTS = {
    "engine": "engine", "backends": "backends", "budget": "budget_s", "seed": "seed",
    "batch_size": "batch_size", "batch_seconds": "batch_seconds", "timeout": "case_timeout_s",
    "memory_limit_mb": "memory_limit_mb", "restart_every": "restart_every",
    "confirm_runs": "confirm_runs", "max_cases": "max_cases", "threads": "threads",
    "replicas": "replicas",
}


class _HelpFormatter(argparse.HelpFormatter):
    """Appends "(default: X)" to an option's help when it has a meaningful default.

    Unlike argparse.ArgumentDefaultsHelpFormatter it leaves out None and False (flags and
    options whose value comes from elsewhere) and help texts that already name a default.
    """

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if (default is None or default is False or default is argparse.SUPPRESS
                or "default" in text or isinstance(action, argparse._HelpAction)
                or not (action.option_strings or action.nargs in ("?", "*"))):
            return text
        return f"{text} (default: %(default)s)"


class _EpilogFormatter(_HelpFormatter):
    """Keeps the epilog's line breaks (the exit-status table) as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        return "".join(indent + line for line in text.splitlines(keepends=True))


class _Parser(argparse.ArgumentParser):
    """argparse that raises UsageError instead of printing usage and exiting."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message} (see {self.prog} --help)")


def build_parser() -> argparse.ArgumentParser:
    import importlib

    from dlfuzz.cli.gate import EXIT_CODES

    parser = _Parser(prog="dlfuzz", description="Find bugs in deep learning libraries.",
                     epilog=EXIT_CODES, formatter_class=_EpilogFormatter)
    parser.add_argument("--version", action="version", version=f"dlfuzz {__version__}")
    sub = parser.add_subparsers(dest="verb", required=True, parser_class=_Parser)
    for module in VERBS.values():
        importlib.import_module(module).add_parser(sub)
    _show_run_defaults(sub.choices.get("run"))
    return parser


def _show_run_defaults(run: argparse.ArgumentParser | None) -> None:
    """Add the CampaignSettings default to the help of `run` options that lack one."""
    if run is None:
        return
    from dlfuzz.settings import CampaignSettings

    for action in run._actions:
        field = _RUN_DEFAULTS.get(action.dest)
        if field is None or not action.help or "default" in action.help:
            continue
        value = getattr(CampaignSettings, field)
        if isinstance(value, tuple):
            value = ",".join(value)
        elif field.endswith("_s"):
            value = f"{value:g}s"
        action.help = f"{action.help} (default: {value})".replace("%", "%%")
    for action in run._actions:  # options without any help text get one too
        field = _RUN_DEFAULTS.get(action.dest)
        if field is not None and not action.help:
            action.help = f"(default: {getattr(CampaignSettings, field)})"


def _fail(message: str, code: int) -> NoReturn:
    print(f"dlfuzz: error: {printable(message)}", file=sys.stderr)
    sys.exit(code)


def _os_message(exc: OSError) -> str:
    """'PATH: reason' from an OSError (both paths for a rename or copy)."""
    reason = exc.strerror or str(exc)
    paths = [os.fsdecode(p) for p in (exc.filename, exc.filename2) if p is not None]
    return f"{' -> '.join(paths)}: {reason}" if paths else reason


def _internal(exc: BaseException) -> NoReturn:
    """One line naming the error and the file holding the full traceback; exit 3."""
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    where = "(traceback could not be written)"
    try:
        fd, path = tempfile.mkstemp(prefix="dlfuzz-crash-", suffix=".txt")
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as fh:
            fh.write(f"dlfuzz {__version__}\nargv: {sys.argv!r}\n\n{text}")
        where = f"full traceback in {path}"
    except OSError:
        pass
    _fail(f"internal error (a dlfuzz bug, please report it): {type(exc).__name__}: {exc}; "
          f"{where}", 3)


def _closed_stdout() -> NoReturn:
    """The reader of stdout went away (``| head``): stop quietly, as other tools do.

    Python would otherwise complain again when it flushes stdout at exit; pointing the
    descriptor at /dev/null makes that final flush succeed.
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    sys.exit(1)


def _no_nul(argv: list[str]) -> None:
    """No argument may hold a NUL byte: no path or setting can, and deep inside (opening
    a ``--baseline`` file) it would be a ValueError instead of a clear error."""
    for arg in argv:
        if "\x00" in arg:
            raise UsageError(f"argument {arg!r} holds a NUL byte (\\x00), which no file "
                             "name or setting can; give it without one")


def main(argv: list[str] | None = None) -> None:
    try:
        _no_nul(sys.argv[1:] if argv is None else argv)
        args = build_parser().parse_args(argv)
        code = args.func(args)
        sys.stdout.flush()  # a closed pipe shows here, inside the handlers below
    except BrokenPipeError:
        _closed_stdout()
    except UsageError as exc:
        _fail(str(exc), 2)
    except InternalError as exc:
        _internal(exc)
    except DlfuzzError as exc:
        _fail(str(exc), 1)
    except KeyboardInterrupt:
        print("dlfuzz: interrupted", file=sys.stderr)
        _exit_interrupted(whole_process=argv is None)
    except OSError as exc:
        if exc.filename is None:
            _internal(exc)
        _fail(_os_message(exc), 2)
    except SystemExit:
        raise
    except Exception as exc:  # noqa: BLE001 - any other exception is a dlfuzz bug
        _internal(exc)
    if code == 130:
        _exit_interrupted(whole_process=argv is None)
    sys.exit(code or 0)


def _exit_interrupted(whole_process: bool) -> NoReturn:
    """Exit 130, whatever further Ctrl-C comes while the interpreter shuts down.

    Python puts the default SIGINT action back during finalization, so a Ctrl-C pressed
    again while an interrupted run exits would kill the process by signal (status -2 to
    its parent) instead of the documented 130. The work is done and the store closed by
    now: further interrupts are ignored for the last milliseconds. Only when dlfuzz is
    the process (``python -m dlfuzz``, the console script); a caller of ``main(argv)``
    keeps its own Ctrl-C.
    """
    if not whole_process:
        sys.exit(130)
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread (dlfuzz.api in a thread): nothing to guard
        pass
    sys.exit(130)
