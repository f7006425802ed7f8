"""Two oracle rules on the real libraries' own behaviour, not on hand-written outcomes:

* jax.jit refusing ``jnp.nonzero`` without a static ``size`` (ConcretizationTypeError)
  is a documented limit of tracing, never a status finding;
* tfjs-wasm trapping on integer ``mod`` by zero, where TF rejects the same input, is a
  demoted crash (an inconsistency), while the trap itself is still seen as a crash.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from dlfuzz.cases import ApiCase, Call, Ref, Tensor
from dlfuzz.executor.pool import Pool, WorkerConfig
from dlfuzz.oracles.base import OracleContext
from dlfuzz.oracles.crash import CrashOracle
from dlfuzz.oracles.status import StatusOracle
from dlfuzz.triage.severity import finding_severity


def _started(*backends: str) -> Pool:
    pool = Pool([WorkerConfig(b, case_timeout_s=60) for b in backends])
    pool.start()
    assert not pool.unavailable, pool.unavailable
    return pool


def test_jax_jit_declining_a_data_dependent_shape_is_no_finding() -> None:
    x = Tensor.from_numpy(np.array([0.0, 1.5, 0.0, 2.0], np.float32))
    case = ApiCase("jax.numpy.nonzero", (x,),
                   (("jax", Call("jax.numpy.nonzero", (Ref(0),))),))
    with _started("jax", "jax-jit") as pool:
        (outcomes,) = pool.run([case])
    assert outcomes["jax"].ok, outcomes["jax"]
    jit = outcomes["jax-jit"]
    assert jit.status == "exception" and "Concretization" in jit.exc_type + jit.message, jit
    ctx = OracleContext(None, {"jax": "jax", "jax-jit": "jax"},  # type: ignore[arg-type]
                        {"jax": False, "jax-jit": True}, stats=Counter())
    assert StatusOracle().check(case, outcomes, ctx) == []
    assert ctx.stats["unsupported_in_mode"] == 1


def test_a_wasm_division_trap_on_an_input_tf_rejects_is_a_demoted_crash() -> None:
    x = np.array([3, 4], np.int32)
    y = np.array([0, 1], np.int32)
    case = ApiCase("tf.mod", (Tensor.from_numpy(x), Tensor.from_numpy(y)),
                   (("tfjs", Call("tf.mod", (Ref(0), Ref(1)))),
                    ("tf", Call("tensorflow.math.floormod", (Ref(0), Ref(1))))))
    with _started("tfjs-wasm", "tf") as pool:
        (outcomes,) = pool.run([case])
    trap, tf = outcomes["tfjs-wasm"], outcomes["tf"]
    assert trap.status == "crash" and "by zero" in trap.message, trap
    assert tf.status == "exception", tf
    ctx = OracleContext(None, {"tfjs-wasm": "tfjs", "tf": "tf"},  # type: ignore[arg-type]
                        {}, stats=Counter())
    (found,) = CrashOracle().check(case, outcomes, ctx)
    assert found.guilty_backend == "tfjs-wasm" and found.detail("demoted")
    assert finding_severity(found, case) == "inconsistency"
