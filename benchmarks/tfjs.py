"""Cases per second of the TF.js backends, against TensorJSFuzz's ~3 s per input.

TensorJSFuzz restarted a browser for every input; dlfuzz keeps one Node process (cpu,
wasm) or one Chromium page (webgl) per worker and streams cases into it as raw bytes.
Measured through the whole executor (Pool.run: pickling, the worker, the Node child and
back) on small cases: elementwise add of 64 floats, a 16x16 matMul, a 1x8x8x4 conv2d
with a 3x3x4x8 kernel, and one LeNet-5 model run (built once, then new inputs); then the
backward passes of the matMul and the conv2d (gradient cases through ``tf.grads``) and a
LeNet-5 training step, with the cost of each against its forward case.
Also prints the raw time of the same op inside Node (no dlfuzz) for the overhead ratio.

Run: ``.venv/bin/python benchmarks/tfjs.py [--cases 400] [--backends tfjs-cpu,...]``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time
from typing import Any

import numpy as np

from dlfuzz.backends.tfjs import install
from dlfuzz.cases import ApiCase, Call, GradCase, GraphCase, Ref, Tensor, TrainCase
from dlfuzz.executor.pool import Pool, WorkerConfig

BACKENDS = ("tfjs-cpu", "tfjs-wasm", "tfjs-webgl")
TENSORJSFUZZ_S_PER_INPUT = 3.0


def api_cases(n: int, rng: np.random.Generator) -> dict[str, list[ApiCase]]:
    def case(target: str, shapes: list[tuple[int, ...]], extra: tuple = ()) -> ApiCase:
        xs = tuple(Tensor.from_numpy(rng.normal(size=s).astype(np.float32)) for s in shapes)
        refs = tuple(Ref(i) for i in range(len(shapes)))
        return ApiCase(target, xs, (("tfjs", Call(target, refs + extra)),))

    return {
        "add 64": [case("tf.add", [(8, 8), (8, 8)]) for _ in range(n)],
        "matMul 16x16": [case("tf.matMul", [(16, 16), (16, 16)]) for _ in range(n)],
        "conv2d 8x8x4": [case("tf.conv2d", [(1, 8, 8, 4), (3, 3, 4, 8)], (1, "same"))
                         for _ in range(n)],
    }


def model_cases(n: int, rng: np.random.Generator) -> list[GraphCase]:
    from dlfuzz.engines.model.engine import weights_key
    from dlfuzz.engines.model.seeds import SEEDS
    from dlfuzz.ir.weights import random_inputs

    model = SEEDS["lenet5"](rng)
    weights = weights_key(model)
    return [GraphCase("lenet5", model.graph, weights,
                      tuple(Tensor.from_numpy(x) for x in random_inputs(model.graph, rng)),
                      ("tfjs",)) for _ in range(n)]


# Backward passes and what each costs against: (label, forward label).
BACKWARD = (("grad matMul 16x16", "matMul 16x16"), ("grad conv2d 8x8x4", "conv2d 8x8x4"),
            ("lenet5 training step", "lenet5 model"))


def backward_cases(groups: dict[str, list[Any]]) -> dict[str, list[Any]]:
    """Gradient cases of the matMul and conv2d cases, training steps of the models."""
    return {
        "grad matMul 16x16": [GradCase(c, i) for i, c in enumerate(groups["matMul 16x16"])],
        "grad conv2d 8x8x4": [GradCase(c, i) for i, c in enumerate(groups["conv2d 8x8x4"])],
        # every step is of a new model to the worker (as in a campaign: one step a model)
        "lenet5 training step": [TrainCase(c, i) for i, c in enumerate(groups["lenet5 model"])],
    }


_RAW = """
const path = require('path');
delete globalThis.fetch;
const dir = process.argv[1], backend = process.argv[2], n = Number(process.argv[3]);
const tf = require(path.join(dir, 'node_modules/@tensorflow/tfjs'));
if (backend === 'wasm') require(path.join(dir, 'node_modules/@tensorflow/tfjs-backend-wasm'));
(async () => {
  await tf.setBackend(backend); await tf.ready();
  const a = tf.randomNormal([8, 8]), b = tf.randomNormal([8, 8]);
  for (let i = 0; i < 50; i++) tf.add(a, b).dataSync();
  const t = process.hrtime.bigint();
  for (let i = 0; i < n; i++) { const c = tf.add(a, b); c.dataSync(); c.dispose(); }
  console.log('RAW ' + Number(process.hrtime.bigint() - t) / 1e9 / n);
})();
"""


def raw_add_s(backend: str, n: int) -> float:
    """Seconds per add of 64 floats inside Node, without dlfuzz (the cost floor)."""
    proc = subprocess.run(["node", "--disable-wasm-trap-handler", "-e", _RAW,
                           str(install.ensure_installed()), backend, str(n)],
                          capture_output=True, text=True, timeout=300, check=True)
    line = next(x for x in proc.stdout.splitlines() if x.startswith("RAW "))
    return float(line.split()[1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=400)
    parser.add_argument("--backends", default=",".join(BACKENDS))
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    groups = api_cases(args.cases, rng)
    groups["lenet5 model"] = model_cases(max(args.cases // 4, 10), rng)
    groups.update(backward_cases(groups))
    results: dict[str, dict[str, Any]] = {}
    for backend in args.backends.split(","):
        with Pool([WorkerConfig(backend, case_timeout_s=60)]) as pool:
            start = time.perf_counter()
            versions = pool.start()
            startup = time.perf_counter() - start
            assert not pool.unavailable, pool.unavailable
            row: dict[str, Any] = {"startup_s": round(startup, 2)}
            for label, cases in groups.items():
                warm = pool.run(cases[:5])  # warm-up: kernels, shaders, the model build
                failed = [o[backend] for o in warm if not o[backend].ok]
                if len(failed) == len(warm):  # the backend lacks a kernel: say which
                    row[label] = f"fails: {failed[0].message[:80]}"
                    continue
                start = time.perf_counter()
                outs = pool.run(cases)
                spent = time.perf_counter() - start
                bad = sum(not o[backend].ok for o in outs)
                assert bad == 0, (backend, label, [o[backend] for o in outs if not o[backend].ok][:1])
                row[label] = round(len(cases) / spent, 1)
        for label, forward in BACKWARD:
            if isinstance(row[label], float):
                row[f"{label}: x forward time"] = round(row[forward] / row[label], 1)
        if backend != "tfjs-webgl":
            raw = raw_add_s(backend.split("-")[1], 2000)
            row["raw add 64 (Node, no dlfuzz) per s"] = round(1 / raw, 1)
        results[f"{backend} [{versions[backend]}]"] = row
    print(f"cases/s per TF.js backend ({args.cases} cases per op; TensorJSFuzz: "
          f"{1 / TENSORJSFUZZ_S_PER_INPUT:.2f} inputs/s, ~{TENSORJSFUZZ_S_PER_INPUT:.0f} s each)")
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
