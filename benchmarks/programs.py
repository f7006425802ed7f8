"""Program-engine (MoCo) throughput, API coverage and report precision.

1. programs/s per seed and library: the engine derives programs level by level, the
   workers run them (one worker per backend, reused for every program, each program
   exec'd in-process: no interpreter or library start per program), the program oracles
   judge them and the engine learns. Worker start and the first programs (warm-up) are
   not counted. Torch seeds run on the torch worker; Keras seeds on keras-tf, keras-jax
   and keras-torch at once (a Keras program is done when all three are), and on
   keras-torch alone for comparison.
2. #CovAPI: distinct torch.nn / keras.layers APIs in the programs that ran.
3. Report precision: ``--campaign SECONDS`` runs a real campaign (CLI, current releases,
   no planted bug) per library and lists every confirmed report with its reproducer, for
   a person to judge (MoCo: 68.7% after manual review). The verdicts go in
   docs/programs.md.

Run: ``.venv/bin/python benchmarks/programs.py [--seconds 30] [--campaign 120]``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dlfuzz import registry
from dlfuzz.engines.program.engine import ProgramEngine
from dlfuzz.executor.pool import Pool, WorkerConfig
from dlfuzz.oracles.base import OracleContext
from dlfuzz.oracles.reference import Judge

KERAS = ["keras-tf", "keras-jax", "keras-torch"]
RUNS = [  # (seed, backends)
    ("torch_lenet_seq", ["torch"]),
    ("torch_lenet_module", ["torch"]),
    ("keras_lenet", ["keras-torch"]),
    ("keras_lenet", KERAS),
]


def run_seed(seed: str, backends: list[str], seconds: float, warmup: float) -> dict:
    classes = {b: registry.load("backend", b) for b in backends}
    library_of = {b: c.library for b, c in classes.items()}
    compiled = {b: c.compiled for b, c in classes.items()}
    engine = ProgramEngine(seed=5, libraries=tuple(library_of.values()),
                           seed_programs=(seed,))
    oracles = [registry.load("oracle", n)() for n in registry.names("oracle")]
    oracles = [o for o in oracles if "program" in getattr(o, "case_kinds", ())]
    with Pool([WorkerConfig(b, case_timeout_s=120) for b in backends]) as pool:
        pool.start()
        judge = Judge(lambda cs, only: pool.run(cs, only=only), backends, library_of)
        ctx = OracleContext(judge, library_of, compiled)

        def round_trip() -> int:
            cases = engine.propose(16)
            results = pool.run(cases)
            items = list(zip(cases, results, strict=True))
            found: list[list] = [[] for _ in items]
            for oracle in oracles:
                for i, fs in enumerate(oracle.check_many(items, ctx)):
                    found[i].extend(fs)
            for (case, outcomes), fs in zip(items, found, strict=True):
                engine.feedback(case, outcomes, fs)
            return len(cases)

        t0 = time.perf_counter()
        while time.perf_counter() - t0 < warmup:
            round_trip()
        before = dict(engine.stats)
        programs, t1 = 0, time.perf_counter()
        while time.perf_counter() - t1 < seconds:
            programs += round_trip()
        elapsed = time.perf_counter() - t1
    ran = engine.stats["ran"] - before["ran"]
    return {"seed": seed, "backends": backends, "programs": programs, "seconds": elapsed,
            "programs_per_s": programs / elapsed, "ran": ran,
            "generation_failures": engine.stats["generation_failures"]
            - before["generation_failures"],
            "covered": engine.summary()["covered_apis"], "stats": engine.summary()}


def campaign(library: str, seconds: float, out: Path) -> list[dict]:
    """A real campaign through the CLI; its confirmed reports for manual review."""
    backends = "torch" if library == "torch" else ",".join(KERAS)
    seeds = ["torch_lenet_seq", "torch_lenet_module", "torch_vgg_seq"] if library == "torch" \
        else ["keras_lenet", "keras_vgg"]
    args = [sys.executable, "-m", "dlfuzz", "run", "--engine", "program", "--backends",
            backends, "--budget", f"{seconds:.0f}s", "--out", str(out), "--quiet",
            "--batch-size", "64", "--seed", "1"]
    for s in seeds:
        args += ["--seed-program", s]
    subprocess.run(args, check=True, capture_output=True, text=True)
    listing = subprocess.run([sys.executable, "-m", "dlfuzz", "findings", str(out), "--json"],
                             check=True, capture_output=True, text=True)
    return json.loads(listing.stdout)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--warmup", type=float, default=10.0)
    ap.add_argument("--campaign", type=float, default=0.0,
                    help="seconds of a precision campaign per library (0: skip)")
    ap.add_argument("--only", default="", help="comma-separated seeds to measure")
    args = ap.parse_args()
    covered: dict[str, set[str]] = {"torch": set(), "keras": set()}
    only = set(filter(None, args.only.split(",")))
    for seed, backends in RUNS:
        if only and seed not in only:
            continue
        r = run_seed(seed, backends, args.seconds, args.warmup)
        lib = "keras" if seed.startswith("keras") else "torch"
        covered[lib].update(r["covered"])
        print(f"{seed:22s} on {','.join(backends):30s} {r['programs_per_s']:7.2f} programs/s "
              f"({r['programs']} programs, {r['ran']} positive ran, "
              f"{r['generation_failures']} generation failures)", flush=True)
    for lib, apis in covered.items():
        print(f"#CovAPI {lib}: {len(apis)} distinct APIs in programs that ran")
    if args.campaign > 0:
        for lib in ("torch", "keras"):
            out = Path(tempfile.mkdtemp(prefix=f"dlfuzz-programs-{lib}-")) / "c"
            bugs = campaign(lib, args.campaign, out)
            print(f"\n{lib}: {len(bugs)} confirmed reports in {out} (judge each by hand):")
            for b in bugs:
                print(f"  {b['id']} {b['symptom']:9s} {b['guilty_backend']:11s} {b['api']}: "
                      f"{b['message'][:140]}")
                for backend, path in sorted(b["repro"].items()):
                    print(f"      repro {backend}: {path}")


if __name__ == "__main__":
    main()
