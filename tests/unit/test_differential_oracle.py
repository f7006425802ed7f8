"""The differential oracle: numeric disagreements become findings blaming one backend.

A real torch worker carries a planted bug (``planted_torch_cumsum``: float32 inputs
whose scanned axis has 7 or more elements get 1.0 added to the last sum); numpy is
right. The float64 reference runs on the same workers, where the planted bug does not
fire, exactly as in a campaign.
"""

from __future__ import annotations

from collections.abc import Iterator

import ml_dtypes
import numpy as np
import pytest
from real_workers import (
    COMPILED,
    LIBRARY_OF,
    cumsum_case,
    make_judge,
    outcome,
    outputs_of,
    started_pool,
    unary_case,
)

from dlfuzz.cases import ApiCase, Call, GraphCase, Outcome, Ref, Tensor
from dlfuzz.executor.pool import Pool
from dlfuzz.oracles.base import OracleContext
from dlfuzz.oracles.differential import DifferentialOracle

RNG = np.random.default_rng(3)
ROWS = RNG.uniform(-2.0, 2.0, (3, 8)).astype(np.float32)  # planted bug fires (8 >= 7)
SHORT = RNG.uniform(-2.0, 2.0, (3, 5)).astype(np.float32)  # it does not (5 < 7)


@pytest.fixture(scope="module")
def pool() -> Iterator[Pool]:
    with started_pool(preload={"torch": ("planted_torch_cumsum",)}) as p:
        yield p


def context(pool: Pool) -> tuple[OracleContext, object]:
    judge, runner = make_judge(pool)
    return OracleContext(judge, LIBRARY_OF, COMPILED), runner


def check(pool: Pool, case: ApiCase, outcomes: dict[str, Outcome] | None = None):
    ctx, runner = context(pool)
    if outcomes is None:
        outcomes = pool.run([case])[0]
    return DifferentialOracle().check(case, outcomes, ctx), ctx, runner


def test_agreement_is_no_finding_and_computes_no_reference(pool: Pool):
    found, ctx, runner = check(pool, cumsum_case(SHORT))
    assert found == []
    assert ctx.stats["suspicious"] == 0
    assert runner.calls == 0 and ctx.judge.reference_runs == 0


def test_a_disagreement_within_the_dtype_tolerance_is_no_finding(pool: Pool):
    case = cumsum_case(SHORT)
    right = np.cumsum(SHORT.astype(np.float64), axis=-1)
    outcomes = {"numpy": outcome("numpy", right.astype(np.float32)),
                "torch": outcome("torch", (right * (1 + 5e-7)).astype(np.float32))}
    assert not np.array_equal(outputs_of(outcomes["numpy"])[0], outputs_of(outcomes["torch"])[0])
    found, ctx, _ = check(pool, case, outcomes)
    assert found == [] and ctx.stats["suspicious"] == 0


def test_one_backend_off_is_one_finding_blaming_it(pool: Pool):
    case = cumsum_case(ROWS)
    found, ctx, _ = check(pool, case)
    assert ctx.stats["suspicious"] == 1
    (f,) = found
    assert f.oracle == "differential"
    assert (f.symptom, f.guilty_backend, f.api, f.stage) == ("numeric", "torch", "cumsum", "call")
    assert f.case_id == case.id
    assert f.detail("method") == "float64"
    assert f.detail("reference_libraries") == "numpy,torch"
    assert f.detail("ratio") > 1.0
    # Only the last sum of each of the 3 rows is off: the message names the first of
    # them with both values, the largest difference, the tolerance and the count.
    right = np.cumsum(ROWS.astype(np.float64), axis=-1)[0, 7]
    assert f.message == (
        f"torch gives {right + 1:.6g} where the float64 reference of numpy+torch gives "
        f"{right:.6g} (element [0, 7]); max abs diff 1, tolerance rtol 1.3e-06 + atol "
        f"1e-05 for float32, 3 of 24 elements off")
    assert "inf" not in f.message
    # Finite inputs, finite reference: no special values, nothing to demote.
    assert f.detail("special_values") is None and f.detail("demoted") is None
    # The signature: symptom, stage, guilty backend, API, normalized message.
    assert f.signature.split("|")[:4] == ["numeric", "call", "torch", "cumsum"]


