"""A dlfuzz-written counterpart judges only the special values it was checked right on.

``Counterpart.applies`` is what the API engine asks before it adds a counterpart's call to
a case: a composition whose ``specials`` lack a kind of special value the input holds is
left out, a library's own function (same-name) never is.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from dlfuzz.engines.api.counterparts.model import Counterpart, load_file, special_kinds, to_json
from dlfuzz.errors import UsageError

COMPOSED = Counterpart("torch.nn.functional.hardshrink", "jax", "composition",
                       "dlfuzz.engines.api.counterparts.compose_jax.torch_hardshrink",
                       specials=("inf", "-inf", "-0", "large"))
SAME_NAME = Counterpart("torch.sin", "jax", "same-name", "jax.numpy.sin")


def test_special_kinds_names_what_floating_inputs_hold():
    x = np.array([1.0, np.nan, -np.inf, -0.0, 3e38], np.float32)
    assert special_kinds({"input": x, "lambd": 0.5}) == {"nan", "-inf", "-0", "large"}
    assert special_kinds({"input": np.array([1.0, 2.0])}) == set()
    assert special_kinds({"x": np.array([1, 2], np.int32)}) == set()
    assert special_kinds({"xs": [np.array([1.0]), np.array([np.inf])]}) == {"inf"}
    assert special_kinds({"z": np.array([1 + 1j * np.nan], np.complex64)}) == {"nan"}
    assert special_kinds({"input": np.array([1e200])}) == {"large"}  # its square overflows
    assert special_kinds({"input": np.array([1e100])}) == set()


def test_an_untrusted_kind_keeps_a_composition_off_the_input():
    finite = {"input": np.array([0.25, -1.0], np.float32)}
    with_nan = {"input": np.array([0.25, np.nan], np.float32)}
    with_inf = {"input": np.array([0.25, np.inf], np.float32)}
    assert COMPOSED.applies(finite) and COMPOSED.applies(with_inf)
    assert not COMPOSED.applies(with_nan)
    never_checked = Counterpart(COMPOSED.api, "jax", "composition", COMPOSED.target)
    assert never_checked.applies(finite) and not never_checked.applies(with_inf)
    assert SAME_NAME.applies(with_nan)  # a library's own function is not dlfuzz's to doubt


def test_specials_round_trip_and_a_bad_kind_names_the_fix(tmp_path: Path):
    entry = to_json(COMPOSED)
    assert entry["specials"] == ["inf", "-inf", "-0", "large"]
    path = tmp_path / "torch.json"
    path.write_text(json.dumps({"format": 1, "library": "torch", "counterparts": [entry]}))
    (back,) = load_file(path).counterparts
    assert back.specials == COMPOSED.specials
    entry["specials"] = ["NaN"]
    path.write_text(json.dumps({"format": 1, "library": "torch", "counterparts": [entry]}))
    with pytest.raises(UsageError, match=r"torch.json:1.*'specials'.*nan, inf"):
        load_file(path)


def test_plant_puts_the_kind_in_every_floating_tensor_and_nowhere_else():
    from dlfuzz.specgen.counterparts.specials import plant

    rng = np.random.default_rng(0)
    values = {"x": np.ones((3, 4), np.float32), "idx": np.arange(3), "w": [np.zeros(2)],
              "alpha": 0.5}
    out = plant(values, "nan", rng)
    assert out is not None
    assert int(np.isnan(out["x"]).sum()) == 4 and np.isnan(out["w"][0]).sum() >= 1
    assert out["idx"] is values["idx"] and out["alpha"] == 0.5
    assert not np.isnan(values["x"]).any()  # the drawn input is left as it was
    assert special_kinds(plant(values, "-0", rng)) == {"-0"}
    assert special_kinds(plant(values, "large", rng)) == {"large"}
    assert plant({"idx": np.arange(3)}, "inf", rng) is None


def test_the_check_trusts_a_kind_only_where_every_input_agreed():
    from dlfuzz.cases import Outcome, Tensor
    from dlfuzz.specgen.counterparts.inputs import Input
    from dlfuzz.specgen.counterparts.specials import SpecialVerdict, _judge

    class Spec:
        library = "torch"

    def ok(backend: str, *arrays: np.ndarray) -> Outcome:
        return Outcome(backend, "ok", tuple(Tensor.from_numpy(a) for a in arrays))

    x = Input(COMPOSED.api, "float32", {}, frozenset(), frozenset(), None)  # type: ignore[arg-type]
    case = type("Case", (), {"tensors": ()})()
    v = SpecialVerdict(COMPOSED)
    specs = {COMPOSED.api: Spec()}
    nan, zero = np.array([np.nan, 1.0]), np.array([0.0, 1.0])
    _judge(v, "nan", x, case, {"torch": ok("torch", nan), "jax": ok("jax", zero)}, specs)
    _judge(v, "inf", x, case, {"torch": ok("torch", np.array([np.inf])),
                               "jax": ok("jax", np.array([np.inf]))}, specs)
    # Large inputs: overflow on one side only, or huge sums rounded in another order,
    # are the order of operations, not a bug...
    _judge(v, "large", x, case, {"torch": ok("torch", np.array([-np.inf, 2.0, 1.70615e36])),
                                 "jax": ok("jax", np.array([np.nan, 2.0, 1.70616e36]))},
           specs)
    assert v.trusted == ("inf", "large")
    assert "gives nan where it gives 0" in v.disagree["nan"]
    # ... but finite results that differ are.
    _judge(v, "large", x, case, {"torch": ok("torch", np.array([1e300])),
                                 "jax": ok("jax", np.array([0.0]))}, specs)
    assert v.trusted == ("inf",) and v.unchecked == ("-inf", "-0")
    assert v.updated().specials == ("inf",)


def test_an_input_holding_an_empty_array_is_no_evidence_about_special_values():
    """A conv2d input with no channels gives another output shape in the composition
    than in torch: a shape edge (validation's ``not_on``), and kept, the check planted
    NaN in the bias beside it and distrusted the composition on every kind, so torch's
    conv2d was judged by no counterpart on any float input holding a special value
    (nearly all). The check leaves such inputs out; checked again, TF's composition is
    trusted on every kind."""
    from dlfuzz.engines.api.counterparts.model import SPECIAL_KINDS, load_counterparts
    from dlfuzz.specgen.counterparts.specials import _holds_empty

    assert _holds_empty({"input": np.zeros((4, 0, 0, 3), np.float32),
                         "bias": np.ones(4, np.float32)})
    assert _holds_empty({"xs": [np.ones(2), np.zeros((0,))]})
    assert not _holds_empty({"input": np.ones((2, 3), np.float32), "stride": 2,
                             "bias": None})
    tf = [cp for cp in load_counterparts("torch").get("torch.nn.functional.conv2d", ())
          if cp.library == "tf"]
    assert tf and set(tf[0].specials) == set(SPECIAL_KINDS)
