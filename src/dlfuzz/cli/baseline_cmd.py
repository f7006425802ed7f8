"""``dlfuzz baseline DIR --out known.json``: the campaign's confirmed root causes, as known.

The file (``triage.baseline``) lists each root cause with its key, severity, API, backends
and places, message, bug id, and its guilty backend's reproducer (path and content), so
``--baseline known.json`` on ``run`` and ``findings`` can tell known bugs from new ones and
re-check whether a known one is fixed. ``--merge`` keeps the entries already in the file
whose root cause this campaign did not show (a team's baseline grows over campaigns of
several libraries); without it the file is replaced.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from dlfuzz.cli.findings_cmd import by_root_cause, collect
from dlfuzz.errors import UsageError
from dlfuzz.store.artifacts import write_atomic
from dlfuzz.store.db import Store
from dlfuzz.triage.baseline import baseline_json, entry_of, load_baseline


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("baseline", help="write a campaign's root causes as known bugs",
                       description="Write the confirmed root causes of a campaign to a JSON "
                                   "file that --baseline on `run` and `findings` reads: bugs "
                                   "listed there are reported apart and never fail --fail-on.")
    p.add_argument("dir", type=Path, help="campaign directory")
    p.add_argument("--out", type=Path, required=True, metavar="FILE",
                   help="the baseline file to write, e.g. known.json")
    p.add_argument("--merge", action="store_true",
                   help="keep the entries already in --out that this campaign did not show")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    out: Path = args.out
    if out.is_dir():
        raise UsageError(f"--out {out}: is a directory; give a file name, e.g. "
                         f"{out / 'known.json'}")
    if not out.parent.is_dir():
        raise UsageError(f"--out {out}: folder {out.parent} does not exist; create it first")
    previous = load_baseline(out, "--out") if args.merge and out.exists() else None
    store = Store.open(args.dir)
    try:
        records = collect(store, include_flaky=False)
        versions = {str(r["name"]): str(r["version"]) for r in store.backend_rows()}
        root = store.root.resolve()
    finally:
        store.close()
    entries = [entry_of(r) for r in by_root_cause(records)]
    kept = []
    if previous is not None:
        keys = {e.key for e in entries}
        kept = [e for e in previous.entries if e.key not in keys]
    data = baseline_json(root, [*entries, *kept], versions)
    write_atomic(out, (json.dumps(data, indent=2) + "\n").encode("utf-8"))
    note = f" (+{len(kept)} kept from the previous file)" if kept else ""
    print(f"{out}: {len(entries)} known root cause(s) from {args.dir}{note}")
    return 0