def test_the_same_bug_on_other_values_and_shapes_has_the_same_signature(pool: Pool):
    (a,), _, _ = check(pool, cumsum_case(ROWS))
    other = RNG.uniform(-50.0, 50.0, (2, 4, 11)).astype(np.float32)
    (b,), _, _ = check(pool, cumsum_case(other))
    assert a.signature == b.signature
    assert a.message != b.message  # the message keeps the counts; the signature does not


def test_the_signature_tells_input_dtypes_apart(pool: Pool):
    case = cumsum_case(ROWS.astype(np.float16))
    right = np.cumsum(ROWS.astype(np.float64), axis=-1)
    off = right.copy()
    off[:, -1] += 1.0
    outcomes = {"numpy": outcome("numpy", right.astype(np.float16)),
                "torch": outcome("torch", off.astype(np.float16))}
    (f16,), _, _ = check(pool, case, outcomes)
    (f32,), _, _ = check(pool, cumsum_case(ROWS))
    assert f16.guilty_backend == f32.guilty_backend == "torch"
    assert f16.signature != f32.signature


def test_nan_where_the_reference_is_finite_is_a_nan_finding(pool: Pool):
    case = cumsum_case(SHORT)
    outcomes = pool.run([case])[0]
    bad = outputs_of(outcomes["torch"])[0]
    bad[1, 2] = np.nan
    outcomes["torch"] = outcome("torch", bad)
    (f,), _, _ = check(pool, case, outcomes)
    assert (f.symptom, f.guilty_backend) == ("nan", "torch")
    assert f.signature.startswith("nan|")


def test_violate_mode_cases_are_left_to_the_boundary_oracle(pool: Pool):
    case = cumsum_case(ROWS, expect="invalid:rank")
    outcomes = pool.run([case])[0]
    assert not np.array_equal(outputs_of(outcomes["numpy"])[0], outputs_of(outcomes["torch"])[0])
    found, ctx, runner = check(pool, case, outcomes)
    assert found == []
    assert ctx.stats["suspicious"] == 0 and runner.calls == 0


def test_an_edge_input_outside_the_documented_domain_is_not_judged(pool: Pool):
    # The planted bug fires, but the input broke a relation between parameters on its
    # way to the edge: no result is right there, and nothing is claimed.
    case = cumsum_case(ROWS, expect="outside:special-one:dim:dim < input.ndims")
    assert not case.answerable and not case.invalid
    found, ctx, runner = check(pool, case)
    assert found == []
    assert ctx.stats["suspicious"] == 0 and runner.calls == 0
    (f,), _, _ = check(pool, cumsum_case(ROWS, expect="edge:special-one:input"))
    assert f.guilty_backend == "torch"


def test_without_a_reference_nobody_is_blamed(pool: Pool):
    # The two libraries compute different functions: no float64 agreement, no majority.
    case = unary_case("sin", SHORT, torch_target="torch.cos")
    found, ctx, _ = check(pool, case)
    assert found == []
    assert ctx.stats["suspicious"] == 1 and ctx.stats["unattributed"] == 1


def test_a_batch_is_judged_with_one_round_trip_for_its_references(pool: Pool):
    cases = [cumsum_case(SHORT), cumsum_case(ROWS), cumsum_case(ROWS, expect="invalid:x"),
             cumsum_case(ROWS[:2] * 3)]
    items = list(zip(cases, pool.run(cases), strict=True))
    ctx, runner = context(pool)
    results = DifferentialOracle().check_many(items, ctx)
    assert [[f.guilty_backend for f in fs] for fs in results] == [[], ["torch"], [], ["torch"]]
    assert runner.calls == 1
    assert [f.case_id for fs in results for f in fs] == [cases[1].id, cases[3].id]


