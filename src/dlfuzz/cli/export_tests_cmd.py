"""``dlfuzz export-tests DIR --out tests/regressions/``: pytest files a library team keeps.

One file per root cause of the campaign's confirmed bugs (grouped as ``dlfuzz findings``
groups them), named after the root-cause key. Each test runs the reduced case on the
guilty library, asserts the reference behaviour, fails while the bug is present and passes
once it is fixed; ``--xfail`` marks them ``xfail(strict=True)`` (known bugs: the run
fails when one gets fixed, so the mark is dropped then). The files need pytest and the
libraries involved (numpy among them), never dlfuzz. See ``triage.regression_tests``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from dlfuzz.cli.common import literal, plain_console
from dlfuzz.cli.findings_cmd import bug_record, by_root_cause, ordered
from dlfuzz.errors import UsageError
from dlfuzz.store.db import Store
from dlfuzz.triage.regression_tests import ExportedFile, root_causes, write_tests


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("export-tests",
                       help="write one pytest regression test file per root cause")
    p.add_argument("dir", type=Path, help="campaign directory")
    p.add_argument("--out", type=Path, required=True,
                   help="folder for the test files (made if missing), e.g. tests/regressions")
    p.add_argument("--xfail", action="store_true",
                   help="mark the tests xfail(strict=True): known bugs that must not pass "
                        "silently once fixed")
    p.set_defaults(func=run)


def export(campaign: Path, out: Path, xfail: bool = False) -> tuple[list[ExportedFile],
                                                                    list[str]]:
    """Write the test files of ``campaign`` into ``out``; (files written, notes on bugs
    left out). The one implementation behind the verb and ``dlfuzz.api``."""
    from dlfuzz.triage.confirm import reproducer_env

    out = Path(out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out}: exists and is not a directory; give a folder for "
                         "the test files")
    if (out / "conftest.py").exists():
        raise UsageError(f"--out {out}: holds a conftest.py; the exported tests are meant "
                         "to run without one (choose another folder)")
    store = Store.open(campaign)
    try:
        records = ordered([bug_record(store, b) for b in store.bugs("confirmed")])
    finally:
        store.close()
    by_id = {str(r["id"]): r for r in records}
    causes, notes = root_causes(by_root_cause(records), by_id, reproducer_env)
    try:
        files = write_tests(causes, out, str(Path(campaign)), xfail)
    except OSError as exc:
        raise UsageError(f"--out {out}: cannot write the test files "
                         f"({exc.strerror or exc})") from exc
    return files, notes


def run(args: argparse.Namespace) -> int:
    files, notes = export(args.dir, args.out, args.xfail)
    console = plain_console()
    for note in notes:
        console.print(literal(f"note: {note}"))
    for f in files:
        kind = "inline" if f.inline == f.tests else \
            f"{f.inline} inline, {f.tests - f.inline} as scripts"
        console.print(literal(f"{f.path}  ({f.root_cause}: {f.tests} test(s), {kind})"))
    if not files:
        console.print(literal(f"no confirmed bug with a reproducer in {args.dir}: "
                              "no test written"))
    else:
        console.print(literal(f"{len(files)} file(s); run them with: python -m pytest "
                              f"{args.out}"))
    return 0
