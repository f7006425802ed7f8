"""Scaling out on Ray: executor throughput on one and two nodes, and where the driver
saturates.

Part 1, ``executors``: the pipeline of ``benchmarks/throughput.py`` (generation,
execution, oracles; no triage) over the same batches of one backend set, three ways: the local pool; Ray with
one node (the local instance ``--executor ray`` starts); Ray with two nodes (a head and
a second node, each ``ray start --num-cpus 1`` on this machine, as the tests start
them). Prints cases/s and the ratio to the local pool. On one 2-core machine two nodes
share the same two cores: the ratio says what Ray costs, not what a second machine
brings.

Part 2, ``driver``: a campaign's driver does, per batch, generation, taking in the
nodes' results (unpickling what Ray moved), the oracles, and one store transaction.
Real batch results (recorded once on the local pool) are replayed through those steps
as fast as the driver takes them: its capacity in cases/s. Nodes that run M cases/s
each saturate it at N = capacity / M nodes; the table gives N for several M. Triage is
left out (it runs per new finding, not per case: docs/scale.md).

Run: ``.venv/bin/python benchmarks/cluster.py [--backends numpy,torch,jax]
[--engine api] [--warm 8] [--timed 16] [--seconds 20] [--only executors|driver]``.
"""

from __future__ import annotations

import argparse
import os
import pickle
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from dlfuzz import registry
from dlfuzz.campaign import processes_of
from dlfuzz.executor.pool import Pool, WorkerConfig
from dlfuzz.executor.ray_pool import RayPool
from dlfuzz.oracles.base import OracleContext
from dlfuzz.oracles.reference import Judge
from dlfuzz.store.db import Store
from throughput import api_judging, judge_items