def test_a_compiled_mode_off_from_its_eager_mode_is_blamed_alone(pool: Pool):
    case = cumsum_case(SHORT)
    outcomes = pool.run([case])[0]
    off = outputs_of(outcomes["torch"])[0]
    off[0, 0] += 0.5
    outcomes["torch-compile"] = outcome("torch-compile", off, stage="compile")
    found, _, _ = check(pool, case, outcomes)
    (f,) = found
    assert (f.guilty_backend, f.stage, f.symptom) == ("torch-compile", "compile", "numeric")
    assert f.signature.split("|")[:4] == ["numeric", "compile", "torch-compile", "cumsum"]
    assert f.detail("reference_libraries") == "numpy,torch"


def test_a_bug_shared_by_the_eager_and_compiled_modes_of_one_library_is_blamed(pool: Pool):
    case = cumsum_case(ROWS)  # the planted bug: torch eager is off
    outcomes = pool.run([case])[0]
    outcomes["torch-compile"] = outcome("torch-compile", outputs_of(outcomes["torch"])[0])
    found, _, _ = check(pool, case, outcomes)
    # The float64 reference (numpy and torch agree) and numpy's float32 result say torch
    # is wrong; torch-compile runs the same wrong kernel and is no independent evidence.
    assert sorted(f.guilty_backend for f in found) == ["torch", "torch-compile"]


def test_a_dlfuzz_written_counterpart_is_counted_not_blamed(pool: Pool):
    case = cumsum_case(SHORT)
    torch_call = case.call_for("torch")
    composed = ApiCase(case.api, case.tensors, (
        ("numpy", case.call_for("numpy")),
        ("torch", Call("dlfuzz.engines.api.counterparts.no_such_composition",
                       torch_call.args, torch_call.kwargs))))
    outcomes = pool.run([case])[0]  # what numpy and a (here: real) torch call give
    off = outputs_of(outcomes["torch"])[0] + 1.0
    outcomes = {"numpy": outcomes["numpy"], "torch": outcome("torch", off),
                "jax": outcome("jax", outputs_of(outcomes["numpy"])[0])}
    found, ctx, _ = check(pool, composed, outcomes)
    assert found == []
    assert ctx.stats["counterpart_disagreements"] == 1


# ---- model (graph) cases ---------------------------------------------------------------

def dense_model_case() -> GraphCase:
    from dlfuzz.ir.graph import GraphBuilder

    b = GraphBuilder((2, 4))
    x = b.add("Dense", "x0", units=3)
    b.add("ReLU", x)
    graph = b.build()
    rng = np.random.default_rng(0)
    weights = (("n0.kernel", Tensor.from_numpy(rng.normal(size=(4, 3)).astype(np.float32))),
               ("n0.bias", Tensor.from_numpy(rng.normal(size=(3,)).astype(np.float32))))
    x0 = Tensor.from_numpy(rng.normal(size=(2, 4)).astype(np.float32))
    return GraphCase("seed:dense", graph, weights, (x0,), ("torch",))


def test_a_model_case_judged_by_vote_carries_lemons_verdict_beside_ours(pool: Pool):
    case = dense_model_case()
    run = pool.run([case])[0]
    assert set(run) == {"torch"} and run["torch"].ok, run
    right = outputs_of(run["torch"])[0]
    off = right + 1.0
    outcomes = {"torch": run["torch"], "jax": outcome("jax", right), "tf": outcome("tf", off)}
    ctx, _ = context(pool)
    (fs,) = DifferentialOracle().check_many([(case, outcomes)], ctx)
    (f,) = fs
    assert (f.guilty_backend, f.symptom, f.detail("method")) == ("tf", "numeric", "vote")
    assert f.detail("reference_libraries") == "jax,torch"
    assert f.detail("lemon_vote") == "tf"
    assert f.detail("lemon_max_dmad") > 0.4  # LEMON's threshold
    # A model finding is sent to layer localization against a sound backend of another
    # library (torch here). Only torch has a worker in this module, so what the layer
    # search concludes is left to tests/backends/test_localize_fusion.py.
    assert ctx.stats["localizations"] == 1
    assert f.detail("localized_against") == "torch"


