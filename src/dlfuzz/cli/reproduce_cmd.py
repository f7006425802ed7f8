"""``dlfuzz reproduce DIR BUG_ID``: run the bug's reproducer scripts, report what they say.

Each script runs in a fresh interpreter (the one the campaign used for that backend), with
the campaign's preloads imported first so the environment matches the campaign's. Exit
status 1 when the guilty backend's script still shows the bug, 0 when it no longer does.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from dlfuzz import registry
from dlfuzz.errors import UsageError
from dlfuzz.settings import CampaignSettings
from dlfuzz.store.db import Store


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("reproduce", help="run a bug's standalone reproducers")
    p.add_argument("dir", type=Path, help="campaign directory")
    p.add_argument("bug_id", help="bug id from `dlfuzz findings`")
    p.add_argument("--no-preload", action="store_true",
                   help="run without the campaign's --preload modules")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds per script")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    store = Store.open(args.dir)
    try:
        bug = store.bug(args.bug_id)
        if bug is None:
            known = ", ".join(b.id for b in store.bugs()) or "none"
            raise UsageError(f"bug {args.bug_id!r} is not in {args.dir}; known ids: {known}")
        if not bug.dir:
            raise UsageError(f"bug {bug.id} has no folder ({bug.status}): only confirmed bugs "
                             "get reproducers")
        settings = CampaignSettings.from_json(store.meta()["settings"])
        folder = store.root / bug.dir
    finally:
        store.close()
    meta = json.loads((folder / "meta.json").read_text())
    pythons = dict(settings.pythons)
    preload: dict[str, list[str]] = {}
    for backend, module in settings.preload:
        preload.setdefault(backend, []).append(module)
    guilty_present = False
    for backend, name in sorted(meta["repro"].items()):
        script = folder / name
        mods = [] if args.no_preload else preload.get(backend, [])
        argv = _command(backend, script, mods, pythons.get(backend) or sys.executable)
        try:
            proc = subprocess.run(argv, capture_output=True, text=True,
                                  timeout=args.timeout, cwd=folder)
            rc, tail = proc.returncode, (proc.stdout + proc.stderr).strip().splitlines()[-3:]
        except subprocess.TimeoutExpired:
            rc, tail = -1, ["timed out"]
        verdict = "bug present" if rc != 0 else "no bug"
        mark = " (guilty)" if backend == bug.guilty_backend else ""
        loaded = f" [preloaded {', '.join(mods)}]" if mods else ""
        print(f"{name}{mark}: exit {rc} -> {verdict}{loaded}")
        for line in tail:
            print(f"    {line}")
        if backend == bug.guilty_backend and rc != 0:
            guilty_present = True
    return 1 if guilty_present else 0


def _command(backend: str, script: Path, mods: list[str], python: str) -> list[str]:
    """The argv running one reproducer: a backend that writes scripts in another language
    (``repro.js`` for Node, an HTML page for the browser) says how to run them; Python
    scripts run in the campaign's interpreter with the preloads imported first."""
    try:
        cls = registry.load("backend", backend)
    except UsageError:
        cls = None
    if cls is not None and hasattr(cls, "repro_command"):
        return list(cls().repro_command(script, mods))
    code = "".join(f"import {m}; " for m in mods)
    code += f"import runpy; runpy.run_path({str(script)!r}, run_name='__main__')"
    return [python, "-c", code]
