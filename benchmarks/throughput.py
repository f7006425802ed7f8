"""Throughput of the API fuzzing pipeline and the harness overhead per library call.

Prints the cases/s each engine generates on the host alone; then, for backend sets
{numpy, torch, jax} (eager) and with the compiled backends: cases/s of generation +
execution + oracles (what a campaign does between triage steps),
and cases/s of the executor alone, for the numpy-api engine (the shared numpy spec set)
and for the api engine (every library's own specs: a real campaign's mix). Then, for a call that takes >= 20 us, the time per case
through the harness divided by the raw library call timed in-process: the overhead ratio.

Run: ``.venv/bin/python benchmarks/throughput.py [--seconds 15] [--engine api]
[--only LABEL,...] [--gradients on|off|both] [--no-overhead]``; ``--gradients both``
runs each set with and without the backward passes of differentiable cases. Numbers go to
docs/performance.md by hand, with the machine they ran on.
"""

from __future__ import annotations

import argparse
import importlib
import time
import timeit
from typing import Any

import numpy as np

from dlfuzz import registry
from dlfuzz.campaign import processes_of
from dlfuzz.cases import ApiCase, Call, Ref, Tensor
from dlfuzz.executor.pool import Pool, WorkerConfig
from dlfuzz.oracles.base import OracleContext
from dlfuzz.oracles.reference import Judge

SETS = {
    "eager numpy+torch": ["numpy", "torch"],
    "eager numpy+torch+jax": ["numpy", "torch", "jax"],
    "eager numpy+torch+jax+tf": ["numpy", "torch", "jax", "tf"],
    "compiled torch-compile+jax-jit+tf-xla (+numpy, jax refs)":
        ["numpy", "jax", "torch-compile", "jax-jit", "tf-xla"],
}

# The api engine over the per-library specs (what ``dlfuzz run --engine api`` fuzzes):
# every API of every library in the set, with its counterparts.
API_SETS = {
    "api numpy+torch+jax+tf": ["numpy", "torch", "jax", "tf"],
    "api numpy+torch+jax": ["numpy", "torch", "jax"],
    "api torch+torch-compile+jax+jax-jit+tf+tf-xla":
        ["torch", "torch-compile", "jax", "jax-jit", "tf", "tf-xla"],
    # TF.js calls' counterparts are TensorFlow's: a TF.js campaign runs both
    "api tfjs-cpu+tf": ["tfjs-cpu", "tf"],
}


def api_judging(pool: Pool, backends: list[str]) -> tuple[list[Any], OracleContext]:
    """The oracles that judge API cases, and a context whose float64 judge re-runs
    suspicious cases on ``pool``, as a campaign's does."""
    classes = {b: registry.load("backend", b) for b in backends}
    library_of = {b: c.library for b, c in classes.items()}
    compiled = {b: c.compiled for b, c in classes.items()}
    judge = Judge(lambda cs, only: pool.run(cs, only=only),
                  [b for b in backends if not compiled[b]], library_of)
    oracles = [o for o in (registry.load("oracle", n)() for n in registry.names("oracle"))
               if {"api", "grad"} & set(getattr(o, "case_kinds", ("api", "graph")))]
    return oracles, OracleContext(judge, library_of, compiled)


def judge_items(oracles: list[Any], items: list[tuple[Any, Any]], ctx: OracleContext
                ) -> list[list[Any]]:
    """Each oracle on the cases of the kinds it judges, as ``Campaign.judge_cases``:
    the findings per item."""
    found: list[list[Any]] = [[] for _ in items]
    for oracle in oracles:
        index = [i for i, it in enumerate(items)
                 if getattr(it[0], "kind", "api") in oracle.case_kinds]
        if index:
            for i, fs in zip(index, oracle.check_many([items[i] for i in index], ctx),
                             strict=True):
                found[i].extend(fs)
    return found


