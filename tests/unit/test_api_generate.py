"""Rule APIs (the numpy spec set): deterministic, valid by construction, varied, grouped by
signature, fast."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dlfuzz.backends.numpy_backend import NumpyBackend
from dlfuzz.cases import ApiCase, Outcome, Ref
from dlfuzz.engines.api.counterparts import load_counterparts
from dlfuzz.engines.api.engine import NumpyApiEngine as ApiEngine
from dlfuzz.engines.api.libspecs import load_set
from dlfuzz.engines.api.rulegen import RuleGenerator, rebuild
from dlfuzz.engines.api.values import Profile
from dlfuzz.errors import UsageError

SPECS = {api.split(".", 1)[1]: spec for api, spec in load_set("numpy").items()}
COUNTERPARTS = load_counterparts("numpy")


class Generator(RuleGenerator):
    """The rule generator calling numpy and one counterpart per other library."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)

    def group(self, spec, size, **kw):  # type: ignore[no-untyped-def,override]
        return super().group(spec, size, COUNTERPARTS.get(spec.api, ()), **kw)


def _rebuild(name, tensors, params=()):  # type: ignore[no-untyped-def]
    spec = SPECS[name]
    return rebuild(spec, tensors, params, COUNTERPARTS.get(spec.api, ()))


def _signature(case: ApiCase) -> tuple:
    return (case.api, tuple((t.dtype, t.shape) for t in case.tensors),
            tuple((lib, call.static_key()) for lib, call in case.calls))


def _numpy_run(case: ApiCase) -> tuple[np.ndarray, ...]:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return NumpyBackend().run(case)


# ---- determinism --------------------------------------------------------------------------------
def test_same_seed_same_cases() -> None:
    a = [c.id for c in ApiEngine(seed=7).propose(300)]
    b = [c.id for c in ApiEngine(seed=7).propose(300)]
    assert a == b


def test_different_seeds_differ() -> None:
    a = [c.id for c in ApiEngine(seed=1).propose(100)]
    b = [c.id for c in ApiEngine(seed=2).propose(100)]
    assert a != b


def test_propose_in_pieces_equals_propose_at_once() -> None:
    whole = [c.id for c in ApiEngine(seed=3).propose(50)]
    engine = ApiEngine(seed=3)
    pieces = [c.id for n in (1, 7, 13, 29) for c in engine.propose(n)]
    assert whole == pieces


# ---- signature groups ---------------------------------------------------------------------------
def test_groups_share_a_signature_and_vary_values() -> None:
    engine = ApiEngine(seed=11)
    cases = engine.propose(400)
    runs: list[list[ApiCase]] = [[cases[0]]]
    for case in cases[1:]:
        if _signature(case) == _signature(runs[-1][0]):
            runs[-1].append(case)
        else:
            runs.append([case])
    sizes = [len(r) for r in runs[:-1]]  # the last group may be cut by n
    assert sizes and min(sizes) >= 4
    assert np.mean(sizes) >= 4
    varied = sum(len({c.id for c in r}) > 1 for r in runs if r[0].tensors)
    assert varied >= 0.9 * sum(1 for r in runs if r[0].tensors)


def test_group_sizes_follow_the_setting() -> None:
    engine = ApiEngine(seed=2, group_size=(5, 5))
    cases = engine.propose(50)
    for i in range(0, 50, 5):
        assert len({_signature(c) for c in cases[i:i + 5]}) == 1


# ---- validity: shapes satisfy the spec's relations ----------------------------------------------
@pytest.mark.parametrize("name", sorted(SPECS))
def test_numpy_accepts_ordinary_inputs(name: str) -> None:
    """numpy (the reference) runs nearly every ordinary generated input of every spec."""
    spec = SPECS[name]
    gen = Generator(seed=5)
    failures = []
    dtypes = [d for d in spec.dtypes if d != "bfloat16"] or list(spec.dtypes)
    for i in range(12):
        case = gen.group(spec, 1, dtype=dtypes[i % len(dtypes)], profile=Profile())[0]
        try:
            _numpy_run(case)
        except Exception as exc:  # noqa: BLE001 - we count failures of the library
            failures.append(f"{[t.shape for t in case.tensors]} {case.params}: {exc.__cause__}")
    assert len(failures) <= 1, failures


def test_broadcast_and_matmul_relations_hold() -> None:
    gen = Generator(seed=9)
    for _ in range(200):
        add = gen.group(SPECS["add"], 1)[0]
        np.broadcast_shapes(*(t.shape for t in add.tensors))
        mm = gen.group(SPECS["matmul"], 1)[0]
        a, b = (t.shape for t in mm.tensors)
        k_a = a[-1]
        k_b = b[0] if len(b) == 1 else b[-2]
        assert k_a == k_b
        w = gen.group(SPECS["where"], 1)[0]
        assert w.tensors[0].dtype == "bool"
        np.broadcast_shapes(*(t.shape for t in w.tensors))


