"""TensorJSFuzz's comparison redone on torch, TensorFlow and JAX, plus the API engine's cost.

Prints:
1. valid-input rate per generator (random, typed = Alg. 1, adjust = Alg. 1 + 2, z3) per
   library, over the same APIs (every non-skipped spec), N draws per API, each run on the
   library's eager backend in the sandboxed workers; a draw is valid when the call
   returns. TensorJSFuzz reported Random 36.05%, SMT 62.12%, TensorJSFuzz 71.83%.
2. constraints per API (by source) and validated counterparts per library (by kind);
3. inputs and seconds to the first bug on the planted bugs (a conv2d wrong for one
   stride/dilation pair; a dropout accepting p outside [0, 1]) per generator;
4. cases/s of the whole pipeline on the eager backends, with adjust and with z3.

Run: ``.venv/bin/python benchmarks/api_engine.py [--per-api 10] [--parts 1,2,3,4]``.
Numbers go to docs/performance.md by hand.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from dlfuzz.engines.api.libspecs import load_library
from dlfuzz.executor.pool import Pool, WorkerConfig

LIBRARIES = ("torch", "tf", "jax", "tfjs")
EAGER = {"torch": "torch", "tf": "tf", "jax": "jax", "tfjs": "tfjs-cpu"}  # library -> backend
MODES = ("random", "typed", "adjust", "z3")
PLANTED = Path(__file__).resolve().parents[1] / "tests" / "planted"


def valid_rates(library: str, per_api: int, modes: tuple[str, ...]) -> dict[str, dict]:
    from dlfuzz.engines.api.libgen import LibGenerator, to_case

    specs = [s for s in load_library(library).values() if not s.skip]
    out: dict[str, dict] = {}
    backend = EAGER[library]
    with Pool([WorkerConfig(backend, case_timeout_s=20.0)]) as pool:
        pool.start()
        for mode in modes:
            gen = LibGenerator(np.random.default_rng(1), mode=mode)
            cases, t_gen = [], 0.0
            for spec in specs:
                t0 = time.perf_counter()
                draws = [gen.draw(spec) for _ in range(per_api)]
                t_gen += time.perf_counter() - t0
                cases.extend(to_case(d) for d in draws)
            t0 = time.perf_counter()
            ok = 0
            for i in range(0, len(cases), 256):
                results = pool.run(cases[i:i + 256])
                ok += sum(r[backend].ok for r in results)
            out[mode] = {"apis": len(specs), "draws": len(cases), "valid": ok / len(cases),
                         "gen_per_s": len(cases) / t_gen if t_gen else 0.0,
                         "run_s": time.perf_counter() - t0}
            print(f"  {library:5s} {mode:6s} valid {100 * ok / len(cases):5.1f}%  "
                  f"({len(cases)} draws over {len(specs)} APIs, generation "
                  f"{out[mode]['gen_per_s']:.0f}/s)", flush=True)
    return out


def spec_counts() -> None:
    from dlfuzz.engines.api.counterparts import load_counterparts

    for library in LIBRARIES:
        specs = [s for s in load_library(library).values() if not s.skip]
        by_source = collections.Counter(c.source for s in specs for c in s.constraints)
        n = len(specs)
        print(f"  {library:5s} {n} APIs, {sum(by_source.values()) / n:.2f} constraints/API "
              f"({', '.join(f'{k} {v}' for k, v in sorted(by_source.items()))})")
        cps = load_counterparts(library)
        kinds = collections.Counter(cp.kind for lst in cps.values() for cp in lst)
        print(f"        counterparts: {sum(kinds.values())} validated for {len(cps)} APIs "
              f"({', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))})")


def first_bug(mode: str, api: str, preload: str, violate: float, max_cases: int
              ) -> tuple[int | None, float]:
    """Cases and seconds until the campaign's first bug on ``api`` (no triage)."""
    from dlfuzz import registry
    from dlfuzz.oracles.base import OracleContext
    from dlfuzz.oracles.reference import Judge

    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(PLANTED), *filter(None, [os.environ.get("PYTHONPATH")])])
    backends = ["torch", "jax", "tf"]
    classes = {b: registry.load("backend", b) for b in backends}
    engine = registry.load("engine", "api")(seed=3, libraries=("torch", "jax", "tf"),
                                            apis=[api], generator=mode,
                                            violate_share=violate,
                                            gradients=False)  # API oracles only here
    oracles = [o for o in (registry.load("oracle", n)() for n in registry.names("oracle"))
               if "api" in getattr(o, "case_kinds", ("api", "graph"))]
    configs = [WorkerConfig(b, preload=(preload,) if b == "torch" else ()) for b in backends]
    with Pool(configs) as pool:
        pool.start()
        library_of = {b: c.library for b, c in classes.items()}
        judge = Judge(lambda cs, only: pool.run(cs, only=only), backends, library_of)
        ctx = OracleContext(judge, library_of, {b: False for b in backends})
        n, t0 = 0, time.perf_counter()
        while n < max_cases:
            cases = engine.propose(32)
            results = pool.run(cases)
            items = list(zip(cases, results, strict=True))
            found = [[] for _ in items]
            for oracle in oracles:
                for i, fs in enumerate(oracle.check_many(items, ctx)):
                    found[i].extend(fs)
            for i, (case, outcomes) in enumerate(items):
                engine.feedback(case, outcomes, found[i])
                if any(f.guilty_backend == "torch" and f.api == api for f in found[i]):
                    return n + i + 1, time.perf_counter() - t0
            n += len(cases)
    return None, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-api", type=int, default=10)
    ap.add_argument("--parts", default="1,2,3,4")
    ap.add_argument("--libraries", default=",".join(LIBRARIES))
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--max-cases", type=int, default=2000)
    args = ap.parse_args()
    parts = set(args.parts.split(","))
    modes = tuple(args.modes.split(","))
    if "1" in parts:
        print("1. valid-input rate per generator (call returns on the eager backend)")
        totals: dict[str, list[float]] = collections.defaultdict(list)
        for library in args.libraries.split(","):
            for mode, row in valid_rates(library, args.per_api, modes).items():
                totals[mode].append(row["valid"])
        for mode, rates in totals.items():
            print(f"  all   {mode:6s} valid {100 * float(np.mean(rates)):5.1f}% "
                  "(mean of the libraries)")
    if "2" in parts:
        print("2. constraints and counterparts")
        spec_counts()
    if "3" in parts:
        print("3. cases and seconds to the first bug (planted), same budget per generator")
        plants = [("torch.nn.functional.conv2d", "planted_torch_conv_dilated", 0.0),
                  ("torch.nn.functional.dropout", "planted_torch_dropout_range", 0.5)]
        for api, preload, violate in plants:
            for mode in modes:
                n, secs = first_bug(mode, api, preload, violate, args.max_cases)
                got = f"{n} cases, {secs:.1f} s" if n else f"not found in {args.max_cases} cases"
                print(f"  {api} ({preload}) {mode:6s}: {got}", flush=True)
    if "4" in parts:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from throughput import pipeline

        print("4. pipeline cases/s on eager backends (generation + execution + oracles)")
        for mode in ("adjust", "z3"):
            for backends in (["torch"], ["torch", "jax", "tf"]):
                with tempfile.TemporaryDirectory():
                    r = pipeline(backends, args.seconds, 256, 20.0, "api", generator=mode,
                                 violate_share=0.1)
                print(f"  {mode:6s} {'+'.join(backends):14s} {r['pipeline_cps']:7.0f} cases/s "
                      f"(executor {r['executor_cps']:.0f}/s, generation "
                      f"{r['generation_cps']:.0f}/s)", flush=True)


if __name__ == "__main__":
    main()