def pipeline(backends: list[str], seconds: float, batch: int, warmup: float,
             engine_name: str = "numpy-api", replicas: int = 0,
             **engine_options: object) -> dict[str, float]:
    """Cases/s of generation + execution + oracles for one engine on one backend set."""
    engine_cls = registry.load("engine", engine_name)
    classes = {b: registry.load("backend", b) for b in backends}
    libraries = tuple(dict.fromkeys(c.library for c in classes.values()))
    engine = engine_cls(seed=7, libraries=libraries, **engine_options)
    # Worker processes per backend as a campaign has them (``--replicas``: 0 = default).
    with Pool([WorkerConfig(b, replicas=processes_of(b, replicas)) for b in backends]) as pool:
        pool.start()
        oracles, ctx = api_judging(pool, backends)
        judge = ctx.judge
        # Warm-up, not counted: first calls, first compiles, the engine's signature pools
        # filling up and its cost estimate settling (as in the first minute of a campaign).
        t_warm = time.perf_counter()
        while time.perf_counter() - t_warm < warmup:
            cases = engine.propose(batch)
            results = pool.run(cases)
            for case, outcomes in zip(cases, results, strict=True):
                engine.feedback(case, outcomes, ())
        n_cases, n_grad, exec_s, gen_s, t_start = 0, 0, 0.0, 0.0, time.perf_counter()
        busy: dict[str, float] = {}
        while time.perf_counter() - t_start < seconds:
            t0 = time.perf_counter()
            cases = engine.propose(batch)
            gen_s += time.perf_counter() - t0
            t0 = time.perf_counter()
            results = pool.run(cases)
            exec_s += time.perf_counter() - t0
            items = list(zip(cases, results, strict=True))
            judge_items(oracles, items, ctx)
            for case, outcomes in items:
                engine.feedback(case, outcomes, ())
            n_cases += len(cases)
            for case, outcomes in items:
                kind = getattr(case, "kind", "api")
                n_grad += kind == "grad"
                # The slowest backend's time on the case, summed per kind.
                busy[kind] = busy.get(kind, 0.0) + max(
                    (o.duration_s for o in outcomes.values()), default=0.0)
        total = time.perf_counter() - t_start
    return {"cases": n_cases, "gradient_cases": n_grad,
            "api_case_ms": 1e3 * busy.get("api", 0.0) / max(n_cases - n_grad, 1),
            "grad_case_ms": 1e3 * busy.get("grad", 0.0) / max(n_grad, 1), "pipeline_cps": n_cases / total, "executor_cps": n_cases / exec_s,
            "generation_cps": n_cases / gen_s if gen_s else float("inf"),
            "suspicious": ctx.stats.get("suspicious", 0), "reference_runs": judge.reference_runs}


OPS = {  # name -> (numpy, torch, jax targets, shape)
    "svd": ("numpy.linalg.svd", "torch.linalg.svd", "jax.numpy.linalg.svd", (16, 16)),
    "matmul": ("numpy.matmul", "torch.matmul", "jax.numpy.matmul", (96, 96)),
}


def _case(op: str) -> ApiCase:
    np_t, torch_t, jax_t, shape = OPS[op]
    rng = np.random.default_rng(0)
    tensors = tuple(Tensor.from_numpy(rng.normal(size=shape)) for _ in range(2))
    args = (Ref(0),) if op == "svd" else (Ref(0), Ref(1))
    calls = (("numpy", Call(np_t, args)), ("torch", Call(torch_t, args)),
             ("jax", Call(jax_t, args)))
    return ApiCase(op, tensors[:len(args)], calls)


def raw_call_seconds(library: str, op: str) -> float:
    """The library call alone, in this process, on the same inputs (one thread)."""
    case = _case(op)
    arrays = [t.to_numpy() for t in case.tensors]
    module, _, name = dict(case.calls)[library].target.rpartition(".")
    fn_ = getattr(importlib.import_module(module), name)
    if library == "torch":
        import torch

        torch.set_num_threads(1)
        inputs = [torch.from_numpy(a) for a in arrays]
        fn = lambda: fn_(*inputs)  # noqa: E731
    elif library == "jax":
        import jax

        jax.config.update("jax_enable_x64", True)
        inputs = [jax.numpy.asarray(a) for a in arrays]
        fn = lambda: jax.block_until_ready(fn_(*inputs))  # noqa: E731
    else:
        fn = lambda: fn_(*arrays)  # noqa: E731
    fn()
    reps = 300
    return min(timeit.repeat(fn, number=reps, repeat=5)) / reps


