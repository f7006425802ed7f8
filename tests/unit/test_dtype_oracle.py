"""The dtype oracle: a float16/bfloat16 result judged against the same library in float64.

A real torch worker carries a planted bug (``planted_torch_hardswish_bf16``: bfloat16
inputs above 0.5 get 1.0 added to hardswish's result); hardswish has no counterpart in
any other library, so only torch in float64 can tell. The float64 runs go to the same
worker, where the plant does not fire, exactly as in a campaign.
"""

from __future__ import annotations

from collections.abc import Iterator

import ml_dtypes
import numpy as np
import pytest
from real_workers import COMPILED, LIBRARY_OF, make_judge, started_pool, unary_case

from dlfuzz.cases import ApiCase
from dlfuzz.executor.pool import Pool
from dlfuzz.kinds.expectation import symptom_expectation
from dlfuzz.oracles.base import OracleContext
from dlfuzz.oracles.dtype import DtypeOracle
from dlfuzz.triage.severity import finding_severity

HARDSWISH = "torch.nn.functional.hardswish"
BF16 = ml_dtypes.bfloat16


@pytest.fixture(scope="module")
def pool() -> Iterator[Pool]:
    with started_pool(preload={"torch": ("planted_torch_hardswish_bf16",)}) as p:
        yield p


def _case(x: np.ndarray, target: str = HARDSWISH) -> ApiCase:
    return unary_case(target.rsplit(".", 1)[1], x, numpy_target="-", torch_target=target)


def _check(pool: Pool, case: ApiCase, deterministic: bool = True):
    judge, runner = make_judge(pool)
    ctx = OracleContext(judge, LIBRARY_OF, COMPILED, deterministic=lambda c: deterministic)
    outcomes = pool.run([case])[0]
    return DtypeOracle().check_many([(case, outcomes)], ctx)[0], ctx, outcomes, runner


def test_a_bfloat16_only_wrong_result_is_found_and_blames_torch(pool: Pool) -> None:
    case = _case(np.array([0.25, 1.5, 2.0, -1.0], dtype=BF16))
    found, ctx, outcomes, runner = _check(pool, case)
    (f,) = found
    assert (f.oracle, f.symptom, f.guilty_backend, f.api) == ("dtype", "numeric", "torch",
                                                              "hardswish")
    assert f.detail("method") == "own float64" and f.detail("reference_libraries") == "torch"
    assert "bfloat16" in f.message and "float64" in f.message
    assert finding_severity(f, case) == "wrong-result"
    # The upcast run alone, then (the result being off it) upcast and nudges in one
    # round trip.
    assert runner.calls == 2 and ctx.judge.reference_runs == 1 + 3
    # The reproducer expects the float64 result of the same call, not the planted one.
    exp = symptom_expectation(f, case, outcomes, ctx.judge)
    assert exp.kind == "values"
    expected = np.asarray(exp.expected[0]).astype(np.float64)
    x = np.array([0.25, 1.5, 2.0, -1.0])
    np.testing.assert_allclose(expected, x * np.clip(x + 3, 0, 6) / 6, rtol=1e-2)


def test_the_same_input_in_float32_or_below_the_plant_is_no_finding(pool: Pool) -> None:
    found, ctx, _, runner = _check(pool, _case(np.array([1.5, 2.0], dtype=np.float32)))
    assert found == [] and runner.calls == 0  # not a low dtype: nothing run
    found, ctx, _, runner = _check(pool, _case(np.array([0.25, -1.0, 0.5], dtype=BF16)))
    # Within the dtype's tolerance of the upcast run: no nudged runs needed.
    assert found == [] and runner.calls == 1 and ctx.judge.reference_runs == 1
    assert ctx.stats["dtype_unnudged"] == 1


@pytest.mark.parametrize("target,values", [
    ("torch.exp", [0.5, -2.0, 3.0, 7.25]),
    ("torch.tanh", [0.1, -0.7, 2.0]),
    ("torch.cumsum_last", [0.3, 1.7, -2.2, 5.5, 0.01, 9.0, -3.0]),
])
@pytest.mark.parametrize("dtype", [np.float16, BF16])
def test_correct_low_precision_results_are_no_finding(pool: Pool, target, values, dtype
                                                       ) -> None:
    x = np.array(values, dtype=dtype)
    if target == "torch.cumsum_last":
        from dlfuzz.cases import Call, Ref, Tensor
        case = ApiCase("cumsum", (Tensor.from_numpy(x),),
                       (("torch", Call("torch.cumsum", (Ref(0),), (("dim", -1),))),))
    else:
        case = _case(x, target)
    found, ctx, _, _ = _check(pool, case)
    assert found == [], [f.message for f in found]