def test_a_low_precision_model_is_demoted_but_not_a_low_precision_op() -> None:
    from types import SimpleNamespace

    from dlfuzz.oracles.differential import _low_precision_model

    model = SimpleNamespace(kind="graph")
    assert "bfloat16 model" in _low_precision_model(model, "bfloat16")  # type: ignore[arg-type]
    assert _low_precision_model(model, "float32") == ""  # type: ignore[arg-type]
    op = ApiCase("relu", (), ())
    assert _low_precision_model(op, "bfloat16") == ""


def test_jax_angle_of_negative_zero_is_numpys_documented_pi() -> None:
    from dlfuzz.oracles.semantics import documented_difference
    x = np.array([-0.0, 1.0])
    case = ApiCase("tensorflow.math.angle", (Tensor.from_numpy(x),),
                   (("jax", Call("jax.numpy.angle", (Ref(0),))),))
    assert "numpy.angle" in documented_difference(case, "jax", False)
    plus = ApiCase("tensorflow.math.angle", (Tensor.from_numpy(np.array([0.0, 1.0])),),
                   (("jax", Call("jax.numpy.angle", (Ref(0),))),))
    assert documented_difference(plus, "jax", False) == ""


def test_known_nan_handling_of_model_layers_is_demoted_by_layer_and_mode() -> None:
    """A model finding is filed under its localized layer (``GraphCase.api``): XLA's NaN
    dropping (tensorflow#116992) in a tf-xla ReduceMax, torch's NaN-propagating threshold
    ORT's ReduceMax (onnxruntime#10514) and torch's GELU of infinities (pytorch#185770)
    are documented or known upstream, and only
    there: eager TF, other layers and finite inputs are judged as always."""
    from dataclasses import replace

    from dlfuzz.oracles.semantics import documented_difference

    case = dense_model_case()
    inf = replace(case, tensors=tuple(
        Tensor.from_numpy(np.where(np.arange(t.to_numpy().size).reshape(t.shape) == 0,
                                   np.inf, t.to_numpy())) for t in case.tensors))
    assert "116992" in documented_difference(replace(inf, api="ReduceMax"), "tf", True)
    assert "116992" in documented_difference(replace(inf, api="GlobalMaxPool2D"), "tf", True)
    assert documented_difference(replace(inf, api="ReduceMax"), "tf", False) == ""
    assert documented_difference(replace(case, api="ReduceMax"), "tf", True) == ""
    assert documented_difference(replace(inf, api="ReduceMean"), "tf", True) == ""
    assert "10277" in documented_difference(replace(inf, api="ThresholdedReLU"), "torch", False)
    assert "10514" in documented_difference(replace(inf, api="ReduceMax"), "onnxruntime", True)
    assert documented_difference(replace(inf, api="ReduceMin"), "onnxruntime", True) == ""
    assert "185770" in documented_difference(replace(inf, api="GELU"), "torch", False)
    assert documented_difference(replace(case, api="GELU"), "torch", False) == ""


def test_an_integer_result_from_inputs_that_overflow_is_demoted() -> None:
    from dlfuzz.oracles.differential import _integer_overflow
    big = ApiCase("square", (Tensor.from_numpy(np.array([46341, 3], dtype=np.int32)),),
                  (("torch", Call("torch.square", (Ref(0),))),))
    assert "integer overflow" in _integer_overflow(big, "int32")
    assert _integer_overflow(big, "float32") == ""  # a float result: judged as always
    small = ApiCase("square", (Tensor.from_numpy(np.array([46340, 3], dtype=np.int32)),),
                    (("torch", Call("torch.square", (Ref(0),))),))
    assert _integer_overflow(small, "int32") == ""