def overhead(op: str, reps: int = 2000) -> list[tuple[str, float, float, float]]:
    rows = []
    case = _case(op)
    for backend in ("numpy", "torch", "jax"):
        with Pool([WorkerConfig(backend)]) as pool:
            pool.start()
            pool.run([case] * 50)
            t0 = time.perf_counter()
            pool.run([case] * reps)
            harness = (time.perf_counter() - t0) / reps
        raw = raw_call_seconds(backend, op)
        rows.append((backend, raw, harness, harness / raw))
    return rows


def generation_rate(engine_name: str, cases: int = 3000) -> float:
    """Cases/s the engine proposes on the host alone (no workers), after a warm-up."""
    engine = registry.load("engine", engine_name)(seed=0)
    engine.propose(500)  # spec caches and value pools
    start = time.perf_counter()
    engine.propose(cases)
    return cases / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=20.0, help="measured time per set")
    parser.add_argument("--warmup", type=float, default=40.0, help="uncounted time per set")
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--engine", choices=("numpy-api", "api", "both"), default="both",
                        help="numpy-api: the shared numpy spec set; api: the per-library "
                             "specs of every library in the set (a real campaign's mix)")
    parser.add_argument("--only", help="comma-separated backend-set labels to run")
    parser.add_argument("--replicas", type=int, default=0,
                        help="worker processes of each backend that compiles every new "
                             "signature, as `dlfuzz run --replicas` (0: the campaign default)")
    parser.add_argument("--gradients", choices=("on", "off", "both"), default="on",
                        help="the engines' gradient cases (on: the campaign default; both: "
                             "every set twice, to show what the backward passes cost)")
    parser.add_argument("--no-overhead", action="store_true",
                        help="skip the harness-overhead table")
    args = parser.parse_args()
    engines = ("numpy-api", "api") if args.engine == "both" else (args.engine,)
    only = set(args.only.split(",")) if args.only else None
    for engine in engines:
        print(f"# {engine} generation on the host (one core, no workers): "
              f"{generation_rate(engine):.0f} cases/s")
        print(f"# dlfuzz API pipeline throughput, engine {engine}: all specs, "
              f"{args.warmup:.0f} s warm-up, then {args.seconds:.0f} s measured per set, "
              f"batch {args.batch}")
        print(f"{'backend set':60s} {'grads':>5s} {'cases':>8s} {'grad %':>6s} "
              f"{'pipeline/s':>11s} {'executor/s':>11s} {'suspicious':>10s} {'ref runs':>8s} "
              f"{'api ms':>7s} {'grad ms':>7s}")
        modes = {"on": (True,), "off": (False,), "both": (False, True)}[args.gradients]
        for label, backends in (SETS if engine == "numpy-api" else API_SETS).items():
            if only and label not in only:
                continue
            for gradients in modes:
                r = pipeline(backends, args.seconds, args.batch, args.warmup, engine,
                             args.replicas, gradients=gradients)
                share = 100.0 * r["gradient_cases"] / max(r["cases"], 1)
                print(f"{label:60s} {'on' if gradients else 'off':>5s} {r['cases']:8d} "
                      f"{share:6.1f} {r['pipeline_cps']:11.0f} {r['executor_cps']:11.0f} "
                      f"{r['suspicious']:10d} {r['reference_runs']:8d} "
                      f"{r['api_case_ms']:7.2f} {r['grad_case_ms']:7.2f}", flush=True)
    if args.no_overhead:
        return
    for op in OPS:
        shape = "x".join(map(str, OPS[op][3]))
        print(f"\n# harness overhead: float64 {op} {shape}")
        print(f"{'backend':8s} {'raw call us':>12s} {'per case us':>12s} {'ratio':>6s}")
        for backend, raw, harness, ratio in overhead(op):
            print(f"{backend:8s} {raw * 1e6:12.1f} {harness * 1e6:12.1f} {ratio:6.2f}",
                  flush=True)


if __name__ == "__main__":
    main()
