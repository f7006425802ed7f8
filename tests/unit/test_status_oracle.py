"""Status inconsistency: which exceptions are bugs and which are API differences."""

from dlfuzz.cases import ApiCase, Outcome
from dlfuzz.oracles.base import OracleContext
from dlfuzz.oracles.status import StatusOracle, is_deliberate_rejection

CASE = ApiCase("det", (), ())
LIBS = {"numpy": "numpy", "torch": "torch", "jax": "jax", "tf": "tf", "tf-xla": "tf"}
COMPILED = {"tf-xla": True}


def _ctx() -> OracleContext:
    return OracleContext(judge=None, library_of=LIBS, compiled=COMPILED)  # type: ignore[arg-type]


def _exc(backend: str, exc_type: str, message: str) -> Outcome:
    return Outcome(backend, "exception", exc_type=exc_type, message=message)


def _ok(backend: str) -> Outcome:
    return Outcome(backend, "ok")


def test_rejections_versus_failures():
    assert is_deliberate_rejection(_exc("torch", "TypeError", "expected a float tensor"))
    assert is_deliberate_rejection(_exc("torch", "RuntimeError",
                                        '"cumsum_cpu" not implemented for \'Half\''))
    assert not is_deliberate_rejection(_exc("tf", "InternalError", "Check failed: x > 0"))


def test_internal_failure_where_two_others_compute_is_a_finding():
    outcomes = {"numpy": _ok("numpy"), "torch": _ok("torch"),
                "tf": _exc("tf", "InternalError", "Check failed: ndims == 2")}
    found = StatusOracle().check(CASE, outcomes, _ctx())
    assert [f.guilty_backend for f in found] == ["tf"]
    outcomes["tf"] = _exc("tf", "InvalidArgumentError", "Input must be a square matrix")
    ctx = _ctx()
    assert StatusOracle().check(CASE, outcomes, ctx) == [] and ctx.stats["rejections"] == 1


def test_mode_inconsistency_but_not_for_unimplemented_ops():
    outcomes = {"tf": _ok("tf"), "tf-xla": _exc("tf-xla", "InternalError",
                                                   "LLVM ERROR: broken module")}
    assert [f.guilty_backend for f in StatusOracle().check(CASE, outcomes, _ctx())] == ["tf-xla"]
    outcomes["tf-xla"] = _exc("tf-xla", "InvalidArgumentError",
                              "Detected unsupported operations when trying to compile graph")
    assert StatusOracle().check(CASE, outcomes, _ctx()) == []


def test_a_compiled_mode_declining_a_data_dependent_shape_is_no_finding():
    # jnp.nonzero under jax.jit without a static size: a documented limit of tracing.
    libs = {**LIBS, "jax-jit": "jax"}
    ctx = OracleContext(judge=None, library_of=libs,  # type: ignore[arg-type]
                        compiled={**COMPILED, "jax-jit": True})
    outcomes = {"jax": _ok("jax"), "jax-jit": _exc(
        "jax-jit", "ConcretizationTypeError",
        "Abstract tracer value encountered where concrete value is expected: traced array "
        "with shape int32[]. The size argument of jnp.nonzero must be statically specified "
        "to use jnp.nonzero within JAX transformations.")}
    assert StatusOracle().check(CASE, outcomes, ctx) == []
    assert ctx.stats["unsupported_in_mode"] == 1
    # The same mode failing with an internal error is still a finding.
    outcomes["jax-jit"] = _exc("jax-jit", "XlaRuntimeError", "INTERNAL: during codegen")
    assert [f.guilty_backend for f in StatusOracle().check(CASE, outcomes, ctx)] == ["jax-jit"]