def test_a_model_within_its_depth_of_rounding_is_no_finding() -> None:
    """Off by at most one per-operation tolerance per node, a model says nothing (every
    layer rounds); further off, or NaN/inf, it is judged as before."""
    from dlfuzz.ir.graph import GraphBuilder
    from dlfuzz.oracles.differential import model_rounding
    from dlfuzz.oracles.reference import Verdict

    b = GraphBuilder((2, 3), dtype="float16")
    x = "x0"
    for _ in range(4):
        x = b.add("Tanh", x)
    model = GraphCase("model:t", b.build(), (), (), ("torch",))

    def verdict(ratio: float, got: float, dtype: str = "float16") -> tuple[Outcome, Verdict]:
        actual = np.array([got, 0.5], dtype=dtype)
        out = Outcome("torch", "ok", (Tensor.from_numpy(actual),))
        return out, Verdict("torch", (), True, ratio, "numeric",
                            expected=(np.array([0.25, 0.5], dtype=dtype),),
                            bad=(np.array([True, False]),), actual=(actual,))

    assert model_rounding(model, *verdict(1.7, 0.2502))
    assert model_rounding(model, *verdict(4.0, 0.2502))  # four layers, four roundings
    assert not model_rounding(model, *verdict(9.0, 0.26))
    assert not model_rounding(model, *verdict(1.7, np.inf))
    assert model_rounding(model, *verdict(1.7, 0.2502, "float32"))  # float32 layers round
    assert not model_rounding(model, *verdict(1.7, 2, "int32"))  # integers are exact
    op = ApiCase("relu", (), ())
    assert not model_rounding(op, *verdict(1.7, 0.2502))


def _tanh_model(dtype: str, layers: int = 4) -> GraphCase:
    from dlfuzz.ir.graph import GraphBuilder

    b = GraphBuilder((1, 2), dtype=dtype)
    x = "x0"
    for _ in range(layers):
        x = b.add("Tanh", x)
    return GraphCase("model:t", b.build(), (), (), ("torch", "jax", "tf"))


def test_a_demoted_low_precision_model_says_its_dtype() -> None:
    """The model engine re-runs such a model in float32 (the judge of its layers): the
    detail ``low_precision_model`` is how it knows which findings ask for that."""
    from types import SimpleNamespace

    from dlfuzz.oracles.differential import judgement
    from dlfuzz.oracles.reference import Verdict

    model = _tanh_model("float16")
    ctx = SimpleNamespace(library_of={"torch": "torch"}, compiled={}, stats={})
    a = np.array([0.25, 0.5], np.float16)
    v = Verdict("torch", (), True, 250.0, "numeric", expected=(a + 0.25,),
                bad=(np.array([True, False]),), actual=(a,))
    out = Outcome("torch", "ok", (Tensor.from_numpy(a),))
    details = dict(judgement(model, out, v, ctx))  # type: ignore[arg-type]
    assert "float16 model" in details["demoted"]
    assert details["low_precision_model"] == "float16"


def test_a_wider_output_of_a_low_precision_model_is_judged_in_the_model_dtype() -> None:
    """TF under NumPy-style promotion once returned float64 from ``gelu`` of a bfloat16
    model; judged with float64's tolerance, bfloat16 rounding read as a wrong result
    thousands of tolerances off. The model's dtype is what its outputs are judged in."""
    from dlfuzz.oracles.reference import Judge, Reference

    model = _tanh_model("bfloat16", layers=1)
    reference = np.array([[-0.16961444, -0.16978487]])
    ref = Reference((reference,), ("jax", "torch"), None, "float64")
    wide = np.array([[-0.16881561, -0.16937256]])  # bfloat16 arithmetic, float64 out
    narrow = reference.astype(ml_dtypes.bfloat16)
    outcomes = {"tf": Outcome("tf", "ok", (Tensor.from_numpy(wide),)),
                "jax": Outcome("jax", "ok", (Tensor.from_numpy(narrow),))}
    judge = Judge(lambda cases, backends: [], ["jax", "tf"], {"jax": "jax", "tf": "tf"})
    verdicts = {v.backend: v for v in judge.verdicts(outcomes, ref, model)}
    assert not verdicts["tf"].guilty and verdicts["tf"].ratio < 1
    assert verdicts["tf"].actual[0].dtype.name == "bfloat16"
    # An API case has no model dtype: its float64 output is judged as float64.
    api = ApiCase("gelu", (), ())
    assert judge.verdicts({"tf": outcomes["tf"]}, ref, api)[0].guilty


