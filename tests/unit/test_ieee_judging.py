"""IEEE-aware judging: special values, Annex F rules, evaluation order, conditioning,
documented differences, readable messages and finite-first reduction.

numpy and torch run in real workers (the float64 reference is theirs); outcomes of other
backends (tf, tf-xla) are data built from numpy arrays, as a worker would return them.
Two bugs are planted inside the real torch: ``planted_torch_exp_inf`` (float32 exp gives
NaN at +inf) and ``planted_torch_cumsum`` (a wrong finite last sum on long float32 rows).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from real_workers import COMPILED, LIBRARY_OF, make_judge, outcome, outputs_of, started_pool

from dlfuzz.cases import ApiCase, Call, Finding, Ref, Tensor
from dlfuzz.cases.kind import TriageTools
from dlfuzz.executor.pool import Pool
from dlfuzz.kinds.api import ApiKind
from dlfuzz.oracles.base import OracleContext
from dlfuzz.oracles.conditioning import condition_number, conditioning
from dlfuzz.oracles.differential import DifferentialOracle
from dlfuzz.oracles.reference import Reference
from dlfuzz.oracles.special import same_finding
from dlfuzz.triage.reduce import reduce_case

INF, NAN = np.inf, np.nan
F32 = np.float32


@pytest.fixture(scope="module")
def pool() -> Iterator[Pool]:
    with started_pool(preload={"torch": ("planted_torch_exp_inf", "planted_torch_cumsum")}) as p:
        yield p


def context(pool: Pool) -> OracleContext:
    judge, _ = make_judge(pool)
    return OracleContext(judge, LIBRARY_OF, COMPILED)


def call_case(api: str, targets: dict[str, str], *arrays: np.ndarray, prefix: tuple = ()
              ) -> ApiCase:
    refs = tuple(Ref(i) for i in range(len(arrays)))
    calls = tuple((lib, Call(t, prefix + refs)) for lib, t in targets.items())
    return ApiCase(api, tuple(Tensor.from_numpy(a) for a in arrays), calls)


def judge_case(pool: Pool, case: ApiCase, built: dict[str, np.ndarray]
               ) -> tuple[dict[str, Finding], OracleContext]:
    """numpy and torch run for real; ``built`` backends return the given arrays."""
    outcomes = pool.run([case])[0]
    for backend, arr in built.items():
        outcomes[backend] = outcome(backend, arr)
    ctx = context(pool)
    found = DifferentialOracle().check(case, outcomes, ctx)
    return {f.guilty_backend: f for f in found}, ctx


# ---- C99 Annex F rules -----------------------------------------------------------------

HYPOT = {"numpy": "numpy.hypot", "torch": "torch.hypot",
         "tf": "tensorflow.experimental.numpy.hypot"}


def test_hypot_of_inf_and_nan_blames_the_backend_that_breaks_the_rule(pool: Pool):
    x = np.array([INF, 1.0, 3.0], F32)
    y = np.array([NAN, 2.0, 4.0], F32)
    case = call_case("numpy.hypot", HYPOT, x, y)
    wrong = np.array([NAN, np.sqrt(5), 5.0], F32)
    found, _ = judge_case(pool, case, {"tf": wrong, "tf-xla": wrong})
    assert sorted(found) == ["tf", "tf-xla"]  # numpy and torch follow the rule
    f = found["tf"]
    assert "C99 F.9.4.3" in f.detail("special_values")
    assert "inputs hold nan, inf" in f.detail("special_values")
    assert f.detail("ieee_rules") == "C99 F.9.4.3: hypot(±inf, y) = +inf, even if y is a NaN"
    assert f.message.startswith("tf gives nan where the float64 reference of numpy+torch "
                                "gives inf (element [0]; inputs hold nan, inf)")


def test_a_rule_overrides_a_reference_that_breaks_it(pool: Pool):
    # pow(1, nan) = 1 (C99 F.9.4.4): the backend that says 1 is right even when the
    # float64 reference (here a wrong one, given by hand) says NaN.
    case = call_case("numpy.power", {"numpy": "numpy.power", "torch": "torch.pow"},
                     np.array([1.0, 2.0], F32), np.array([NAN, 3.0], F32))
    judge, _ = make_judge(pool)
    ref = Reference((np.array([NAN, 8.0]),), ("numpy", "torch"), None, "float64")
    outcomes = {"numpy": outcome("numpy", np.array([1.0, 8.0], F32)),
                "torch": outcome("torch", np.array([NAN, 8.0], F32))}
    verdicts = {v.backend: v for v in judge.verdicts(outcomes, ref, case)}
    assert not verdicts["numpy"].guilty
    assert verdicts["torch"].guilty
    assert verdicts["torch"].rules == ("C99 F.9.4.4: pow(+1, y) = 1 for any y, even a NaN",)
    # Without the case (no rule applies), the reference alone decides: the opposite.
    plain = {v.backend: v.guilty for v in judge.verdicts(outcomes, ref)}
    assert plain == {"numpy": True, "torch": False}


def test_atan2_signed_zeros_follow_annex_f(pool: Pool):
    judge, _ = make_judge(pool)
    y = np.array([0.0, -0.0, 0.0], F32)
    x = np.array([-0.0, -0.0, 1.0], F32)
    case = call_case("numpy.arctan2", {"numpy": "numpy.arctan2", "torch": "torch.atan2"}, y, x)
    ref = Reference((np.zeros(3),), ("numpy", "torch"), None, "float64")  # wrong: ±pi
    right = np.array([np.pi, -np.pi, 0.0], F32)
    outcomes = {"numpy": outcome("numpy", right), "torch": outcome("torch", np.zeros(3, F32))}
    verdicts = {v.backend: v for v in judge.verdicts(outcomes, ref, case)}
    assert not verdicts["numpy"].guilty and verdicts["torch"].guilty
    assert verdicts["torch"].rules == ("C99 F.9.1.4: atan2(±0, -0) = ±pi",)


def test_a_rule_applies_to_zero_dimensional_operands(pool: Pool):
    case = call_case("numpy.hypot", HYPOT, np.array(-INF, F32), np.array(NAN, F32))
    found, _ = judge_case(pool, case, {"tf": np.array(NAN, F32)})
    assert "C99 F.9.4.3" in found["tf"].detail("special_values")


# ---- evaluation order --------------------------------------------------------------------

def einsum_case() -> ApiCase:
    rng = np.random.default_rng(0)
    cd = np.array([[1.0, 2.0]], F32)
    ab = rng.uniform(0.5, 1.0, (2, 2)).astype(F32)
    aeb = rng.uniform(0.5, 1.0, (2, 3, 2)).astype(F32)
    aeb[0, 0, :] = -INF  # (e=0, b=0) sums -inf and +inf terms: NaN; (0, 1) is -inf
    aeb[1, 0, 0] = INF
    return call_case("numpy.einsum", {"numpy": "numpy.einsum", "torch": "torch.einsum"},
                     cd, ab, aeb, prefix=("cd,ab,aeb->eb",))


def test_nan_vs_inf_of_a_contraction_with_infinite_inputs_is_no_finding(pool: Pool):
    case = einsum_case()
    right = outputs_of(pool.run([case])[0]["numpy"])[0]
    assert np.isinf(right).any() or np.isnan(right).any()
    swapped = np.where(np.isinf(right), NAN, np.where(np.isnan(right), -INF, right)).astype(F32)
    found, ctx = judge_case(pool, case, {"tf": swapped, "tf-xla": swapped})
    assert found == {}
    assert ctx.stats["order_dependent_nan_inf"] == 2


def test_a_finite_error_of_a_contraction_with_infinite_inputs_is_still_found(pool: Pool):
    case = einsum_case()
    right = outputs_of(pool.run([case])[0]["numpy"])[0]
    off = right.copy()
    finite = np.flatnonzero(np.isfinite(off))
    assert finite.size
    off.reshape(-1)[finite[0]] += 1.0
    found, ctx = judge_case(pool, case, {"tf": off})
    assert list(found) == ["tf"]
    assert found["tf"].detail("special_values") == "inputs hold inf, -inf"
    assert ctx.stats["order_dependent_nan_inf"] == 0


SUM = {"numpy": "numpy.sum", "torch": "torch.sum"}


def test_a_sum_of_both_infinities_may_give_nan_or_inf(pool: Pool):
    case = call_case("numpy.sum", SUM, np.array([INF, -INF, 1.0], F32))
    found, ctx = judge_case(pool, case, {"tf": np.array(INF, F32)})
    assert found == {} and ctx.stats["order_dependent_nan_inf"] == 1


def test_a_sum_of_one_sign_of_infinity_has_one_answer(pool: Pool):
    # -inf + -inf + 1 is -inf in every order: NaN there is a bug (a special-value one).
    case = call_case("numpy.sum", SUM, np.array([-INF, -INF, 1.0], F32))
    found, ctx = judge_case(pool, case, {"tf": np.array(NAN, F32)})
    assert list(found) == ["tf"] and ctx.stats["order_dependent_nan_inf"] == 0
    f = found["tf"]
    assert f.message == ("tf gives nan where the float64 reference of numpy+torch gives -inf "
                         "(the scalar; inputs hold -inf)")
    assert f.detail("special_values") == "inputs hold -inf; reference holds -inf"


# ---- conditioning ------------------------------------------------------------------------

INV = {"numpy": "numpy.linalg.inv", "torch": "torch.linalg.inv"}


def test_singular_and_nearly_singular_matrices_are_ill_conditioned():
    singular = np.array([[1.0, 2.0], [2.0, 4.0]], F32)
    assert condition_number(singular) == float("inf")
    case = call_case("numpy.linalg.inv", INV, singular)
    c = conditioning(case, "float32")
    assert c is not None and c.ill_conditioned
    well = call_case("numpy.linalg.inv", INV, np.array([[2.0, 1.0], [1.0, 3.0]], F32))
    c = conditioning(well, "float32")
    assert c is not None and not c.ill_conditioned and c.condition_number < 10
    # float64 resolves what float32 cannot.
    near = call_case("numpy.linalg.inv", INV, np.array([[1.0, 1.0], [1.0, 1.0 + 2**-20]], F32))
    assert conditioning(near, "float32").ill_conditioned
    assert not conditioning(near, "float64").ill_conditioned
    assert conditioning(call_case("numpy.exp", {"numpy": "numpy.exp"}, singular),
                        "float32") is None
    # sin/cos/tan: the condition number is about |x|; past 1e5 float32 fixes no digits
    sin = {"numpy": "numpy.sin"}
    small = conditioning(call_case("numpy.sin", sin, singular), "float32")
    assert small is not None and not small.ill_conditioned
    huge = np.array([1e6, 2.0], F32)
    assert conditioning(call_case("numpy.sin", sin, huge), "float32").ill_conditioned
    assert not conditioning(call_case("numpy.sin", sin, huge), "float64").ill_conditioned
    assert conditioning(call_case("numpy.arcsin", {"numpy": "numpy.arcsin"}, huge),
                        "float32") is None
    # solve(A, b): A's conditioning counts, not the right-hand side's (rank one here).
    solve = {"numpy": "numpy.linalg.solve", "torch": "torch.linalg.solve"}
    rhs = np.ones((2, 3), F32)
    c = conditioning(call_case("numpy.linalg.solve", solve, np.eye(2, dtype=F32), rhs),
                     "float32")
    assert c is not None and c.condition_number == 1.0 and not c.ill_conditioned


def test_a_wrong_inverse_of_an_ill_conditioned_matrix_is_marked(pool: Pool):
    a = np.array([[1.0, 1.0], [1.0, 1.0 + 2**-20]], F32)
    case = call_case("numpy.linalg.inv", INV, a)
    right = outputs_of(pool.run([case])[0]["numpy"])[0]
    found, _ = judge_case(pool, case, {"tf": (-10 * right).astype(F32)})
    f = found["tf"]
    assert f.detail("ill_conditioned") is True
    assert f.detail("condition_number") > 1e6
    assert not f.detail("special_values")  # finite inputs: conditioning is the reason


def test_a_wrong_inverse_of_a_well_conditioned_matrix_is_not_marked(pool: Pool):
    a = np.array([[2.0, 1.0], [1.0, 3.0]], F32)
    case = call_case("numpy.linalg.inv", INV, a)
    right = outputs_of(pool.run([case])[0]["numpy"])[0]
    found, _ = judge_case(pool, case, {"tf": (right + 0.1).astype(F32)})
    f = found["tf"]
    assert f.detail("ill_conditioned") is False
    assert f.detail("condition_number") < 10
    assert f.message.startswith("tf gives ")
    assert "max abs diff 0.1, tolerance rtol 1.3e-06 + atol 1e-05 for float32, " \
           "4 of 4 elements off" in f.message


# ---- documented semantic differences ------------------------------------------------

def test_xla_max_nan_handling_is_demoted_and_eager_tf_is_not(pool: Pool):
    case = call_case("numpy.maximum", {"numpy": "numpy.maximum", "torch": "torch.maximum",
                                       "tf": "tensorflow.math.maximum"},
                     np.array([NAN, 1.0, 2.0], F32), np.array([0.0, 5.0, 1.0], F32))
    dropped = np.array([0.0, 5.0, 2.0], F32)
    found, _ = judge_case(pool, case, {"tf": dropped, "tf-xla": dropped})
    assert sorted(found) == ["tf", "tf-xla"]
    assert "github.com/tensorflow/tensorflow/issues/116992" in found["tf-xla"].detail("demoted")
    assert found["tf"].detail("demoted") is None  # TF eager documents NaN propagation
    for f in found.values():  # demoted or not, never hidden, and a special-value matter
        assert "IEEE 754-2019 9.6" in f.detail("special_values")


def test_tf_eager_elu_and_selu_on_negatives_are_a_known_upstream_issue():
    # TF eager computes exp(x) - 1 in the input dtype: selu(-0.01416) in bfloat16 is
    # -0.02747 (exp rounds to 0.984375) where float32 gives -0.02472.
    import ml_dtypes

    from dlfuzz.oracles.semantics import documented_difference
    bf16 = ml_dtypes.bfloat16
    for api in ("selu", "elu"):
        targets = {"torch": f"torch.nn.functional.{api}", "tf": f"tensorflow.nn.{api}"}
        negative = call_case(api, targets, np.array([0.0, -0.0141602], bf16))
        reason = documented_difference(negative, "tf", compiled=False)
        assert "tensorflow/tensorflow/issues/116943" in reason
        # XLA's path, positive inputs and other libraries are judged as always.
        assert documented_difference(negative, "tf", compiled=True) == ""
        assert documented_difference(negative, "torch", compiled=False) == ""
        positive = call_case(api, targets, np.array([0.5, 2.0], bf16))
        assert documented_difference(positive, "tf", compiled=False) == ""


# ---- planted bugs: special value vs wrong result, and finite-first reduction -----------

def reduce_with(pool: Pool, case: ApiCase, finding: Finding) -> ApiCase:
    def holds(candidates: list[ApiCase]) -> list[bool]:
        items = list(zip(candidates, pool.run(candidates), strict=True))
        results = DifferentialOracle().check_many(items, context(pool))
        return [any(same_finding(f, finding) for f in fs) for fs in results]

    passes = ApiKind().reduction(case, finding, TriageTools()).passes
    assert list(passes)[0] == "finite_first"
    return reduce_case(case, holds, passes, max_runs=80).case


def test_a_planted_divergence_only_at_inf_is_a_special_value_and_keeps_its_inf(pool: Pool):
    case = call_case("exp", {"numpy": "numpy.exp", "torch": "torch.exp"},
                     np.array([INF, 0.5, -2.0], F32))
    ctx = context(pool)
    (f,) = DifferentialOracle().check(case, pool.run([case])[0], ctx)
    assert f.guilty_backend == "torch"
    assert f.message == ("torch gives nan where the float64 reference of numpy+torch gives "
                         "inf (element [0]; inputs hold inf)")
    assert f.detail("special_values").startswith("C99 F.9.3.1: exp(+inf) = +inf")
    assert "inputs hold inf" in f.detail("special_values")
    small = reduce_with(pool, case, f)
    (x,) = (t.to_numpy() for t in small.tensors)
    assert x.size == 1 and np.isposinf(x).all()  # no finite input shows this bug


def test_a_planted_wrong_finite_result_is_reduced_to_finite_inputs(pool: Pool):
    rows = np.random.default_rng(3).uniform(-2.0, 2.0, (3, 8)).astype(F32)
    rows[0, 2] = INF  # the planted bug (+1 on the last sum) hides behind it in row 0 only
    rows[1, 4] = NAN
    case = call_case("cumsum", {}, rows)
    case = ApiCase("cumsum", case.tensors,
                   (("numpy", Call("numpy.cumsum", (Ref(0),), (("axis", -1),))),
                    ("torch", Call("torch.cumsum", (Ref(0),), (("dim", -1),)))))
    (f,) = DifferentialOracle().check(case, pool.run([case])[0], context(pool))
    assert (f.guilty_backend, f.symptom) == ("torch", "numeric")
    assert f.detail("special_values") == "inputs hold nan, inf"
    small = reduce_with(pool, case, f)
    arrays = [t.to_numpy() for t in small.tensors]
    assert all(np.isfinite(a).all() for a in arrays)
    (again,) = DifferentialOracle().check(small, pool.run([small])[0], context(pool))
    assert again.signature == f.signature and same_finding(again, f)
    assert not again.detail("special_values")  # on ordinary inputs: a wrong result


def test_an_intermediate_overflow_of_the_output_dtype_is_named():
    from dlfuzz.oracles.reference import Judge
    from dlfuzz.oracles.special import special_phrase

    judge = Judge(None, ["numpy"], LIBRARY_OF)  # type: ignore[arg-type]  # no runs needed
    case = call_case("numpy.square", {"numpy": "numpy.square"},
                     np.array([150.0, 2.0], np.float16))
    ref = Reference((np.array([22500.0, 4.0]),), ("numpy", "jax"), None, "float64")
    (v,) = judge.verdicts({"torch": outcome("torch", np.array([INF, 4.0], np.float16))}, ref)
    assert v.guilty
    assert special_phrase(case, v.actual, v.expected, v.bad) == "overflow in float16"
    (ok,) = judge.verdicts({"torch": outcome("torch", np.array([22500.0, 5.0], np.float16))},
                           ref)
    assert ok.guilty and special_phrase(case, ok.actual, ok.expected, ok.bad) == ""


# ---- a NaN the reference makes itself ------------------------------------------------------

FLOORDIV = {"numpy": "numpy.floor_divide", "torch": "torch.floor_divide",
            "tf": "tensorflow.experimental.numpy.floor_divide"}


def test_a_reference_nan_made_from_infinities_demotes_the_library_giving_a_number(pool: Pool):
    # numpy and torch give floor_divide(-inf, 1) = nan (inf arithmetic inside their
    # formula); tf's -inf is the limit. Nothing fixes the value: listed, demoted.
    case = call_case("numpy.floor_divide", FLOORDIV, np.array([-INF, 7.0], F32),
                     np.array([1.0, 2.0], F32))
    found, _ = judge_case(pool, case, {"tf": np.array([-INF, 3.0], F32)})
    assert "reference is NaN" in found["tf"].detail("demoted")


def test_a_nan_input_the_library_drops_is_not_demoted(pool: Pool):
    case = call_case("numpy.floor_divide", FLOORDIV, np.array([NAN, 7.0], F32),
                     np.array([1.0, 2.0], F32))
    found, _ = judge_case(pool, case, {"tf": np.array([0.0, 3.0], F32)})
    assert not found["tf"].detail("demoted")
    assert "inputs hold nan" in found["tf"].detail("special_values")


def _cumprod_case(x: np.ndarray) -> ApiCase:
    calls = (("numpy", Call("numpy.cumprod", (Ref(0),))),
             ("torch", Call("torch.cumprod", (Ref(0),), (("dim", 0),))))
    return ApiCase("cumprod", (Tensor.from_numpy(x),), calls)


def test_a_product_that_underflows_before_an_infinity_may_give_nan_or_inf(pool: Pool):
    # Real runs: numpy multiplies in float16 and reaches 0 * -inf = NaN, torch accumulates
    # in float32 and gives -inf (the float64 reference's answer).
    x = np.array([1.0, 0.00225, -0.00908, -0.00384, -0.00083, -0.0059, -INF], np.float16)
    outcomes = pool.run([_cumprod_case(x)])[0]
    assert np.isnan(outputs_of(outcomes["numpy"])[0][-1])
    assert outputs_of(outcomes["torch"])[0][-1] == -INF
    found, ctx = judge_case(pool, _cumprod_case(x), {})
    assert found == {} and ctx.stats["order_dependent_nan_inf"] == 1
    # In float32 the same factors stay far from its smallest subnormal: one answer.
    found, ctx = judge_case(pool, _cumprod_case(x.astype(F32)),
                            {"torch": np.append(np.cumprod(x[:-1].astype(F32)), NAN)})
    assert list(found) == ["torch"] and ctx.stats["order_dependent_nan_inf"] == 0
