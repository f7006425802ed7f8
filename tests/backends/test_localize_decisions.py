"""Decisions (Compare, Logical, LogicalNot, Where) are steps: the judge must tell a step
taken on other operands from a wrong step.

Each test runs the real libraries and first asserts the premise (the two libraries do
decide differently), so a library change shows up as that assertion, not as a pass:

* XLA flushes subnormals to zero on the CPU by design: jax-jit's logical_not of the
  smallest float32 subnormal is 1. A 180 s synth campaign filed that (and its Where and
  Logical forms on jax-jit and tf-xla) as six wrong results.
* torch's float64 GELU(-17.25) cancels to 0 where JAX's gives -9.7e-66; both are
  within GELU's tolerance, but a Where on x * GELU(x) then selects the other operand.
* tfjs-wasm's cast to bool keeps the value's low byte (tfjs#2590): LogicalNot(0.25) is 1.
  That one is a bug, and the judge must still blame it.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from model_support import LIBRARIES, case_of, model_pool

from dlfuzz.ir.graph import GraphBuilder
from dlfuzz.ir.model import Model
from dlfuzz.oracles.localize import localize_many

TINY = float(np.finfo(np.float32).smallest_subnormal)


@pytest.fixture(scope="module")
def pool():
    with model_pool(("torch", "jax", "jax-jit", "tfjs-wasm")) as p:
        yield p


def _runner(pool):
    return lambda cases, only: pool.run(cases, only=only)


def test_a_flushed_subnormal_is_no_bug(pool) -> None:
    b = GraphBuilder((1, 4))
    b.add("LogicalNot", "x0")
    x = np.array([[TINY, 0.5, 0.0, -2.0]], np.float32)
    case = case_of(Model(b.build(), {}), np.random.default_rng(0), inputs=[x])
    run = pool.run([case])[0]
    assert run["torch"].outputs[0].to_numpy().tolist() == [[0.0, 0.0, 1.0, 0.0]]
    assert run["jax-jit"].outputs[0].to_numpy().tolist() == [[1.0, 0.0, 1.0, 0.0]], \
        "XLA no longer flushes subnormals to zero"
    (suspect,) = localize_many(_runner(pool), [(case, "jax-jit", "torch")])
    assert (suspect.op, suspect.rounding) == ("LogicalNot", "subnormal")


def test_a_step_taken_on_other_operands_is_no_bug(pool) -> None:
    b = GraphBuilder((1, 3), dtype="float64")
    gelu = b.add("GELU", "x0")
    product = b.add("Mul", "x0", gelu)
    b.add("Where", product, gelu, "x0")
    x = np.array([[-17.25, 1.5, -0.5]], np.float64)
    case = case_of(Model(b.build(), {}), np.random.default_rng(0), inputs=[x])
    run = pool.run([case])[0]
    torch_out, jax_out = (run[k].outputs[0].to_numpy()[0] for k in ("torch", "jax"))
    assert torch_out[0] == -17.25 and -1e-60 < jax_out[0] < 0, (torch_out, jax_out)
    (suspect,) = localize_many(_runner(pool), [(case, "torch", "jax")])
    assert (suspect.op, suspect.rounding) == ("Where", "threshold")


def test_a_wrong_step_is_blamed(pool) -> None:
    b = GraphBuilder((1, 4))
    b.add("LogicalNot", b.add("Abs", "x0"))
    x = np.array([[0.25, -1.5, 0.0, 256.0]], np.float32)
    case = replace(case_of(Model(b.build(), {}), np.random.default_rng(0), inputs=[x]),
                   libraries=(*LIBRARIES, "tfjs"))
    run = pool.run([case])[0]
    assert run["torch"].outputs[0].to_numpy().tolist() == [[0.0, 0.0, 1.0, 0.0]]
    assert run["tfjs-wasm"].outputs[0].to_numpy().tolist()[0][0] != 0.0, \
        "tfjs-wasm casts 0.25 to bool right now (tfjs#2590 fixed?)"
    (suspect,) = localize_many(_runner(pool), [(case, "tfjs-wasm", "torch")])
    assert (suspect.op, suspect.rounding) == ("LogicalNot", "")


def test_a_difference_within_tolerance_that_flips_a_step_is_no_bug(pool) -> None:
    """torch's float64 Softplus returns 25 for 25 (JAX: 25 + 1.4e-11, off by far more
    than 16 ulps, so R_a blames it) and a subnormal for -740, which XLA flushes to 0; the
    LogicalNot after it then differs by 1. A 300 s synth campaign filed that as a torch
    Softplus wrong result."""
    b = GraphBuilder((1, 4), dtype="float64")
    b.add("LogicalNot", b.add("Softplus", "x0"))
    x = np.array([[-740.0, 25.0, 1.0, -3.0]], np.float64)
    case = case_of(Model(b.build(), {}), np.random.default_rng(0), inputs=[x])
    probe = pool.run([case.with_probe(True)])[0]
    soft_t, soft_j = (probe[k].outputs[0].to_numpy()[0] for k in ("torch", "jax-jit"))
    assert 0 < soft_t[0] < 1e-300 and soft_j[0] == 0.0, (soft_t, soft_j)
    assert soft_t[1] == 25.0 and soft_j[1] > 25.0, (soft_t, soft_j)
    (suspect,) = localize_many(_runner(pool), [(case, "torch", "jax-jit")])
    assert (suspect.op, suspect.rounding) == ("Softplus", "subnormal")