RAY = str(Path(sys.executable).with_name("ray"))
ENV = {**os.environ, "RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}


def two_nodes() -> tuple[str, subprocess.Popen[bytes]]:
    """A head and a second node on this machine; (address, the second's process)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    temp = tempfile.mkdtemp(prefix="dlfb", dir="/tmp")
    subprocess.run([RAY, "start", "--head", "--node-ip-address", "127.0.0.1", "--port",
                    str(port), "--num-cpus", "1", "--include-dashboard", "false",
                    "--disable-usage-stats", "--temp-dir", temp],
                   check=True, capture_output=True, env=ENV, timeout=120)
    address = f"127.0.0.1:{port}"
    second = subprocess.Popen([RAY, "start", "--address", address, "--node-ip-address",
                               "127.0.0.1", "--num-cpus", "1", "--block"], env=ENV,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    time.sleep(8)  # the second raylet registers within a few seconds
    return address, second


def fixed_pipeline(backends: list[str], engine_name: str, warm: int, batches: int,
                   make_pool: Callable[[list[WorkerConfig]], Pool]) -> dict[str, float]:
    """Cases/s of generation + execution + oracles over the same cases whatever the
    executor: ``warm`` batches not counted, then ``batches`` timed. (A time window would
    cover different APIs on a faster executor, and per-API costs differ a hundredfold.)"""
    classes = {b: registry.load("backend", b) for b in backends}
    libraries = tuple(dict.fromkeys(c.library for c in classes.values()))
    # Fixed groups per signature: the stream no longer follows measured times per API.
    engine = registry.load("engine", engine_name)(seed=7, libraries=libraries,
                                                  signature_inputs=16)
    with make_pool([WorkerConfig(b, replicas=processes_of(b, 0)) for b in backends]) as pool:
        pool.start()
        oracles, ctx = api_judging(pool, backends)
        n_cases, exec_s, t_start = 0, 0.0, 0.0
        for i in range(warm + batches):
            if i == warm:
                t_start = time.perf_counter()
            cases = engine.propose(256)
            t0 = time.perf_counter()
            results = pool.run(cases)
            if i >= warm:
                exec_s += time.perf_counter() - t0
                n_cases += len(cases)
            items = list(zip(cases, results, strict=True))
            judge_items(oracles, items, ctx)
            for case, outcomes in items:
                engine.feedback(case, outcomes, ())
        total = time.perf_counter() - t_start
    return {"cases": n_cases, "pipeline_cps": n_cases / total, "executor_cps": n_cases / exec_s}


def executors(backends: list[str], engine: str, warm: int, batches: int) -> None:
    os.environ.update(RAY_AUTH_MODE="disabled", RAY_USAGE_STATS_ENABLED="0")
    print(f"== executors: {engine} engine on {','.join(backends)}, {batches} batches of 256 "
          f"timed after {warm} (generation + execution + oracles; the same cases each) ==")
    rows: list[tuple[str, dict[str, float]]] = []
    rows.append(("local pool", fixed_pipeline(backends, engine, warm, batches, Pool)))
    rows.append(("ray, 1 node (local instance)",
                 fixed_pipeline(backends, engine, warm, batches, RayPool)))
    address, second = two_nodes()
    try:
        rows.append(("ray, 2 nodes (head + ray start)", fixed_pipeline(
            backends, engine, warm, batches,
            lambda configs: RayPool(configs, address=address))))
    finally:
        os.killpg(second.pid, signal.SIGKILL)
        subprocess.run([RAY, "stop", "--force"], capture_output=True, env=ENV, timeout=120)
    base = rows[0][1]["pipeline_cps"]
    print(f"{'executor':34} {'pipeline cases/s':>17} {'executor cases/s':>17} {'vs local':>9}")
    for label, r in rows:
        print(f"{label:34} {r['pipeline_cps']:17.0f} {r['executor_cps']:17.0f} "
              f"{r['pipeline_cps'] / base:9.2f}")


def driver(backends: list[str], engine_name: str, seconds: float, batches: int) -> None:
    print(f"== driver: {engine_name} engine on {','.join(backends)}, {batches} real batches "
          f"replayed for {seconds:g} s ==")
    classes = {b: registry.load("backend", b) for b in backends}
    libraries = tuple(dict.fromkeys(c.library for c in classes.values()))
    engine = registry.load("engine", engine_name)(seed=7, libraries=libraries)
    recorded = []
    with Pool([WorkerConfig(b, replicas=processes_of(b, 0)) for b in backends]) as pool:
        pool.start()
        for _ in range(batches):
            cases = engine.propose(256)
            results = pool.run(cases)
            for case, outcomes in zip(cases, results, strict=True):
                engine.feedback(case, outcomes, ())
            # What Ray moves from the nodes: each backend's outcomes, pickled.
            recorded.append((cases, pickle.dumps(results, protocol=5)))
    library_of = {b: c.library for b, c in classes.items()}
    compiled = {b: c.compiled for b, c in classes.items()}
    oracles = [o for o in (registry.load("oracle", n)() for n in registry.names("oracle"))
               if "api" in getattr(o, "case_kinds", ("api", "graph"))]
    # No workers in the replay: a suspicious case gets no reference run (counted).
    judge = Judge(lambda cs, only: [{} for _ in cs], [b for b in backends if not compiled[b]],
                  library_of)
    ctx = OracleContext(judge, library_of, compiled)
    spent: Counter[str] = Counter()
    n_cases = findings = 0
    with tempfile.TemporaryDirectory() as tmp:
        store = Store.create(Path(tmp) / "camp", {"settings": {}})
        t_start = time.perf_counter()
        idx = 0
        while time.perf_counter() - t_start < seconds:
            cases, blob = recorded[idx % len(recorded)]
            t0 = time.perf_counter()
            engine.propose(len(cases))  # generation stays on the driver
            t1 = time.perf_counter()
            results = pickle.loads(blob)
            t2 = time.perf_counter()
            items = list(zip(cases, results, strict=True))
            found = sum(len(f) for f in judge_items(oracles, items, ctx))
            t3 = time.perf_counter()
            store.finish_batch(idx, len(cases), found, t3 - t0, {"findings": found},
                               {b: {"version": "", "cases": len(cases), "crashes": 0,
                                    "timeouts": 0, "restarts": 0} for b in backends})
            t4 = time.perf_counter()
            spent.update(generation=t1 - t0, results=t2 - t1, oracles=t3 - t2, store=t4 - t3)
            n_cases += len(cases)
            findings += found
            idx += 1
        total = time.perf_counter() - t_start
        store.close()
    capacity = n_cases / total
    print(f"driver capacity: {capacity:,.0f} cases/s on one core ({n_cases} cases, "
          f"{findings} findings, {ctx.stats.get('suspicious', 0)} suspicious)")
    print("time per step: " + ", ".join(f"{k} {v / total:.0%}" for k, v in spent.items()))
    print(f"{'cases/s per node (M)':>22} {'nodes at saturation (N)':>24}")
    for m in (100, 500, 1000, 2000, 5000):
        print(f"{m:22d} {capacity / m:24.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backends", default="numpy,torch,jax")
    parser.add_argument("--engine", default="api")
    parser.add_argument("--seconds", type=float, default=20.0, help="driver replay time")
    parser.add_argument("--warm", type=int, default=8, help="batches before the timed ones")
    parser.add_argument("--timed", type=int, default=16, help="timed batches per executor")
    parser.add_argument("--batches", type=int, default=20, help="recorded for the driver")
    parser.add_argument("--only", choices=("executors", "driver"))
    args = parser.parse_args()
    backends = args.backends.split(",")
    if args.only in (None, "executors"):
        executors(backends, args.engine, args.warm, args.timed)
    if args.only in (None, "driver"):
        driver(backends, args.engine, args.seconds, args.batches)


if __name__ == "__main__":
    main()