def test_inputs_near_the_dtype_limit_and_random_apis_are_left_alone(pool: Pool) -> None:
    found, ctx, _, runner = _check(pool, _case(np.array([1e20, 1.5], dtype=BF16)))
    assert found == [] and runner.calls == 0 and ctx.stats["dtype_near_overflow"] == 1
    found, ctx, _, runner = _check(pool, _case(np.array([20.0, 1.5], dtype=np.float16)))
    assert found == [] and runner.calls == 0 and ctx.stats["dtype_near_overflow"] == 1
    found, ctx, _, runner = _check(pool, _case(np.array([1.5], dtype=BF16)),
                                   deterministic=False)
    assert found == [] and runner.calls == 0


def test_violate_mode_and_edge_expectations(pool: Pool) -> None:
    x = np.array([1.5, 2.0], dtype=BF16)
    invalid = unary_case("hardswish", x, numpy_target="-", torch_target=HARDSWISH,
                         expect="invalid:x.dtype == 'float32'")
    found, _, _, runner = _check(pool, invalid)
    assert found == [] and runner.calls == 0
    edge = unary_case("hardswish", x, numpy_target="-", torch_target=HARDSWISH,
                      expect="edge:special-one:input")
    found, _, _, _ = _check(pool, edge)
    assert [f.oracle for f in found] == ["dtype"]


def test_a_float_scalar_argument_leaves_the_case_alone(pool: Pool) -> None:
    from dlfuzz.cases import Call, Ref, Tensor
    x = np.array([0.98876953125, 0.5], dtype=np.float16)
    # torch rounds eps to float16 in the float16 run: clamp bounds differ from float64's
    case = ApiCase("logit", (Tensor.from_numpy(x),),
                   (("torch", Call("torch.logit", (Ref(0),), (("eps", 0.0112),))),))
    found, ctx, _, runner = _check(pool, case)
    assert found == [] and runner.calls == 0 and ctx.stats["dtype_float_scalar"] == 1


def _judge_outcome(pool: Pool, case: ApiCase, outputs: tuple[np.ndarray, ...]):
    from dlfuzz.cases import Outcome, Tensor
    judge, _ = make_judge(pool)
    ctx = OracleContext(judge, LIBRARY_OF, COMPILED, deterministic=lambda c: True)
    outcome = Outcome("torch", "ok", tuple(Tensor.from_numpy(np.asarray(o)) for o in outputs))
    return DtypeOracle().check_many([(case, {"torch": outcome})], ctx)[0], ctx


def test_integer_outputs_of_a_low_precision_call_are_not_judged(pool: Pool) -> None:
    from dlfuzz.cases import Call, Ref, Tensor
    x = np.array([[1.5, -2.0], [0.25, 3.0]], dtype=BF16)
    case = ApiCase("max", (Tensor.from_numpy(x),),
                   (("torch", Call("torch.max", (Ref(0),), (("dim", 0),))),))
    values = np.array([1.5, 3.0], dtype=BF16)
    # An index that differs (as a bin or an argmax does when rounding moves a value)
    found, _ = _judge_outcome(pool, case, (values, np.array([1, 0])))
    assert found == []
    found, _ = _judge_outcome(pool, case, (np.array([2.5, 3.0], dtype=BF16),
                                           np.array([0, 1])))
    assert [f.oracle for f in found] == ["dtype"]  # a wrong value still counts


def test_nan_kept_from_a_nan_input_is_not_blamed_on_the_low_dtype(pool: Pool) -> None:
    case = _case(np.array([np.nan, 1.0], dtype=BF16), "torch.exp")
    found, ctx = _judge_outcome(pool, case, (np.array([np.nan, np.nan], dtype=BF16),))
    assert found == [] and ctx.stats["dtype_nan_propagated"] == 1
    case = _case(np.array([0.5, 1.0], dtype=BF16), "torch.exp")
    found, _ = _judge_outcome(pool, case, (np.array([1.6484375, np.nan], dtype=BF16),))
    assert [f.symptom for f in found] == ["nan"]


