"""What a worker restart costs, forked by the fork server against spawned.

A campaign restarts a worker after every crash, out-of-memory death and hang (20-40
times in a 300 s API campaign on numpy, torch, jax and tf), and the batch waits for it.
For each backend this runs batches alternating a case that kills the worker
(``os.abort``: SIGABRT, as a library's CHECK failure) with an ordinary call, once with the
fork server (the default) and once with ``DLFUZZ_FORK_SERVER=off`` (a new interpreter
importing the library per restart), and prints seconds per restart and the ratio.

Run: ``.venv/bin/python benchmarks/restarts.py [--backends numpy,torch,jax,tf]
[--restarts 6]``. Numbers go to docs/performance.md by hand, with the machine.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from dlfuzz.cases import ApiCase, Call, Ref, Tensor
from dlfuzz.executor import zygote
from dlfuzz.executor.pool import Worker, WorkerConfig

# An ordinary call per library (the first case after a restart pays the library's first
# op, which a campaign pays too).
ORDINARY = {"numpy": "numpy.abs", "torch": "torch.abs", "jax": "jax.numpy.abs",
            "tf": "tensorflow.math.abs"}


def cases(backend: str, restarts: int) -> list[ApiCase]:
    x = Tensor.from_numpy(np.arange(4, dtype=np.float32))
    abort = ApiCase("abort", (), ((backend, Call("os.abort", ())),))
    ordinary = ApiCase("abs", (x,), ((backend, Call(ORDINARY[backend], (Ref(0),))),))
    out = [ordinary]
    for _ in range(restarts):
        out += [abort, ordinary]
    return out


def seconds_per_restart(backend: str, restarts: int, forked: bool) -> tuple[float, float, int]:
    """(first start s, seconds per restart, restarts seen)."""
    os.environ[zygote.ENV_SWITCH] = "on" if forked else "off"
    worker = Worker(WorkerConfig(backend, case_timeout_s=60.0))
    try:
        started = time.perf_counter()
        worker.start()
        first = time.perf_counter() - started
        batch = cases(backend, restarts)
        started = time.perf_counter()
        outcomes = worker.run(batch)
        elapsed = time.perf_counter() - started
        aborts = outcomes[1::2]
        assert all(o.status == "crash" for o in aborts), [o.status for o in aborts]
        assert all(o.ok for o in outcomes[::2]), [o.message for o in outcomes[::2]]
        assert worker.info.get("forked", False) is forked, worker.info
        return first, elapsed / restarts, worker.stats.restarts
    finally:
        worker.close()
        zygote.REGISTRY.close_idle()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backends", default="numpy,torch,jax,tf")
    parser.add_argument("--restarts", type=int, default=6)
    args = parser.parse_args()
    print(f"{'backend':8} {'first start s':>14} {'spawned s/restart':>18} "
          f"{'forked s/restart':>17} {'ratio':>7}")
    for backend in args.backends.split(","):
        first, spawned, _ = seconds_per_restart(backend, args.restarts, forked=False)
        _, forked, seen = seconds_per_restart(backend, args.restarts, forked=True)
        assert seen == args.restarts, seen
        print(f"{backend:8} {first:14.2f} {spawned:18.3f} {forked:17.3f} "
              f"{spawned / forked:7.1f}x", flush=True)


if __name__ == "__main__":
    main()
