"""The crash oracle: a crash is a finding; a wasm division trap on an input another
library rejects is demoted (an inconsistent error, not a crash)."""

from __future__ import annotations

import numpy as np

from dlfuzz.cases import ApiCase, Call, Outcome, Ref, Tensor
from dlfuzz.oracles.base import OracleContext
from dlfuzz.oracles.crash import CrashOracle
from dlfuzz.triage.severity import severity_of

LIBRARY_OF = {"tfjs-cpu": "tfjs", "tfjs-wasm": "tfjs", "tf": "tf"}
CTX = OracleContext(None, LIBRARY_OF, {})  # type: ignore[arg-type]
CASE = ApiCase("tf.mod", (Tensor.from_numpy(np.array([3, 4], np.int32)),
                          Tensor.from_numpy(np.array([0, 1], np.int32))),
               (("tfjs", Call("tf.mod", (Ref(0), Ref(1)))),))


def trap(message: str) -> Outcome:
    return Outcome("tfjs-wasm", "crash", exc_type="NativeCrash", message=message)


def severities(outcomes: dict[str, Outcome]) -> list[str]:
    found = CrashOracle().check(CASE, outcomes, CTX)
    return [severity_of(f.symptom, dict(f.details)) for f in found]


def test_a_division_trap_on_an_input_the_reference_rejects_is_an_inconsistency() -> None:
    rejected = Outcome("tf", "exception", exc_type="InvalidArgumentError",
                       message="Integer division by zero")
    out = {"tfjs-wasm": trap("RuntimeError: remainder by zero"), "tf": rejected,
           "tfjs-cpu": Outcome("tfjs-cpu", "ok")}
    found = CrashOracle().check(CASE, out, CTX)
    assert len(found) == 1 and "tf rejects" in dict(found[0].details)["demoted"]
    assert severities(out) == ["inconsistency"]


def test_a_division_trap_on_an_input_others_accept_stays_a_crash() -> None:
    out = {"tfjs-wasm": trap("RuntimeError: divide by zero"), "tf": Outcome("tf", "ok"),
           "tfjs-cpu": Outcome("tfjs-cpu", "ok")}
    assert severities(out) == ["crash"]


def test_other_crashes_stay_crashes_even_where_the_reference_rejects() -> None:
    rejected = Outcome("tf", "exception", exc_type="InvalidArgumentError", message="bad")
    for message in ("RuntimeError: memory access out of bounds", "SIGSEGV"):
        assert severities({"tfjs-wasm": trap(message), "tf": rejected}) == ["crash"]
    # the same library's other backend rejecting does not count: it shares the code
    cpu_rejects = Outcome("tfjs-cpu", "exception", exc_type="Error", message="x")
    assert severities({"tfjs-wasm": trap("RuntimeError: remainder by zero"),
                       "tfjs-cpu": cpu_rejects}) == ["crash"]


def test_a_crash_inside_a_counterpart_dlfuzz_wrote_is_not_the_library_s_crash() -> None:
    # jax ran tf.math.segment_max through dlfuzz's composition, which sized the output by
    # the largest segment id (9.2e18) and made jax abort: dlfuzz's call, not a user's.
    ids = np.array([-1, 2**63 - 2], np.int64)
    case = ApiCase("tensorflow.math.segment_max",
                   (Tensor.from_numpy(np.zeros(2, np.int64)), Tensor.from_numpy(ids)),
                   (("tf", Call("tensorflow.math.segment_max", (Ref(0), Ref(1)))),
                    ("jax", Call("dlfuzz.engines.api.counterparts.compose_jax_tf."
                                 "tf_segment_max", (Ref(0), Ref(1))))))
    ctx = OracleContext(None, {"tf": "tf", "jax": "jax"}, {})  # type: ignore[arg-type]
    abort = Outcome("jax", "crash", exc_type="SIGABRT", message="worker killed by SIGABRT")
    rejected = Outcome("tf", "exception", exc_type="InvalidArgumentError", message="ids")
    (found,) = CrashOracle().check(case, {"jax": abort, "tf": rejected}, ctx)
    assert "dlfuzz's own counterpart jax tf_segment_max" in found.detail("demoted")
    assert severity_of(found.symptom, dict(found.details)) == "inconsistency"
    # The same abort in the library's own API stays a crash.
    (own,) = CrashOracle().check(case, {"tf": Outcome("tf", "crash", exc_type="SIGABRT",
                                                      message="worker killed by SIGABRT")},
                                 ctx)
    assert severity_of(own.symptom, dict(own.details)) == "crash"
    # A hang there too, when another backend finished.
    hang = Outcome("jax", "timeout", message="no result within 10 s")
    (slow,) = CrashOracle().check(case, {"jax": hang, "tf": Outcome("tf", "ok")}, ctx)
    assert severity_of(slow.symptom, dict(slow.details)) == "inconsistency"