def test_axes_are_within_rank() -> None:
    gen = Generator(seed=4)
    for name in ("cumsum", "sum", "argmax", "diagonal", "swapaxes", "expand_dims"):
        spec = SPECS[name]
        for _ in range(150):
            case = gen.group(spec, 1)[0]
            rank = len(case.tensors[0].shape)
            for pname, value in case.params:
                p = spec.param(pname)
                if p.kind == "axis":
                    n = rank + (1 if p.insert else 0)
                    assert -n <= value < n, (name, rank, case.params)
                elif p.kind == "axes":
                    assert len({a % rank for a in value}) == len(value)
            if name == "diagonal":
                params = dict(case.params)
                assert params["axis1"] % rank != params["axis2"] % rank


def test_index_tensors_are_in_bounds() -> None:
    gen = Generator(seed=6)
    for _ in range(200):
        case = gen.group(SPECS["take_along_axis"], 1)[0]
        arr, idx = (t.to_numpy() for t in case.tensors)
        axis = dict(case.params)["axis"]
        assert idx.dtype == np.int64
        if idx.size:
            assert idx.min() >= 0 and idx.max() < arr.shape[axis]
        take = gen.group(SPECS["take"], 1)[0]
        a, i = (t.to_numpy() for t in take.tensors)
        if i.size:
            assert 0 <= i.min() and i.max() < a.size


def test_reshape_and_split_rules() -> None:
    gen = Generator(seed=8)
    for _ in range(200):
        case = gen.group(SPECS["reshape"], 1)[0]
        shape = dict(case.params)["shape"]
        size = case.tensors[0].size
        known = int(np.prod([d for d in shape if d != -1]))
        assert (known == size) if -1 not in shape else (known and size % known == 0)
        split = gen.group(SPECS["split"], 1)[0]
        params = dict(split.params)
        sections = params["indices_or_sections"]
        if isinstance(sections, int):
            dim = split.tensors[0].shape[params["axis"]]
            assert dim % sections == 0


def test_scalars_stay_scalars() -> None:
    gen = Generator(seed=1)
    seen = False
    for _ in range(300):
        case = gen.group(SPECS["sin"], 1)[0]
        t = case.tensors[0]
        assert t.to_numpy().shape == t.shape
        seen |= t.shape == ()
    assert seen


# ---- variety: special values, empty tensors, dtypes ---------------------------------------------
def test_special_values_and_empty_tensors_appear() -> None:
    cases = ApiEngine(seed=21, apis=["group:math_unary", "group:math_binary"]).propose(3000)
    found = {"nan": 0, "inf": 0, "-inf": 0, "-0.0": 0, "empty": 0, "huge": 0}
    for case in cases:
        for t in case.tensors:
            if t.size == 0:
                found["empty"] += 1
            if not t.dtype.startswith("float") or t.dtype == "bfloat16":
                continue
            a = t.to_numpy().astype(np.float64)
            found["nan"] += bool(np.isnan(a).any())
            found["inf"] += bool(np.isposinf(a).any())
            found["-inf"] += bool(np.isneginf(a).any())
            found["-0.0"] += bool(((a == 0) & np.signbit(a)).any())
            found["huge"] += bool((np.abs(a[np.isfinite(a)]) > 1e30).any())
    assert all(v > 0 for v in found.values()), found
    with_nan = sum(any(np.isnan(t.to_numpy().astype(np.float64)).any() for t in c.tensors
                       if t.dtype.startswith(("float", "bfloat"))) for c in cases)
    assert with_nan < 0.4 * len(cases)  # special values stay a modest share


def test_dtypes_come_from_the_spec() -> None:
    engine = ApiEngine(seed=5)
    seen: set[str] = set()
    for case in engine.propose(2000):
        spec = SPECS[case.api.split(".", 1)[1]]
        for t, p in zip(case.tensors, _tensor_params(spec, len(case.tensors)), strict=True):
            if p.role == "main":
                assert t.dtype in spec.dtypes, (case.api, t.dtype)
            seen.add(t.dtype)
    assert {"float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64",
            "uint8", "bool", "complex64"} <= seen


def _tensor_params(spec, n):  # type: ignore[no-untyped-def]
    plain = [p for p in spec.tensor_params if p.kind == "tensor"]
    out = []
    for p in spec.tensor_params:
        out += [p] * (1 if p.kind == "tensor" else n - len(plain))
    return out


def test_ranks_and_dims_are_small_and_biased() -> None:
    ranks, dims = [], []
    for case in ApiEngine(seed=3, apis=["group:math_unary"]).propose(2000):
        for t in case.tensors:
            ranks.append(len(t.shape))
            dims += list(t.shape)
    assert max(ranks) <= 5 and max(dims) <= 8
    assert np.mean(np.array(dims) <= 4) > 0.6


# ---- rebuild --------------------------------------------------------------------------------
def test_rebuild_reproduces_the_case() -> None:
    engine = ApiEngine(seed=13)
    for case in engine.propose(300):
        again = engine.rebuild(case.api, case.tensors, case.params, like=case)
        assert again.calls == case.calls and again.id == case.id
        fresh = engine.rebuild(case.api, case.tensors, case.params)
        assert fresh.calls == case.calls  # one counterpart per library: the same