def test_nan_handling_in_a_low_precision_model_is_not_demoted_as_rounding() -> None:
    """A float16 model fed a NaN, where one library drops it (ORT's ReduceMax) and the
    reference keeps it: NaN handling, which no rounding explains, so it stays judged
    (and joins the max-like NaN family) instead of being demoted with the model."""
    from types import SimpleNamespace

    from dlfuzz.oracles.differential import judgement
    from dlfuzz.oracles.reference import Verdict

    model = _tanh_model("float16")
    ctx = SimpleNamespace(library_of={"ort": "onnx"}, compiled={}, stats={})
    got = np.array([-0.0, 0.5], np.float16)

    def details(x0: np.ndarray, expected: np.ndarray) -> dict:
        case = model.with_tensors((Tensor.from_numpy(x0),))
        v = Verdict("ort", (), True, 1e300, "numeric", expected=(expected,),
                    bad=(np.array([True, False]),), actual=(got,))
        out = Outcome("ort", "ok", (Tensor.from_numpy(got),))
        return dict(judgement(case, out, v, ctx))  # type: ignore[arg-type]

    nan_in = np.array([[np.nan, 1.0]], np.float16)
    assert "demoted" not in details(nan_in, np.array([np.nan, 0.5], np.float16))
    # Finite inputs, or a NaN input with a finite disagreement: rounding, as before.
    finite_in = np.array([[0.3, 1.0]], np.float16)
    assert "float16 model" in details(finite_in, np.array([0.25, 0.5], np.float16))["demoted"]
    assert "float16 model" in details(nan_in, np.array([0.25, 0.5], np.float16))["demoted"]


def test_a_low_precision_call_with_a_float_scalar_is_demoted() -> None:
    """``jnp.isclose(bfloat16 -0.418, [0, -0.984], 0.5726)`` is true in JAX, which
    rounds the Python float to bfloat16 (0.574) and compares in it; torch and the
    float64 reference say false. Which width a library gives the scalar is its choice,
    and the input nudges do not move the scalar, so such a call is listed, not filed as
    a wrong result; without a float scalar, or in float32, it is judged as always."""
    from dlfuzz.oracles.differential import _low_precision_scalar

    def isclose(dtype: type, rtol: float) -> ApiCase:
        a = Tensor.from_numpy(np.array(-0.41796875, dtype=dtype))
        b = Tensor.from_numpy(np.array([0.0, -0.984375], dtype=dtype))
        return ApiCase("torch.isclose", (a, b), (
            ("torch", Call("torch.isclose", (Ref(0), Ref(1), rtol))),
            ("jax", Call("jax.numpy.isclose", (Ref(0), Ref(1), rtol)))))

    low = isclose(ml_dtypes.bfloat16, 0.5725606663425917)
    assert "bfloat16 call with the float argument 0.5725606663425917" in \
        _low_precision_scalar(low, "jax")
    assert _low_precision_scalar(low, "tensorflow") == ""  # no call of that library
    assert _low_precision_scalar(isclose(np.float32, 0.5725606663425917), "jax") == ""
    assert _low_precision_scalar(isclose(ml_dtypes.bfloat16, 2.0), "jax") == ""


