"""Model must-show 2: every mutation rule yields a model that runs on every backend (and
computes the same function there), or refuses with Rejected.

LEMON's 12 rules mutate LeNet-5 and the LSTM seed; DLJSFuzzer's 7 construct rules and
every ROR target mutate a conv-ready identity chain; the 13 tensor rules mutate the
inputs of a mutated chain. Every resulting model runs on torch, jax, tf, ONNX Runtime
(optimized and not) and Keras on its three backends, in float32 (ONNX Runtime has no
float64/bfloat16 kernels for most ops: dtype-changing tensor rules skip it); a sample
also runs through torch.compile, jax.jit and XLA.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from model_support import COMPILED_BACKENDS, MODEL_BACKENDS, case_of, max_rel_diff, model_pool

from dlfuzz.engines.model.dljs_rules import apply_rule, contribution_rules
from dlfuzz.engines.model.dljs_tensor import TENSOR_RULES
from dlfuzz.engines.model.lemon_rules import LEMON_RULES
from dlfuzz.engines.model.seeds import SEEDS
from dlfuzz.errors import Rejected
from dlfuzz.executor.pool import Pool

TOLERANCE = {"float32": 1e-3, "float64": 1e-6, "bfloat16": 0.1, "float16": 0.02}


@pytest.fixture(scope="module")
def pool() -> Iterator[Pool]:
    p = model_pool(MODEL_BACKENDS + COMPILED_BACKENDS, timeout_s=120)
    yield p
    p.close()


def _dljs_base() -> object:
    """An identity chain with a conv in it, so conv-shaped constructs have a place."""
    model = SEEDS["identity"](np.random.default_rng(0))
    return apply_rule("ECB", model, np.random.default_rng(1))


def _mutants() -> list[tuple[str, object, list[np.ndarray] | None]]:
    out: list[tuple[str, object, list[np.ndarray] | None]] = []
    for seed_name in ("lenet5", "lstm"):
        seed = SEEDS[seed_name](np.random.default_rng(0))
        for name, rule in LEMON_RULES.items():
            try:
                out.append((f"lemon:{name}@{seed_name}", rule(seed, np.random.default_rng(5)),
                            None))
            except Rejected:
                out.append((f"lemon:{name}@{seed_name}", None, None))
    base = _dljs_base()
    for key in contribution_rules():
        try:
            out.append((f"dljs:{key}", apply_rule(key, base, np.random.default_rng(7)), None))
        except Rejected:
            out.append((f"dljs:{key}", None, None))
    xs = [np.random.default_rng(3).standard_normal(t.shape).astype(np.float32)
          for t in base.graph.inputs]
    for name, rule in TENSOR_RULES.items():
        try:
            model, inputs = rule(base, list(xs), np.random.default_rng(9))
            out.append((f"tensor:{name}", model, inputs))
        except Rejected:
            out.append((f"tensor:{name}", None, None))
    return out


def test_every_rule_runs_everywhere_or_refuses(pool: Pool) -> None:
    mutants = _mutants()
    applied = [(label, m, xs) for label, m, xs in mutants if m is not None]
    refused = [label for label, m, _ in mutants if m is None]
    # Every LEMON rule and every DLJSFuzzer construct applies to its seed.
    assert not [r for r in refused if r.startswith("lemon:") and r.endswith("@lenet5")
                and r.split(":")[1].split("@")[0] not in ("LS",)], refused
    assert not [r for r in refused if r.startswith("dljs:") and "ROR" not in r], refused
    assert len(applied) > 60
    cases = [case_of(m, np.random.default_rng(i), label=label, inputs=xs)
             for i, (label, m, xs) in enumerate(applied)]
    results = pool.run(cases, only=MODEL_BACKENDS)
    problems = []
    for (label, _, _), case, outcomes in zip(applied, cases, results, strict=True):
        dtype = case.graph.dtype
        backends = [b for b in MODEL_BACKENDS if dtype == "float32" or not b.startswith("ort")]
        ref = outcomes["torch"]
        for b in backends:
            o = outcomes[b]
            if not o.ok:
                problems.append(f"{label}: {b} {o.stage} {o.exc_type}: {o.message[:160]}")
            elif ref.ok:
                worst = max(max_rel_diff(x.to_numpy(), y.to_numpy())
                            for x, y in zip(o.outputs, ref.outputs, strict=True))
                if worst > TOLERANCE[dtype]:
                    problems.append(f"{label}: {b} differs from torch by {worst:.3g}")
    assert not problems, "\n".join(problems)


def test_a_sample_of_mutants_compiles_everywhere(pool: Pool) -> None:
    mutants = [(label, m, xs) for label, m, xs in _mutants()
               if m is not None and not label.startswith("dljs:ROR")][::3]
    cases = [case_of(m, np.random.default_rng(i), label=label, inputs=xs)
             for i, (label, m, xs) in enumerate(mutants)]
    results = pool.run(cases, only=("torch",) + COMPILED_BACKENDS)
    problems = []
    for (label, _, _), outcomes in zip(mutants, results, strict=True):
        for b in COMPILED_BACKENDS:
            o = outcomes[b]
            if not o.ok:
                problems.append(f"{label}: {b} {o.stage} {o.exc_type}: {o.message[:160]}")
    assert not problems, "\n".join(problems)
