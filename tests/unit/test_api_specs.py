"""The numpy spec set (format 2 with shape rules) is sound; bad rule keys fail usefully."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from dlfuzz.cases import DTYPES, DType
from dlfuzz.engines.api.counterparts import load_counterparts
from dlfuzz.engines.api.libspecs import (
    DATA_DIR,
    SPEC_SETS,
    STRUCTURES,
    load_file,
    load_set,
)
from dlfuzz.engines.api.shapes import SHAPE_RULES
from dlfuzz.errors import UsageError

LIBRARIES = {"numpy", "torch", "jax", "tf"}


def _good_spec(**over: object) -> dict:
    spec = {
        "api": "numpy.cumsum",
        "group": "cumulative",
        "shapes": "any",
        "dtypes": ["float"],
        "params": [{"name": "a", "type": ["tensor"], "pass": "positional"},
                   {"name": "axis", "type": ["axis"], "of": "a"}],
        "constraints": [],
    }
    spec.update(over)
    return spec


def _write(tmp_path: Path, specs: list, name: str = "user.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({"format": 2, "library": "numpy", "apis": specs}))
    return path


# ---- the built-in spec set -----------------------------------------------------------------
def test_builtin_set_loads_and_covers_150_functions() -> None:
    specs = load_set("numpy")
    assert len(specs) >= 150
    groups = {s.group for s in specs.values()}
    assert {"math_unary", "math_binary", "reduction", "comparison", "shape", "indexing",
            "cumulative", "linalg", "sorting", "creation"} <= groups


def test_builtin_set_binds_all_four_libraries() -> None:
    cps = load_counterparts("numpy")
    for api, spec in load_set("numpy").items():
        assert spec.library == "numpy" and api.startswith("numpy.")
        bound = {spec.library} | {cp.library for cp in cps.get(api, ())}
        assert bound == LIBRARIES, api
        for cp in cps[api]:
            assert cp.kind == "same-name" and cp.target.count(".") >= 1, (api, cp)


def test_builtin_set_is_self_consistent() -> None:
    for spec in load_set("numpy").values():
        assert spec.dtypes and set(spec.dtypes) <= set(DTYPES), spec.api
        assert spec.shapes in SHAPE_RULES
        for p in spec.params:
            assert p.kind in STRUCTURES
        for needed in SHAPE_RULES[spec.shapes]:
            assert spec.param(needed) is not None, (spec.api, needed)


def test_torch_std_matches_numpy_ddof() -> None:
    """numpy's std divides by N; torch's by N - 1 unless told otherwise."""
    torch_std = [cp for cp in load_counterparts("numpy")["numpy.std"] if cp.library == "torch"]
    assert torch_std and ("correction", 0) in torch_std[0].extra


def test_dtype_extra_becomes_dtype_object() -> None:
    extras = [v for cps in load_counterparts("numpy").values() for cp in cps
              for _, v in cp.extra if isinstance(v, DType)]
    assert all(v.name in DTYPES for v in extras)


def test_set_is_packaged() -> None:
    path = DATA_DIR / SPEC_SETS["numpy"]
    assert path.is_file() and path.parent.name == "data"
    with pytest.raises(UsageError, match="no built-in spec set 'numpi'"):
        load_set("numpi")


# ---- errors name the file, the API, the key, the value and the fix ---------------------------
@pytest.mark.parametrize(("change", "key", "value", "fix"), [
    ({"params": [{"name": "a", "type": ["tensr"]}]}, "params.a.type", "tensr", "structures"),
    ({"dtypes": ["float65"]}, "dtypes", "float65", "non-empty 'dtypes'"),
    ({"shapes": "brodcast"}, "shapes", "brodcast", "use one of"),
    ({"colour": "red"}, "colour", "red", "allowed"),
    ({"params": [{"name": "a", "type": ["tensor"]},
                 {"name": "axis", "type": ["axis"], "of": "b"}]}, "params.axis.of", "b",
     "name a"),
    ({"params": [{"name": "a", "type": ["tensor"]}, {"name": "axis", "type": ["axis"]}]},
     "params.axis.of", "None", "needs 'of'"),
    ({"params": [{"name": "a", "type": ["tensor"], "rank": [3, 1]}]}, "params.a.rank",
     "[3, 1]", "low <= high"),
    ({"params": [{"name": "a", "type": ["tensor"]}], "shapes": "concat"}, "shapes", "concat",
     "sets parameter 'axis'"),
    ({"params": [{"name": "a", "type": ["tensor"], "fill": "odd"}]}, "params.a.fill", "odd",
     "use one of"),
    ({"shapes": "", "dtypes": ["float"]}, "params.axis.type", "['axis']",
     "only an API with a shape rule"),
])
def test_bad_spec_errors_are_specific(tmp_path: Path, change: dict, key: str, value: str,
                                      fix: str) -> None:
    spec = _good_spec(**change)
    if not spec["shapes"]:
        del spec["shapes"], spec["dtypes"]
    path = _write(tmp_path, [spec])
    with pytest.raises(UsageError) as err:
        load_file(path)
    message = str(err.value)
    assert str(path) in message
    assert "'numpy.cumsum'" in message
    assert repr(key) in message
    assert value in message
    assert fix in message


# ---- the host stays light ---------------------------------------------------------------------
def test_engine_imports_no_deep_learning_library() -> None:
    code = (
        "import sys\n"
        "from dlfuzz.engines.api.engine import NumpyApiEngine\n"
        "NumpyApiEngine(seed=1).propose(200)\n"
        "bad = [m for m in ('torch', 'jax', 'tensorflow') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_unsupported_backends_are_validated(tmp_path: Path) -> None:
    ok = load_file(_write(tmp_path, [_good_spec(unsupported={"tf-xla": "no kernel"})]))
    assert ok[0].unsupported == (("tf-xla", "no kernel"),)
    with pytest.raises(UsageError, match="'unsupported' has bad value"):
        load_file(_write(tmp_path, [_good_spec(unsupported=["tf-xla"])], "bad.json"))