def test_rebuild_drops_a_parameter_everywhere() -> None:
    gen = Generator(seed=2)
    while True:
        case = gen.group(SPECS["var"], 1)[0]
        if dict(case.params).get("axis") is not None:
            break
    params = {k: v for k, v in case.params if k != "axis"}
    smaller = _rebuild("var", case.tensors, params)
    for lib, call in smaller.calls:
        kwargs = dict(call.kwargs)
        assert "axis" not in kwargs
        if lib == "torch":  # back to a whole-array reduction, spelled dim=None for torch
            assert "dim" in kwargs and kwargs["dim"] is None
        assert call.args == (Ref(0),)
    assert "axis" not in dict(smaller.params)


def test_rebuild_with_fewer_list_tensors() -> None:
    gen = Generator(seed=4)
    case = gen.group(SPECS["stack"], 1)[0]
    one = _rebuild("stack", case.tensors[:1], case.params)
    torch_call = one.call_for("torch")
    assert torch_call.args[0] == (Ref(0),)


def test_rebuild_rejects_unknown_parameters() -> None:
    case = Generator(seed=1).group(SPECS["sum"], 1)[0]
    with pytest.raises(UsageError, match="no non-tensor parameter 'axes'"):
        _rebuild("sum", case.tensors, {"axes": (0,)})


# ---- engine -------------------------------------------------------------------------------------
def test_apis_that_never_run_are_sampled_less() -> None:
    engine = ApiEngine(seed=1, apis=["sin", "cos"])
    failed = Outcome(backend="numpy", status="exception")
    for _ in range(40):
        for case in engine.propose(8):
            engine.feedback(case, {"numpy": failed} if case.api == "numpy.sin" else
                            {"numpy": Outcome(backend="numpy", status="ok")}, [])
    later = [c.api for c in engine.propose(800)]
    assert later.count("numpy.sin") < 0.25 * len(later)
    assert later.count("numpy.sin") > 0  # sampled less, never dropped


def test_engine_selects_apis_and_libraries() -> None:
    engine = ApiEngine(seed=0, apis=["group:linalg", "sum"], libraries=("numpy", "torch"))
    cases = engine.propose(100)
    assert {c.api for c in cases} <= {s.api for s in SPECS.values()
                                      if s.group == "linalg"} | {"numpy.sum"}
    assert all(c.libraries == ("numpy", "torch") for c in cases)
    with pytest.raises(UsageError, match="did you mean cumsum"):
        ApiEngine(apis=["cumsun"])
    with pytest.raises(UsageError, match="unknown API group"):
        ApiEngine(apis=["group:nope"])


def test_reseed_restarts_the_streams_per_batch() -> None:
    first = ApiEngine(seed=4)
    first.reseed(3)
    a = [c.id for c in first.propose(40)]
    second = ApiEngine(seed=4)
    second.propose(17)  # what was drawn before batch 3 does not matter ...
    # ... given the same visits (a resumed campaign restores them from its stats): the
    # coverage groups go to the least visited APIs
    second.picker.visits = dict.fromkeys(second.picker.visits, 0)
    second.picker.uncovered = len(second.names)
    second.reseed(3)
    assert [c.id for c in second.propose(40)] == a
    second.reseed(4)
    assert [c.id for c in second.propose(40)] != a


def test_unsupported_backends_come_from_the_spec() -> None:
    engine = ApiEngine(seed=0, apis=["linalg.det", "sum"])
    for case in engine.propose(30):
        expected = {"tf-xla"} if case.api == "numpy.linalg.det" else set()
        assert engine.unsupported_backends(case) == expected


def _has_subnormal(cases: list[ApiCase]) -> bool:
    for case in cases:
        for t in case.tensors:
            if t.dtype in ("float32", "float64"):
                a = np.abs(t.to_numpy())
                tiny = np.finfo(a.dtype).tiny
                if ((a > 0) & (a < tiny)).any():
                    return True
    return False


def test_subnormals_only_without_flushing_libraries() -> None:
    """TF and XLA flush subnormals to zero by design: no subnormal inputs when they run."""
    unary = ["group:math_unary"]
    assert not _has_subnormal(ApiEngine(seed=1, apis=unary).propose(3000))
    assert _has_subnormal(ApiEngine(seed=1, apis=unary,
                                    libraries=("numpy", "torch")).propose(3000))


def test_apis_that_hang_are_sampled_much_less() -> None:
    engine = ApiEngine(seed=3, apis=["gcd", "add"])
    hung = Outcome(backend="jax", status="timeout")
    fine = Outcome(backend="numpy", status="ok")
    while engine.stats["numpy.gcd"].tried < 3:
        for case in engine.propose(8):
            engine.feedback(case, {"numpy": fine,
                                   "jax": hung if case.api == "numpy.gcd" else fine}, [])
    later = [c.api for c in engine.propose(400)]
    assert 0 < later.count("numpy.gcd") < 0.1 * len(later)
