"""Gradient cases on the real libraries: every autodiff mode, and the oracle's judgement.

One pool runs torch, torch-compile, jax, jax-jit, tf and tf-xla (numpy too, which must
not be handed a gradient case). The torch workers load the planted wrong ``tanh``
backward (``planted_torch_tanh_backward``: forward right, derivative wrong where the
output is negative) only in the pool of the last tests.

Each judgement test first asserts its premise on the real outputs (the kink is there,
the gradient really is stopped), so a library change shows up as that assertion.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from model_support import planted_torch_pool

from dlfuzz.cases import ApiCase, Call, GradCase, Outcome, Ref, Tensor
from dlfuzz.cases.grad import CHECKS, cotangent, direction
from dlfuzz.executor.pool import Pool
from dlfuzz.oracles.base import OracleContext
from dlfuzz.oracles.gradient import GradientOracle, smoothness
from dlfuzz.oracles.reference import Judge

BACKENDS = ("numpy", "torch", "torch-compile", "jax", "jax-jit", "tf", "tf-xla")
LIBRARY_OF = {"numpy": "numpy", "torch": "torch", "torch-compile": "torch", "jax": "jax",
              "jax-jit": "jax", "tf": "tf", "tf-xla": "tf"}
COMPILED = {"torch-compile": True, "jax-jit": True, "tf-xla": True}
GRADIENT_BACKENDS = set(BACKENDS) - {"numpy"}


def _pool(preload: tuple[str, ...] = ()) -> Any:
    return planted_torch_pool(BACKENDS, preload, timeout_s=120.0)


@pytest.fixture(scope="module")
def pool() -> Iterator[Pool]:
    with _pool() as p:
        yield p


def _case(calls: dict[str, tuple[str, tuple, tuple]], *arrays: np.ndarray,
          seed: int = 11) -> GradCase:
    base = ApiCase("test", tuple(Tensor.from_numpy(a) for a in arrays),
                   tuple((lib, Call(t, args, kwargs)) for lib, (t, args, kwargs) in calls.items()))
    return GradCase(base, seed)


def _unary(torch: str, jax: str, tf: str, x: np.ndarray) -> GradCase:
    r = (Ref(0),)
    return _case({"torch": (torch, r, ()), "jax": (jax, r, ()), "tf": (tf, r, ())}, x)


def _judge(pool: Pool, case: GradCase, outcomes: dict[str, Outcome] | None = None):
    judge = Judge(lambda cases, only: pool.run(cases, only=only),
                  ["numpy", "torch", "jax", "tf"], LIBRARY_OF, seed=0)
    ctx = OracleContext(judge, LIBRARY_OF, COMPILED)
    outcomes = outcomes if outcomes is not None else pool.run([case])[0]
    return GradientOracle().check_many([(case, outcomes)], ctx)[0], ctx, outcomes


def _checks(o: Outcome) -> dict[str, float]:
    return dict(zip(CHECKS, o.outputs[-1].to_numpy().tolist(), strict=True))


def test_every_mode_computes_the_same_gradient_and_checks_itself(pool: Pool) -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal((4, 2)).astype(np.float32)
    r = (Ref(0), Ref(1))
    case = _case({"torch": ("torch.matmul", r, ()), "jax": ("jax.numpy.matmul", r, ()),
                  "tf": ("tensorflow.linalg.matmul", r, ())}, a, b)
    outcomes = pool.run([case])[0]
    assert set(outcomes) == GRADIENT_BACKENDS  # numpy has no autodiff: not handed the case
    for o in outcomes.values():
        assert o.ok, o
    cot = cotangent(case.seed, 0, (3, 2))  # J^T c of a @ b is (c @ b.T, a.T @ c)
    for name, o in outcomes.items():
        ga, gb, _ = (t.to_numpy() for t in o.outputs)
        assert ga.dtype == np.float32 and ga.shape == a.shape and gb.shape == b.shape
        np.testing.assert_allclose(ga, cot @ b.T, rtol=1e-4, atol=1e-4, err_msg=name)
        np.testing.assert_allclose(gb, a.T @ cot, rtol=1e-4, atol=1e-4, err_msg=name)
        c = _checks(o)
        assert smoothness(c) == "smooth", (name, c)
        assert abs(c["reverse"] - c["fd"]) < 1e-6 * c["scale"], (name, c)
        if not COMPILED.get(name):
            assert abs(c["forward"] - c["fd"]) < 1e-6 * c["scale"], (name, c)
    found, ctx, _ = _judge(pool, case, outcomes)
    assert found == [] and ctx.stats["gradient_judged"] == 1


def test_a_kink_is_no_finding(pool: Pool) -> None:
    x = np.array([[0.0, 1.5, -0.5, 0.0]], np.float32)
    case = _unary("torch.nn.functional.relu", "jax.nn.relu", "tensorflow.nn.relu", x)
    found, ctx, outcomes = _judge(pool, case)
    torch = _checks(outcomes["torch"])
    v = direction(case.seed, 0, x.shape)
    assert np.any(v[x == 0] != 0)
    assert smoothness(torch) == "kink", torch  # relu'(0) is a convention, not a slope
    assert found == [] and ctx.stats["gradient_kink"] == 1


def test_a_stopped_gradient_is_no_finding(pool: Pool) -> None:
    x = np.array([0.5, -1.25, 2.0], np.float64)
    case = _unary("torch.Tensor.detach", "jax.lax.stop_gradient", "tensorflow.stop_gradient", x)
    found, ctx, outcomes = _judge(pool, case)
    jax = _checks(outcomes["jax"])
    assert jax["reverse"] == 0.0 and abs(jax["fd"]) > 0.1, jax  # the premise: stopped
    assert found == [], found
    assert ctx.stats["gradient_modes_agree_off_fd"] >= 1


def test_a_flat_function_is_no_finding(pool: Pool) -> None:
    x = np.array([0.3, -1.7, 2.2], np.float32)
    case = _unary("torch.round", "jax.numpy.round", "tensorflow.math.round", x)
    found, ctx, _ = _judge(pool, case)
    assert found == [] and ctx.stats["gradient_flat"] == 1


def test_real_bug_zeta_backward_through_an_unsigned_x(pool: Pool) -> None:
    """torch 2.13: the derivative of zeta(x, q) in q is -x * zeta(x + 1, q), computed
    with ``-x`` in x's own dtype; for a uint8 x the negation wraps around (-4 is 252).
    JAX and TF do not take an integer x: torch is judged by its own finite differences."""
    x = np.array(4, np.uint8)
    q = np.array([1.0], np.float64)
    case = _case({"torch": ("torch.special.zeta", (Ref(0), Ref(1)), ())}, x, q)
    found, _, outcomes = _judge(pool, case)
    c = _checks(outcomes["torch"])
    assert c["reverse"] / c["fd"] < -10, c  # the premise: sign and size both wrong
    assert {(f.guilty_backend, f.symptom, f.detail("mode")) for f in found} == \
        {("torch", "gradient", "reverse")}, found


def test_real_bug_isotonic_regression_gradient_shape(pool: Pool) -> None:
    """TF 2.21: the gradient of ``tf.nn.isotonic_regression`` of a vector has shape
    (n, 1) instead of (n,). Filed on tf, not again on tf-xla."""
    x = np.array([0.5, -1.0, 2.0], np.float64)
    case = _case({"tf": ("tensorflow.nn.isotonic_regression", (Ref(0),), ())}, x)
    found, _, outcomes = _judge(pool, case)
    assert outcomes["tf"].outputs[0].shape == (3, 1)  # the premise
    shapes = [(f.guilty_backend, f.symptom) for f in found if f.symptom == "shape"]
    assert shapes == [("tf", "shape")], found


@pytest.fixture(scope="module")
def planted_pool(pool: Pool) -> Iterator[Pool]:
    pool.close()  # one pool of seven workers at a time on a small machine
    with _pool(("planted_torch_tanh_backward",)) as p:
        yield p


def test_a_wrong_backward_is_blamed_on_its_library_once(planted_pool: Pool) -> None:
    x = np.array([[0.4, -0.9], [1.3, -0.2]], np.float32)
    case = _unary("torch.tanh", "jax.numpy.tanh", "tensorflow.math.tanh", x)
    found, ctx, outcomes = _judge(planted_pool, case)
    for name in ("torch", "torch-compile"):  # the plant is there, in both modes
        c = _checks(outcomes[name])
        assert abs(c["reverse"] - c["fd"]) > 0.01 * c["scale"], (name, c)
    assert [(f.guilty_backend, f.symptom, f.detail("mode")) for f in found] == \
        [("torch", "gradient", "reverse")], found
    assert ctx.stats["gradient_shared_with_eager"] >= 1  # torch-compile: the same bug


def test_a_float32_only_backward_bug_is_found_across_libraries(planted_pool: Pool) -> None:
    """float64 self-checks pass; only the float32 gradient is off the others'."""
    x = np.array([[0.4, -0.9], [1.3, -0.2]], np.float32)
    case = _unary("torch.tanh", "jax.numpy.tanh", "tensorflow.math.tanh", x)
    outcomes = planted_pool.run([case])[0]
    # Give torch a correct float64 self-check: its float32 gradient is still the plant's.
    good = outcomes["jax"].outputs[-1]
    outcomes = {**outcomes,
                "torch": Outcome("torch", "ok", (outcomes["torch"].outputs[0], good)),
                "torch-compile": Outcome("torch-compile", "ok",
                                         (outcomes["torch-compile"].outputs[0], good))}
    found, _, _ = _judge(planted_pool, case, outcomes)
    blamed = sorted((f.guilty_backend, f.detail("mode")) for f in found)
    assert blamed == [("torch", "eager")], found
    assert "reference" in str(found[0].detail("judged_by"))
