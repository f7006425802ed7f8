"""Model-engine throughput and diversity.

For each backend set, models/s of the whole loop minus triage: the engine proposes
models (``--inputs`` input sets each), every backend builds/compiles and runs them, the
oracles judge every case and the engine learns. Warm-up (worker start, first compiles)
is not counted. Sets: {torch, ort} (the NNSmith comparison: 17.6 models/s on this
machine), {torch, jax, tf} (the autodiff libraries: every backend runs the training
steps), with ort-noopt, and with the compiled backends (torch-compile, jax-jit,
tf-xla). Graphs are DLJSFuzzer mutants of a 10-node identity chain (``--method``
switches to LEMON mutants of LeNet-5, or to synthesized graphs with ``synth``). Then the mean pairwise edit distance of the
generated models (DLJSFuzzer reported 6.46).

Training steps of the models (``engines/model/training.py``) are on by default, as in a
campaign; ``--gradients both`` runs each set without, then with them, and prints the
ratio of models/s.

Run: ``.venv/bin/python benchmarks/models.py [--seconds 30] [--gradients on|off|both]``.
"""

from __future__ import annotations

import argparse
import time
from itertools import combinations
from typing import Any

import numpy as np

from dlfuzz import registry
from dlfuzz.engines.model.dljs_rules import edit_distance
from dlfuzz.engines.model.engine import ModelEngine
from dlfuzz.executor.pool import Pool, WorkerConfig
from dlfuzz.oracles.base import OracleContext
from dlfuzz.oracles.reference import Judge
from throughput import judge_items

SETS = {
    "torch vs ort": ["torch", "ort"],
    "autodiff: torch, jax, tf": ["torch", "jax", "tf"],
    "torch vs ort vs ort-noopt": ["torch", "ort", "ort-noopt"],
    "with jit/xla: torch, ort, jax-jit, tf-xla": ["torch", "ort", "jax-jit", "tf-xla"],
    "with torch-compile too": ["torch", "ort", "jax-jit", "tf-xla", "torch-compile"],
}


def run_set(backends: list[str], seconds: float, warmup: float, method: str, seed: str,
            inputs: int, window: float = 0.0, gradients: bool = True) -> dict[str, Any]:
    classes = {b: registry.load("backend", b) for b in backends}
    library_of = {b: c.library for b, c in classes.items()}
    compiled = {b: c.compiled for b, c in classes.items()}
    engine = ModelEngine(seed=3, libraries=tuple(dict.fromkeys(library_of.values())),
                         method=method, seed_models=(seed,) if seed else (),
                         inputs_per_model=inputs, gradients=gradients)
    oracles = [o for o in (registry.load("oracle", n)() for n in registry.names("oracle"))
               if {"graph", "train"} & set(getattr(o, "case_kinds", ("api", "graph")))]
    steps = 0
    step_s: dict[str, float] = {}  # backend -> seconds spent in training steps
    graphs = []
    with Pool([WorkerConfig(b, case_timeout_s=60) for b in backends]) as pool:
        pool.start()
        judge = Judge(lambda cs, only: pool.run(cs, only=only),
                      [b for b in backends if not compiled[b]], library_of)
        ctx = OracleContext(judge, library_of, compiled)

        def round_trip() -> int:
            nonlocal steps
            cases = engine.propose(8 * inputs)
            results = pool.run(cases)
            items = list(zip(cases, results, strict=True))
            found = judge_items(oracles, items, ctx)
            for (case, outcomes), fs in zip(items, found, strict=True):
                engine.feedback(case, outcomes, fs)
            models = [c for c in cases if c.kind == "graph"]
            steps += len(cases) - len(models)
            for case, outcomes in items:
                if case.kind == "train":
                    for b, o in outcomes.items():
                        step_s[b] = step_s.get(b, 0.0) + o.duration_s
            graphs.extend(c.graph for c in models[::inputs])
            return len(models) // inputs

        t0 = time.perf_counter()
        while time.perf_counter() - t0 < warmup:
            round_trip()
        models, steps, t1 = 0, 0, time.perf_counter()
        step_s.clear()
        windows: list[float] = []  # models/s per ``window`` seconds (the decay check)
        w_models, w_start = 0, t1
        while time.perf_counter() - t1 < seconds:
            done = round_trip()
            models += done
            w_models += done
            now = time.perf_counter()
            if window and now - w_start >= window:
                windows.append(w_models / (now - w_start))
                print(f"  window {len(windows)}: {windows[-1]:.1f} models/s", flush=True)
                w_models, w_start = 0, now
        elapsed = time.perf_counter() - t1
    return {"models": models, "seconds": elapsed, "models_per_s": models / elapsed,
            "graphs": graphs, "windows": windows, "train_steps": steps,
            "step_ms": {b: 1e3 * t / max(steps, 1) for b, t in step_s.items()}}


