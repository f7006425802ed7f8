"""``make demo``: a two-minute campaign against the installed libraries.

Runs the API engine on every built-in backend that starts here, then prints the bugs
found and the path of the HTML report. The campaign directory is ``demo-campaign/``
(replaced on each run).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from dlfuzz import registry
from dlfuzz.cli.main import main as cli_main
from dlfuzz.executor.pool import Pool, WorkerConfig

OUT = Path("demo-campaign")
BUDGET = "110s"


def main() -> None:
    with Pool([WorkerConfig(n) for n in registry.names("backend")]) as pool:
        versions = pool.start()
        for name, reason in pool.unavailable.items():
            print(f"[demo] skipping {name}: {reason}", file=sys.stderr)
    if OUT.exists():
        shutil.rmtree(OUT)
    backends = ",".join(n for n in registry.names("backend") if n in versions)
    print(f"[demo] fuzzing {backends} for {BUDGET} into {OUT}/", file=sys.stderr)
    for argv in (["run", "--engine", "numpy-api", "--backends", backends, "--budget", BUDGET,
                  "--seed", "1", "--out", str(OUT)],
                 ["findings", str(OUT)],
                 ["report", str(OUT)]):
        try:
            cli_main(argv)
        except SystemExit as exc:
            if exc.code not in (0, None):
                raise


if __name__ == "__main__":
    main()