def test_cancellation_in_a_low_precision_evaluation_is_no_finding(pool: Pool) -> None:
    # tanhshrink(x) = x - tanh(x): a bfloat16 evaluation of a small x loses it all
    x = np.array([0.0703125, 1.5, -2.0], dtype=BF16)
    case = _case(x, "torch.nn.functional.tanhshrink")
    wide = x.astype(np.float64)
    lost = (wide - np.tanh(wide)).astype(BF16)
    lost[0] = 0
    found, ctx = _judge_outcome(pool, case, (lost,))
    assert found == [] and ctx.stats["dtype_within_margin"] == 1


def test_counts_returned_as_floats_are_not_judged(pool: Pool) -> None:
    from dlfuzz.cases import Call, Ref, Tensor
    x = np.array([0.5, 1.25, 2.0, 2.0, 3.5, 3.5, 3.5], dtype=BF16)
    case = ApiCase("histc", (Tensor.from_numpy(x),),
                   (("torch", Call("torch.histc", (Ref(0),), (("bins", 4),))),))
    # one value moved to the neighbouring bin, as bin edges computed in bfloat16 do
    found, _ = _judge_outcome(pool, case, (np.array([2, 1, 1, 3], dtype=BF16),))
    assert found == []


def test_a_single_count_moved_to_the_next_bin_is_not_judged(pool: Pool) -> None:
    """jax.numpy.histogram of one bfloat16 0 (a false wrong result of an unaided
    campaign): its float64 middle edge is 1.4e-17, bfloat16's 0, so the one count sits
    in bin 4 or 5. The counts are 0s and a 1, too small to be taken for counts by their
    size; the same total says a value moved. A lost count is still a finding."""
    from dlfuzz.cases import Call, Ref, Tensor
    x = np.array([0.0], dtype=BF16)
    case = ApiCase("histc", (Tensor.from_numpy(x),),
                   (("torch", Call("torch.histc", (Ref(0),), (("bins", 10),))),))
    moved = np.zeros(10, dtype=BF16)
    moved[4] = 1  # torch's float64 run counts it in bin 5
    found, _ = _judge_outcome(pool, case, (moved,))
    assert found == []
    lost = np.zeros(10, dtype=BF16)
    found, _ = _judge_outcome(pool, case, (lost,))
    assert [f.oracle for f in found] == ["dtype"]


def _cumprod_case(values: list[float]) -> ApiCase:
    from dlfuzz.cases import Call, Ref, Tensor
    x = np.array(values, dtype=np.float16)
    return ApiCase("cumprod", (Tensor.from_numpy(x),),
                   (("torch", Call("torch.cumprod", (Ref(0),), (("dim", 0),))),))


def test_a_product_underflowing_the_low_dtype_before_an_infinity_is_no_finding(pool: Pool
                                                                              ) -> None:
    # numpy's float16 cumprod of these is NaN at the end: the partial product underflows
    # float16 to zero (6e-8) and then meets -inf; float64 keeps ~4e-13 and gives -inf.
    underflowing = [1.0, 0.00225, -0.00908, -0.00384, -0.00083, -0.0059, -np.inf]
    case = _cumprod_case(underflowing)
    with np.errstate(invalid="ignore"):
        low = np.cumprod(np.array(underflowing, dtype=np.float16))
    assert np.isnan(low[-1])
    found, ctx = _judge_outcome(pool, case, (low,))
    assert found == [] and ctx.stats["dtype_order_dependent_nan_inf"] == 1
    # Factors that cannot reach zero in float16: NaN there is a special-value bug.
    steady = [0.5, 2.0, -3.0, -np.inf]
    wrong = np.array([0.5, 1.0, -3.0, np.nan], dtype=np.float16)
    found, ctx = _judge_outcome(pool, _cumprod_case(steady), (wrong,))
    assert [f.oracle for f in found] == ["dtype"] and "gives nan" in found[0].message
    assert ctx.stats["dtype_order_dependent_nan_inf"] == 0