def mean_edit_distance(graphs: list, pairs: int = 400, seed: int = 0) -> float:
    rng = np.random.default_rng(seed)
    all_pairs = list(combinations(range(len(graphs)), 2))
    if not all_pairs:
        return 0.0
    pick = rng.choice(len(all_pairs), size=min(pairs, len(all_pairs)), replace=False)
    return float(np.mean([edit_distance(graphs[all_pairs[i][0]], graphs[all_pairs[i][1]])
                          for i in pick]))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--warmup", type=float, default=20.0)
    ap.add_argument("--inputs", type=int, default=1, help="input sets per model")
    ap.add_argument("--method", default="dljsfuzzer")
    ap.add_argument("--seed-model", default=None,
                    help="the method's seed (default: identity for dljsfuzzer, lenet5 for "
                         "lemon, none for synth)")
    ap.add_argument("--window", type=float, default=0.0,
                    help="also print models/s per this many seconds, and the last "
                         "window's rate over the first's (does the method run dry?)")
    ap.add_argument("--gradients", choices=("on", "off", "both"), default="on",
                    help="training steps of the models (the engine's default: on); both "
                         "runs each set without, then with them")
    ap.add_argument("--only", type=int, nargs="*", default=None,
                    help="run only these backend sets (1-based, in the order printed)")
    args = ap.parse_args()
    if args.seed_model is None:
        args.seed_model = {"dljsfuzzer": "identity", "lemon": "lenet5"}.get(args.method, "")
    print(f"method {args.method}, seed {args.seed_model}, {args.inputs} input set(s) per "
          f"model, {args.seconds:.0f} s measured after {args.warmup:.0f} s warm-up")
    graphs: list = []
    for i, (label, backends) in enumerate(SETS.items(), 1):
        if args.only and i not in args.only:
            continue
        modes = {"on": (True,), "off": (False,), "both": (False, True)}[args.gradients]
        rates = []
        for gradients in modes:
            r = run_set(backends, args.seconds, args.warmup, args.method, args.seed_model,
                        args.inputs, args.window, gradients)
            rates.append(r["models_per_s"])
            graphs = graphs or r["graphs"]
            nodes = np.mean([len(g.nodes) for g in r["graphs"]]) if r["graphs"] else 0
            kinds = {op for g in r["graphs"] for op in g.ops()}
            dtypes = sorted({g.dtype for g in r["graphs"]})
            print(f"{label:48s} grad {'on ' if gradients else 'off'} "
                  f"{r['models_per_s']:8.1f} models/s  ({r['models']} models, "
                  f"{r['train_steps']} training steps, mean {nodes:.1f} nodes, "
                  f"{len(kinds)} op kinds, {'/'.join(dtypes)})")
            if r["step_ms"]:
                print("  ms per training step: " + ", ".join(
                    f"{b} {ms:.0f}" for b, ms in sorted(r["step_ms"].items())))
            if len(r["windows"]) >= 2:
                first, last = r["windows"][0], r["windows"][-1]
                print(f"  last window / first window: {last:.1f} / {first:.1f} = "
                      f"{last / first:.2f}")
        if len(rates) == 2:
            print(f"  models/s with training steps / without: {rates[1] / rates[0]:.2f}")
    print(f"mean pairwise edit distance of {len(graphs)} generated models: "
          f"{mean_edit_distance(graphs):.2f} (DLJSFuzzer: 6.46)")


if __name__ == "__main__":
    main()