def test_counts_moved_to_a_neighbouring_bin_are_demoted() -> None:
    """``jnp.histogram`` of the float32 value -0.3926 in two bins counts it in the first,
    float64 in the second (the middle edge rounds one ulp above it in float32): the
    counts keep their total, so a bin edge's rounding moved them. A count that changes
    the total, or counts from float64 inputs, are judged as always."""
    from dlfuzz.oracles.differential import _moved_bins
    from dlfuzz.oracles.reference import Verdict

    def verdict(actual: list[float], expected: list[float]) -> Verdict:
        edges = np.array([-0.89257, -0.39257, 0.10743])
        return Verdict("jax", (), True, 1.0, "numeric",
                       expected=(np.array(expected, np.float32), edges),
                       bad=(np.array(actual) != np.array(expected), np.zeros(3, bool)),
                       actual=(np.array(actual, np.float32), edges))

    def case(dtype: type) -> ApiCase:
        x = Tensor.from_numpy(np.array(-0.39257004857063293, dtype=dtype))
        return ApiCase("torch.histogram", (x,),
                       (("jax", Call("jax.numpy.histogram", (Ref(0), 2))),))

    assert "counts moved between bins" in _moved_bins(case(np.float32), verdict([1, 0], [0, 1]))
    assert _moved_bins(case(np.float32), verdict([1, 1], [0, 1])) == ""  # the total changed
    assert _moved_bins(case(np.float64), verdict([1, 0], [0, 1])) == ""
    assert _moved_bins(case(np.float32), verdict([0.5, 0.5], [0, 1])) == ""  # not counts


def test_integers_off_by_a_wraparound_of_a_narrower_input_are_demoted() -> None:
    """torch promotes an int32 ``cumprod`` to int64, JAX and TF wrap in int32: torch's
    3,623,878,656 against the others' -671,088,640 is 2**32 apart. Integer results off
    by a multiple of 2**bits of an integer input's width are a wrap-around, listed, not
    filed; any other integer difference, or one without a narrower integer input, is
    judged as always."""
    from dlfuzz.oracles.differential import _wrapped
    from dlfuzz.oracles.reference import Verdict

    def verdict(actual: int, expected: int) -> Verdict:
        a, e = np.array([6, actual], np.int64), np.array([6, expected], np.int64)
        return Verdict("torch", (), True, 1.0, "numeric", expected=(e,), bad=(a != e,),
                       actual=(a,))

    def case(dtype: type) -> ApiCase:
        x = Tensor.from_numpy(np.array([2, 3, 40], dtype=dtype))
        return ApiCase("jax.lax.cumprod", (x,),
                       (("torch", Call("torch.cumprod", (Ref(0), 0))),))

    assert "multiple of 2**32" in _wrapped(case(np.int32), verdict(3623878656, -671088640))
    assert _wrapped(case(np.int32), verdict(3623878656, 3623878655)) == ""
    assert _wrapped(case(np.int64), verdict(3623878656, -671088640)) == ""
    assert "multiple of 2**8" in _wrapped(case(np.uint8), verdict(300, 44))


def test_a_low_precision_result_within_its_evaluation_rounding_is_demoted() -> None:
    """``torch.nn.functional.layer_norm`` of one bfloat16 element (-1.46) gives -1.3e-05
    where float64 gives 0: ``x * rstd - mean * rstd``, two terms of 462, computed and
    rounded apart. Within a few roundings of the largest input, a low-precision result
    is listed, not filed (the dtype oracle's rule); a larger deviation, or the same one
    from float32 inputs, is judged as always."""
    from dlfuzz.oracles.differential import _low_precision_evaluation
    from dlfuzz.oracles.reference import Verdict

    def case(dtype: type) -> ApiCase:
        x = Tensor.from_numpy(np.array([-1.4609375], dtype=dtype))
        return ApiCase("torch.nn.functional.layer_norm", (x,), (
            ("torch", Call("torch.nn.functional.layer_norm", (Ref(0), (1,)))),))

    def verdict(actual: float, dtype: type) -> Verdict:
        got = np.array([actual], dtype=dtype)
        return Verdict("torch", (), True, 1.3, "numeric", expected=(np.zeros(1, dtype),),
                       bad=(np.array([True]),), actual=(got,))

    low = ml_dtypes.bfloat16
    assert "within a few roundings" in _low_precision_evaluation(case(low),
                                                                 verdict(-1.33514e-05, low))
    assert _low_precision_evaluation(case(low), verdict(0.5, low)) == ""  # 8 roundings: 0.09
    assert _low_precision_evaluation(case(np.float32),
                                     verdict(-1.33514e-05, np.float32)) == ""