def test_integer_inputs_set_the_scale_of_a_low_precision_evaluation(pool: Pool) -> None:
    # int32 x with float16 y computes x in float16 (histogram2d's bin edges from -9 to 4):
    # a few roundings at magnitude 9 are the low dtype's cost, not a bug; the same error
    # on float16 inputs of magnitude 1 is far beyond it.
    from dlfuzz.cases import Call, Ref, Tensor
    y = np.full(3, 0.25, dtype=np.float16)

    def add(x: np.ndarray) -> ApiCase:
        return ApiCase("add", (Tensor.from_numpy(x), Tensor.from_numpy(y)),
                       (("torch", Call("torch.add", (Ref(0), Ref(1)))),))

    rounded_off = np.array([-8.796875, 4.25, 0.25], dtype=np.float16)  # 6 roundings at 9
    found, ctx = _judge_outcome(pool, add(np.array([-9, 4, 0], dtype=np.int32)),
                                (rounded_off,))
    assert found == [] and ctx.stats["dtype_within_margin"] == 1
    small = add(np.array([-1.25, 0.5, 0.0], dtype=np.float16))
    found, _ = _judge_outcome(pool, small, (np.array([-1.046875, 0.75, 0.25], np.float16),))
    assert [f.oracle for f in found] == ["dtype"]


def test_an_integer_input_beyond_the_low_dtype_s_range_is_left_alone(pool: Pool) -> None:
    # A false wrong result of an unaided campaign: int32 INT_MIN with a float16 divisor is
    # computed in float16, where INT_MIN is -inf, so torch.remainder gives NaN, as IEEE
    # asks of remainder(-inf, 1); float64 keeps INT_MIN finite and gives -0.
    from dlfuzz.cases import Call, Ref, Tensor

    def remainder(x: np.ndarray) -> ApiCase:
        y = np.array([0.0, 1.0], dtype=np.float16)
        return ApiCase("remainder", (Tensor.from_numpy(x), Tensor.from_numpy(y)),
                       (("torch", Call("torch.remainder", (Ref(0), Ref(1)))),))

    extreme = remainder(np.array([[0, 0], [-6, -2147483648]], dtype=np.int32))
    found, ctx, _, runner = _check(pool, extreme)
    assert found == [] and runner.calls == 0 and ctx.stats["dtype_near_overflow"] == 1
    # Within float16's range the same call is judged (and right).
    found, ctx, _, runner = _check(pool, remainder(np.array([[0, 0], [-6, -9]], np.int32)))
    assert found == [] and runner.calls == 1 and ctx.stats["dtype_near_overflow"] == 0


def test_a_whole_scalar_beyond_the_low_dtype_s_range_is_left_alone(pool: Pool) -> None:
    """A false wrong result of an unaided campaign: ``torch.xlogy(float16 0.217,
    2147483651)`` is inf, the int scalar taking the tensor's dtype (torch's documented
    promotion) and so being inf, where float64 gives 4.67."""
    from dlfuzz.cases import Call, Ref, Tensor

    def xlogy(y: int) -> ApiCase:
        x = np.array(0.21740723, dtype=np.float16)
        return ApiCase("xlogy", (Tensor.from_numpy(x),),
                       (("torch", Call("torch.xlogy", (Ref(0), y))),))

    found, ctx, _, runner = _check(pool, xlogy(2147483651))
    assert found == [] and runner.calls == 0 and ctx.stats["dtype_near_overflow"] == 1
    found, ctx, _, runner = _check(pool, xlogy(3))  # within float16's range: judged
    assert found == [] and runner.calls == 1 and ctx.stats["dtype_near_overflow"] == 0


def test_a_call_with_more_outputs_than_the_cap_is_left_alone(pool: Pool) -> None:
    """The judge works output by output: ``unbind`` of a float16 axis stretched to
    33,093 held a torch campaign's batch for an hour. Past ``MAX_OUTPUTS`` outputs the
    case is counted and not re-run; at the cap it is judged as any other."""
    from dlfuzz.oracles.dtype import MAX_OUTPUTS

    many = _case(np.ones((MAX_OUTPUTS + 1, 2), dtype=BF16), "torch.unbind")
    found, ctx, outcomes, runner = _check(pool, many)
    assert len(outcomes["torch"].outputs) == MAX_OUTPUTS + 1
    assert found == [] and runner.calls == 0 and ctx.stats["dtype_many_outputs"] == 1
    at_cap = _case(np.ones((MAX_OUTPUTS, 2), dtype=BF16), "torch.unbind")
    found, ctx, outcomes, runner = _check(pool, at_cap)
    assert found == [] and runner.calls == 1 and ctx.stats["dtype_many_outputs"] == 0
