"""Counterpart files and calls: loading, errors that name file/line/key, Call building,
the same-name argument adapter, the compositions' shape arithmetic, the LLM runner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dlfuzz.cases import Call, DType, Ref
from dlfuzz.engines.api import libspecs
from dlfuzz.engines.api.counterparts import (
    Counterpart,
    NotApplicable,
    dump,
    load_counterparts,
    load_file,
)
from dlfuzz.engines.api.counterparts.compose_common import (
    pool_geometry,
    same_padding,
    torch_pad_pairs,
    torch_softmax_dim,
)
from dlfuzz.engines.api.counterparts.llm_exec import run as llm_run
from dlfuzz.errors import UsageError
from dlfuzz.specgen.counterparts.same_name import Param, _doc_params, adapt

SUM = Counterpart(
    "torch.sum", "tf", "same-name", "tensorflow.math.reduce_sum", args=("input", "dim"),
    rename=(("input", "input_tensor"), ("dim", "axis"), ("keepdim", "keepdims")),
    extra=(("keepdims", False),), drop=("out",), convert=(("dim", "tuple_or_none"),),
    requires_default=(("dtype", None),), dtypes=("float32", "int64"),
    evidence=(("inputs", 16),))


def write(path: Path, entries: list, library: str = "torch", **head: object) -> Path:
    doc = {"format": 1, "library": library, **head, "counterparts": entries}
    path.write_text(json.dumps(doc, indent=1))
    return path


def test_dump_load_round_trip(tmp_path: Path) -> None:
    llm = Counterpart("torch.sin", "jax", "llm", "f", args=("input",),
                      code="def f(x):\n    import jax.numpy as jnp\n    return jnp.sin(x)\n")
    mode = Counterpart("torch.sin", "torch-compile", "mode", "torch.sin", args=("input",))
    path = tmp_path / "torch.json"
    dump("torch", [SUM, llm, mode], path, rejected=[{"api": "torch.sin", "reason": "x"}],
         header={"versions": {"torch": "2"}})
    loaded = load_file(path)
    assert set(loaded.counterparts) == {SUM, llm, mode}
    assert loaded.rejected == ({"api": "torch.sin", "reason": "x"},)
    again = next(c for c in loaded.counterparts if c.api == "torch.sum")
    assert again.evidence_dict() == {"inputs": 16} and again.dtypes == ("float32", "int64")
    # one counterpart per line: a refresh is a readable diff
    assert sum(line.lstrip().startswith('{"api"') for line in path.read_text().splitlines()) == 4
    table = load_counterparts("torch", path)
    assert [c.kind for c in table["torch.sin"]] == ["mode", "llm"]


def test_dtype_args_survive_the_file(tmp_path: Path) -> None:
    cp = Counterpart("torch.sum", "jax", "same-name", "jax.numpy.sum", args=("input",),
                     extra=(("dtype", DType("float64")),))
    path = tmp_path / "torch.json"
    dump("torch", [cp], path)
    assert load_file(path).counterparts == (cp,)


@pytest.mark.parametrize(("key", "value", "fix"), [
    ("kind", "alias", "use one of"),
    ("library", "numpy", "use one of"),
    ("target", "jax numpy.sin", "dotted path"),
    ("convert", {"dim": "tuplify"}, "use one of"),
    ("args", ["input", 3], "parameter names"),
    ("colour", "red", "unknown key"),
])
def test_bad_entries_name_file_line_key_and_fix(tmp_path: Path, key: str, value: object,
                                                fix: str) -> None:
    good = {"api": "torch.sin", "library": "jax", "kind": "same-name",
            "target": "jax.numpy.sin"}
    bad = dict(good, **{key: value})
    path = tmp_path / "torch.json"
    path.write_text('{"format": 1, "library": "torch",\n "counterparts": [\n  '
                    + json.dumps(good) + ",\n  " + json.dumps(bad) + "]}\n")
    with pytest.raises(UsageError) as err:
        load_file(path)
    text = str(err.value)
    named = "'convert.dim'" if key == "convert" else repr(key)
    assert f"{path}:4" in text and named in text and fix in text


def test_file_level_errors(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text('{"format": 1, "library": "torch", "counterparts": [}')
    with pytest.raises(UsageError, match=r"a\.json:1:\d+: not valid JSON"):
        load_file(tmp_path / "a.json")
    with pytest.raises(UsageError, match="format"):
        load_file(_raw(tmp_path / "b.json", {"format": 9, "library": "torch",
                                             "counterparts": []}))
    wrong = {"api": "jax.numpy.sin", "library": "torch", "kind": "same-name",
             "target": "torch.sin"}
    with pytest.raises(UsageError, match="move it to that library's file"):
        load_file(write(tmp_path / "c.json", [wrong]))
    with pytest.raises(UsageError, match="cannot read"):
        load_file(tmp_path / "missing.json")
    llm = {"api": "torch.sin", "library": "jax", "kind": "llm", "target": "f", "code": "x=1"}
    with pytest.raises(UsageError, match="def f"):
        load_file(write(tmp_path / "d.json", [llm]))


def _raw(path: Path, doc: dict) -> Path:
    path.write_text(json.dumps(doc))
    return path


def test_call_positional_rename_extra_convert_drop() -> None:
    values = {"input": Ref(0), "dim": 1, "keepdim": True, "out": Ref(1)}
    call = SUM.call(values)
    assert call == Call("tensorflow.math.reduce_sum", (Ref(0), (1,)), (("keepdims", True),))
    # a left-out positional parameter: the rest go by keyword, defaults from extra
    call = SUM.call({"input": Ref(0)})
    assert call == Call("tensorflow.math.reduce_sum", (Ref(0),), (("keepdims", False),))
    # a parameter the counterpart cannot express, away from its default
    assert SUM.applies({"input": Ref(0), "dtype": None})
    assert not SUM.applies({"input": Ref(0), "dtype": DType("float64")})
    with pytest.raises(NotApplicable, match="dtype"):
        SUM.call({"input": Ref(0), "dtype": DType("float64")})


def test_extra_default_never_repeats_a_positional_value() -> None:
    cp = Counterpart("torch.std", "jax", "same-name", "jax.numpy.std",
                     args=("input", "dim"), rename=(("dim", "axis"),),
                     extra=(("axis", None), ("ddof", 1)))
    call = cp.call({"input": Ref(0), "dim": 0})
    assert call.args == (Ref(0), 0) and dict(call.kwargs) == {"ddof": 1}


def test_applies_checks_validated_dtypes() -> None:
    import numpy as np

    assert SUM.applies({"input": np.zeros(3, np.float32)})
    assert not SUM.applies({"input": np.zeros(3, np.float16)})
    assert SUM.applies({"input": Ref(0)})  # a Ref carries no dtype: only defaults checked


def test_spread_precision_llm_and_mode_calls() -> None:
    cat = Counterpart("torch.broadcast_tensors", "jax", "same-name",
                      "jax.numpy.broadcast_arrays", args=("*tensors",))
    assert cat.call({"tensors": (Ref(0), Ref(1))}).args == (Ref(0), Ref(1))
    prec = Counterpart("torch.sin", "torch", "precision", "torch.sin", args=("input",))
    call = prec.call({"input": Ref(0)})
    assert call.target.endswith("precision.run_torch") and call.args == ("torch.sin", Ref(0))
    llm = Counterpart("torch.sin", "jax", "llm", "f", args=("input",), code="def f(x): ...")
    call = llm.call({"input": Ref(0)})
    assert call.target.endswith("llm_exec.run") and call.args[1:] == ("f", Ref(0))
    mode = Counterpart("torch.sin", "torch-compile", "mode", "torch.sin", args=("input",))
    assert mode.worker_library == "torch" and mode.call({"input": Ref(0)}).target == "torch.sin"


def test_llm_runner_executes_each_source_once() -> None:
    code = "calls = []\ndef f(a, b=2):\n    calls.append(a)\n    return a * b\n"
    assert llm_run(code, "f", 3) == 6 and llm_run(code, "f", 4, b=1) == 4
    from dlfuzz.engines.api.counterparts.llm_exec import function

    assert function(code, "f").__globals__["calls"] == [3, 4]  # one namespace, reused
    with pytest.raises(NameError):
        llm_run(code, "g", 1)


def _spec(tmp: Path, api: str, params: list[dict]) -> libspecs.LibSpec:
    doc = {"format": 2, "library": "torch", "apis": [{"api": api, "params": params}]}
    return libspecs.load_file(_raw(tmp / f"{api}.json", doc))[0]


def test_adapter_renames_synonyms_and_keeps_defaults(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "torch.std", [
        {"name": "input", "type": ["tensor"]},
        {"name": "dim", "type": ["int", "none"], "optional": True, "default": None},
        {"name": "correction", "type": ["int"], "optional": True, "default": 1},
        {"name": "keepdim", "type": ["bool"], "optional": True, "default": False},
        {"name": "out", "type": ["tensor", "none"], "optional": True, "default": None}])
    target = [Param("a", True, True), Param("axis", True, True, required=False, default=None),
              Param("dtype", True, True, required=False, default=None),
              Param("out", True, True, required=False, default=None),
              Param("ddof", True, True, required=False, default=0),
              Param("keepdims", True, True, required=False, default=False)]
    cp = adapt(spec, "jax.numpy.std", "jax", target)
    assert cp is not None
    assert cp.args == ("input", "dim")
    assert dict(cp.rename) == {"input": "a", "dim": "axis", "correction": "ddof",
                               "keepdim": "keepdims"}
    assert dict(cp.extra) == {"ddof": 1}  # torch's default correction differs from jax's
    assert cp.drop == ("out",) and cp.requires_default == ()

    # The target's spec leaves ``out`` out; its real signature has it fourth: keepdims
    # cannot go by position there (it went in as ``out``), only by keyword.
    spec_order = [t for t in target if t.name != "out"]
    sums = _spec(tmp_path, "torch.sum", [
        {"name": "input", "type": ["tensor"]},
        {"name": "dim", "type": ["int", "none"], "optional": True, "default": None},
        {"name": "dtype", "type": ["dtype", "none"], "optional": True, "default": None},
        {"name": "keepdim", "type": ["bool"], "optional": True, "default": False}])
    real = [target[0], target[1], target[2], target[3], target[5]]
    cp = adapt(sums, "jax.numpy.sum", "jax", [t for t in spec_order if t.name != "ddof"],
               real)
    assert cp is not None and cp.args == ("input", "dim", "dtype")
    assert dict(cp.rename)["keepdim"] == "keepdims"


def test_adapter_lost_parameters_and_impossible_matches(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "torch.sum", [
        {"name": "input", "type": ["tensor"]},
        {"name": "dtype", "type": ["dtype", "none"], "optional": True, "default": None}])
    cp = adapt(spec, "tensorflow.math.reduce_sum", "tf",
               [Param("input_tensor", True, True),
                Param("axis", True, True, required=False, default=None)])
    assert cp is not None and cp.requires_default == (("dtype", None),)
    # a required target parameter nothing maps to: no candidate
    assert adapt(spec, "jax.lax.reduce_sum", "jax",
                 [Param("operand", True, True), Param("axes", True, True)]) is None
    # a positional-only target parameter after a gap cannot be reached
    two = _spec(tmp_path, "torch.add", [{"name": "input", "type": ["tensor"]},
                              {"name": "other", "type": ["tensor"]}])
    cp = adapt(two, "jax.numpy.add", "jax", [Param("x", True, False), Param("y", True, False)])
    assert cp is not None and cp.args == ("input", "other")


def test_torch_doc_signatures() -> None:
    params = _doc_params("sum(input, dim, keepdim=False, *, dtype=None) -> Tensor\n\nSums")
    assert [(p.name, p.positional, p.required, p.default) for p in params][:3] == [
        ("input", True, True, params[0].default), ("dim", True, True, params[1].default),
        ("keepdim", True, False, False)]
    assert params[3].name == "dtype" and not params[3].positional


def test_pool_and_padding_geometry() -> None:
    # torch: L=7, k=3, s=2, p=1: floor gives 4 windows, the last ending at the padding
    assert pool_geometry(7, 3, 2, 1, 1, ceil_mode=False) == (4, 1)
    # ceil_mode adds a window only if it starts inside input + left padding
    assert pool_geometry(6, 3, 2, 1, 1, ceil_mode=True) == (4, 2)
    assert pool_geometry(5, 2, 2, 0, 1, ceil_mode=True) == (3, 1)
    assert pool_geometry(5, 2, 2, 0, 1, ceil_mode=False) == (2, -1)
    assert same_padding(7, 3, 2) == (1, 1) and same_padding(6, 3, 2) == (0, 1)
    assert torch_pad_pairs([1, 2, 3, 4], 3) == [(0, 0), (3, 4), (1, 2)]
    assert [torch_softmax_dim(n, None) for n in (0, 1, 2, 3, 4)] == [0, 0, 1, 0, 1]


def _ok(backend: str, *arrays: object) -> object:
    import numpy as np

    from dlfuzz.cases import Outcome, Tensor

    return Outcome(backend, "ok", tuple(Tensor.from_numpy(np.asarray(a)) for a in arrays))


def test_decision_rules(tmp_path: Path) -> None:
    """Five agreeing inputs per dtype; a core-dtype mismatch rejects; a half-precision one
    only drops the dtype; a third library agreeing with the candidate outvotes the API."""
    import numpy as np

    from dlfuzz.specgen.counterparts.inputs import make_input
    from dlfuzz.specgen.counterparts.validate import Validator, Verdict

    spec = _spec(tmp_path, "torch.sin", [{"name": "input", "type": ["tensor"]}])
    val = Validator({"torch.sin": spec})
    cp = Counterpart("torch.sin", "jax", "same-name", "jax.numpy.sin", args=("input",))

    def runs(dtype: str, bad: int | None, shape_bad: bool = False) -> list:
        out = []
        for i in range(6):
            x = make_input(spec, {"input": np.full((2,), i, dtype)}, frozenset())
            val.outcomes[id(x)] = _ok("torch", np.full((2,), i, np.float64))
            wrong = i == bad
            got = np.full((3,) if wrong and shape_bad else (2,), i + (5.0 if wrong else 0.0))
            out.append((x, _ok("jax", got)))
        return out

    def decide(items: list) -> Verdict:
        v = Verdict(cp)
        val._decide(v, items, "")
        return v

    v = decide(runs("float32", None) + runs("float16", None))
    assert v.accepted is not None and v.accepted.dtypes == ("float16", "float32")
    ev = v.accepted.evidence_dict()
    assert ev["per_dtype"] == {"float16": 6, "float32": 6} and ev["max_deviation"] == 0.0
    v = decide(runs("float32", None) + runs("float16", 2))
    assert v.accepted is not None and v.accepted.dtypes == ("float32",)
    assert "float16" in v.accepted.evidence_dict()["excluded_dtypes"]
    assert decide(runs("float32", 2) + runs("float16", None)).accepted is None
    assert decide(runs("float32", None)[:4]).accepted is None  # fewer than five inputs
    # the API's shape is wrong on one input and a TF implementation agrees with jax
    items = runs("float32", 3, shape_bad=True)
    assert decide(items).accepted is None
    bad_input, bad_out = items[3]
    val._votes[id(bad_input)].append(("tf", bad_out))
    items += [runs("float32", None)[0]]  # so that five inputs still agree
    v = decide(items)
    assert v.accepted is not None and v.outvoted and "structure" in v.outvoted[0]


def test_applies_keeps_a_counterpart_off_its_degenerate_shapes(tmp_path: Path) -> None:
    import numpy as np

    cp = Counterpart("torch.cumsum", "jax", "same-name", "jax.numpy.cumsum",
                     args=("input", "dim"), dtypes=("float32",), not_on=("rank0",))
    assert cp.applies({"input": np.zeros((3, 7), np.float32), "dim": 1})
    assert cp.applies({"input": np.zeros((3, 0), np.float32), "dim": 1})  # empty: allowed
    assert not cp.applies({"input": np.zeros((), np.float32), "dim": 0})
    path = tmp_path / "torch.json"
    dump("torch", [cp], path)
    assert load_file(path).counterparts == (cp,)
    raw = json.loads(path.read_text())
    raw["counterparts"][0]["not_on"] = ["scalar"]
    with pytest.raises(UsageError, match=r"'not_on'.*rank0, empty"):
        load_file(_raw(path, raw))


def test_a_failure_on_a_degenerate_shape_alone_keeps_the_dtype(tmp_path: Path) -> None:
    """jnp.cumsum has no axis 0 on a scalar, which torch.cumsum accepts: the counterpart
    is kept off rank-0 inputs, not off float32; a failure on an ordinary input still
    takes the dtype away, and a degenerate input does not count towards the five."""
    import numpy as np

    from dlfuzz.cases import Outcome
    from dlfuzz.specgen.counterparts.inputs import make_input
    from dlfuzz.specgen.counterparts.validate import Validator, Verdict

    spec = _spec(tmp_path, "torch.sin", [{"name": "input", "type": ["tensor"]}])
    val = Validator({"torch.sin": spec})
    cp = Counterpart("torch.sin", "jax", "same-name", "jax.numpy.sin", args=("input",))
    fail = Outcome("jax", "exception", (), exc_type="ValueError", message="axis 0 is out")

    def item(value: np.ndarray, out: object) -> tuple:
        x = make_input(spec, {"input": value}, frozenset())
        val.outcomes[id(x)] = _ok("torch", value.astype(np.float64))
        return x, out

    plain = [item(np.full((2,), i, np.float32), _ok("jax", np.full((2,), i))) for i in range(5)]
    scalar = item(np.zeros((), np.float32), fail)
    empty = item(np.zeros((0, 2), np.float32), _ok("jax", np.zeros((2, 0))))

    v = Verdict(cp)
    val._decide(v, plain + [scalar, empty], "")
    assert v.accepted is not None and v.accepted.dtypes == ("float32",)
    assert v.accepted.not_on == ("rank0", "empty")
    assert set(v.accepted.evidence_dict()["not_on"]) == {"rank0", "empty"}
    v = Verdict(cp)
    val._decide(v, plain[:4] + [scalar, item(np.ones((), np.float32), _ok("jax", 1.0))], "")
    assert v.accepted is None  # four ordinary inputs agree: not enough, and the scalar's
    assert "axis 0 is out" in v.reason  # failure is the dtype's, as before
    v = Verdict(cp)
    val._decide(v, plain[:4] + [item(np.full((2,), 9, np.float32), fail)] + plain[4:], "")
    assert v.accepted is None  # an ordinary input fails: float32 goes


def test_selection_puts_degenerate_shapes_beside_the_cap(tmp_path: Path) -> None:
    """The first rank-0 and the first empty input come on top of the cap, so that the cap
    still holds enough ordinary inputs; further degenerate ones only fill what is left."""
    import numpy as np

    from dlfuzz.specgen.counterparts import validate
    from dlfuzz.specgen.counterparts.inputs import make_input

    spec = _spec(tmp_path, "torch.sin", [{"name": "input", "type": ["tensor"]}])
    val = validate.Validator({"torch.sin": spec})
    shapes = [(), (), (0,), (0, 3), (2, 1)] + [(3,)] * 8
    inputs = [make_input(spec, {"input": np.full(s, i, np.float32)}, frozenset())
              for i, s in enumerate(shapes)]
    for x in inputs:
        val.outcomes[id(x)] = _ok("torch", np.zeros(1))
    val.inputs["torch.sin"] = inputs
    cp = Counterpart("torch.sin", "jax", "same-name", "jax.numpy.sin", args=("input",))
    chosen = val.selection(cp)["float32"]
    degenerate = [x for x in chosen if x.edges & {"rank0", "empty"}]
    assert len(degenerate) == 2 and len(chosen) == validate.MAX_PER_DTYPE + 2
    assert {"size1"} in [set(x.edges) for x in chosen]  # other edges still come first


def test_a_counterpart_may_need_a_value_the_api_leaves_none(tmp_path: Path) -> None:
    """``jnp.cumsum(axis=None)`` flattens; ``torch.cumsum`` needs an int ``dim``: passing
    None was the only candidate, rejected on every dtype. The adapter now also offers
    the counterpart that applies only where ``axis`` has a value, and validation draws
    inputs that give it one."""
    import numpy as np

    from dlfuzz.specgen.counterparts.inputs import with_values

    spec = _spec(tmp_path, "jax.numpy.cumsum", [
        {"name": "a", "type": ["tensor"]},
        {"name": "axis", "type": ["int", "none"], "optional": True, "default": None}])
    target = [Param("input", True, True), Param("dim", True, True)]
    passing = adapt(spec, "torch.cumsum", "torch", target)
    assert passing is not None and dict(passing.extra) == {"dim": None}
    needing = adapt(spec, "torch.cumsum", "torch", target, need_values=True)
    assert needing is not None and needing.requires_value == ("axis",)
    assert dict(needing.extra) == {} and needing.key != passing.key
    x = np.zeros((2, 3), np.float32)
    assert needing.applies({"a": x, "axis": 1})
    assert not needing.applies({"a": x, "axis": None}) and not needing.applies({"a": x})
    assert needing.call({"a": Ref(0), "axis": 1}) == Call("torch.cumsum", (Ref(0), 1))
    with pytest.raises(NotApplicable, match="needs a value for axis"):
        needing.call({"a": Ref(0)})
    path = tmp_path / "jax.json"
    dump("jax", [passing, needing], path)
    assert set(load_file(path).counterparts) == {passing, needing}
    given = with_values(spec, ["axis"]).param("axis")
    assert given is not None and not given.optional and "none" not in given.structures


def test_torch_softmax_without_dim_gets_only_the_compositions() -> None:
    """``torch.nn.functional.softmax(x)`` without ``dim`` picks an implicit dim (0 for a
    3-D input), where ``tf.math.softmax`` takes the last axis and ``jax.nn.softmax(axis=
    None)`` every axis: tf's softmax of zeros[2, 1, 1] (1 everywhere) was filed as a wrong
    result against torch's 0.5. Only the compositions, which follow torch's rule, apply
    without a ``dim``; the same-name counterparts need one."""
    import numpy as np

    x = np.zeros((2, 1, 1), np.float32)
    for api in ("torch.nn.functional.softmax", "torch.nn.functional.log_softmax"):
        rows = load_counterparts("torch")[api]
        without = {(c.kind, c.target) for c in rows
                   if c.library in ("jax", "tf") and c.applies({"input": x})}
        assert without and {kind for kind, _ in without} == {"composition"}, without
        with_dim = {c.target for c in rows if c.kind == "same-name"
                    and c.applies({"input": x, "dim": 0})}
        assert any(t.startswith("tensorflow.") for t in with_dim), with_dim
