"""``dlfuzz reproduce DIR BUG_ID``: run the bug's reproducer scripts, report what they say.

Each script runs in a fresh interpreter (the one the campaign used for that backend), with
the campaign's preloads imported first so the environment matches the campaign's. Exit
status 1 when the guilty backend's script still shows the bug, 0 when it no longer does.
Each script's verdict (its last line) is shown beside its exit status. A missing script or
bug folder is an error (exit 2), never a verdict about a library: a script that cannot be
found says nothing about the bug.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
from pathlib import Path

from dlfuzz.cli.bug_folder import open_bug_folder
from dlfuzz.errors import UsageError
from dlfuzz.triage.confirm import reproducer_command, reproducer_env, verdict_line


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("reproduce", help="run a bug's standalone reproducers")
    p.add_argument("dir", type=Path, help="campaign directory")
    p.add_argument("bug_id", help="bug id from `dlfuzz findings`")
    p.add_argument("--no-preload", action="store_true",
                   help="run without the campaign's --preload modules")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds per script")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    bug, settings, folder, meta = open_bug_folder(args.dir, args.bug_id)
    scripts = {backend: folder / name for backend, name in sorted(meta["repro"].items())}
    missing = [str(path) for path in scripts.values() if not path.is_file()]
    if missing:
        raise UsageError(f"bug {bug.id}: reproducer script(s) missing: {', '.join(missing)}; "
                         "nothing was run (restore the bug folder)")
    pythons = dict(settings.pythons)
    preload: dict[str, list[str]] = {}
    for backend, module in settings.preload:
        preload.setdefault(backend, []).append(module)
    print(f"bug {bug.id}: expected guilty backend: {bug.guilty_backend}; its script exits 1 "
          "while the bug is present, every other script exits 0")
    guilty_present = False
    for backend, script in scripts.items():
        mods = [] if args.no_preload else preload.get(backend, [])
        argv = reproducer_command(backend, script, mods, pythons.get(backend) or sys.executable)
        try:
            proc = subprocess.run(argv, capture_output=True, text=True,
                                  timeout=args.timeout, cwd=folder,
                                  env={**os.environ, **reproducer_env(backend)})
            rc, line = proc.returncode, verdict_line(proc.stdout, proc.stderr)
            status = _status(rc)
        except subprocess.TimeoutExpired:
            rc, status = -1, "none (timed out)"
            line = f"(no verdict: dlfuzz stopped it after {args.timeout:g} s)"
        except OSError as exc:
            raise UsageError(f"cannot run {script.name} ({' '.join(argv[:1])}): {exc}") from exc
        mark = " (expected guilty)" if backend == bug.guilty_backend else ""
        loaded = f" [preloaded {', '.join(mods)}]" if mods else ""
        print(f"{script.name}{mark}: exit {status} -> "
              f"{'bug present' if rc != 0 else 'no bug'}{loaded}")
        print(f"    {line}")
        if backend == bug.guilty_backend and rc != 0:
            guilty_present = True
    return 1 if guilty_present else 0


def _status(rc: int) -> str:
    """An exit status; a negative one names the signal that killed the script."""
    if rc >= 0:
        return str(rc)
    try:
        return f"{rc} (killed by {signal.Signals(-rc).name})"
    except ValueError:
        return str(rc)
