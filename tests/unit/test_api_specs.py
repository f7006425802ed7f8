"""Spec loading: the built-in file is sound, bad user files fail with useful messages."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from dlfuzz.cases import DTYPES, DType
from dlfuzz.engines.api.specs import (
    DEFAULT_SPEC_FILE,
    PARAM_KINDS,
    SHAPE_RULES,
    load_specs,
)
from dlfuzz.errors import UsageError

LIBRARIES = {"numpy", "torch", "jax", "tf"}


def _good_spec(**over: object) -> dict:
    spec = {
        "name": "cumsum",
        "group": "cumulative",
        "dtypes": ["float"],
        "params": [{"name": "a", "kind": "tensor"},
                   {"name": "axis", "kind": "axis", "of": "a"}],
        "bindings": {"numpy": {"target": "numpy.cumsum"},
                     "torch": {"target": "torch.cumsum", "rename": {"axis": "dim"}}},
    }
    spec.update(over)
    return spec


def _write(tmp_path: Path, specs: list, name: str = "user.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({"format": 1, "specs": specs}))
    return path


# ---- the built-in specs ----------------------------------------------------------------------
def test_builtin_specs_load_and_cover_150_functions() -> None:
    specs = load_specs()
    assert len(specs) >= 150
    groups = {s.group for s in specs.values()}
    assert {"math_unary", "math_binary", "reduction", "comparison", "shape", "indexing",
            "cumulative", "linalg", "sorting", "creation"} <= groups


def test_builtin_specs_bind_all_four_libraries() -> None:
    for spec in load_specs().values():
        assert set(spec.libraries) == LIBRARIES, spec.name
        for lib, binding in spec.bindings:
            assert binding.target.count(".") >= 1, (spec.name, lib)


def test_builtin_specs_are_self_consistent() -> None:
    for spec in load_specs().values():
        assert spec.dtypes and set(spec.dtypes) <= set(DTYPES), spec.name
        assert spec.shapes in SHAPE_RULES
        for p in spec.params:
            assert p.kind in PARAM_KINDS
        for needed in SHAPE_RULES[spec.shapes]:
            assert spec.param(needed) is not None, (spec.name, needed)


def test_torch_std_matches_numpy_ddof() -> None:
    """numpy's std divides by N; torch's by N - 1 unless told otherwise."""
    torch_std = load_specs()["std"].binding("torch")
    assert torch_std is not None and ("correction", 0) in torch_std.extra


def test_dtype_extra_becomes_dtype_object(tmp_path: Path) -> None:
    spec = _good_spec(bindings={"tf": {"target": "tensorflow.searchsorted",
                                       "extra": {"out_type": {"$dtype": "int64"}}}})
    loaded = load_specs(_write(tmp_path, [spec]))["cumsum"]
    assert loaded.binding("tf").extra == (("out_type", DType("int64")),)


def test_loading_a_directory_merges_files(tmp_path: Path) -> None:
    _write(tmp_path, [_good_spec()], "a.json")
    _write(tmp_path, [_good_spec(name="cumprod")], "b.json")
    assert set(load_specs(tmp_path)) == {"cumsum", "cumprod"}


def test_default_path_is_packaged() -> None:
    assert DEFAULT_SPEC_FILE.is_file()
    assert DEFAULT_SPEC_FILE.parent.name == "data"


# ---- errors name the file, the spec, the key, the value and the fix --------------------------
@pytest.mark.parametrize(("change", "key", "value", "fix"), [
    ({"params": [{"name": "a", "kind": "tensr"}]}, "params[0].kind", "tensr", "use one of"),
    ({"dtypes": ["float65"]}, "dtypes", "float65", "use a dtype of"),
    ({"shapes": "brodcast"}, "shapes", "brodcast", "use one of"),
    ({"colour": "red"}, "colour", "red", "allowed keys"),
    ({"bindings": {"torch": {"target": "cumsum"}}}, "bindings.torch.target", "cumsum",
     "dotted path"),
    ({"bindings": {"torch": {"target": "torch.cumsum", "rename": {"axs": "dim"}}}},
     "bindings.torch.rename", "axs", "name a parameter"),
    ({"params": [{"name": "a", "kind": "tensor"},
                 {"name": "axis", "kind": "axis", "of": "b"}]}, "params.axis.of", "b",
     "name a"),
    ({"params": [{"name": "a", "kind": "tensor", "rank": [3, 1]}]}, "params[0].rank",
     "[3, 1]", "low <= high"),
    ({"params": [{"name": "a", "kind": "tensor"}], "shapes": "concat"}, "shapes", "concat",
     "sets parameter 'axis'"),
    ({"params": [{"name": "a", "kind": "tensor"},
                 {"name": "k", "kind": "int", "range": [0, 3], "optional": "yes"}]},
     "params[1].optional", "yes", "true or false"),
])
def test_bad_spec_errors_are_specific(tmp_path: Path, change: dict, key: str, value: str,
                                      fix: str) -> None:
    path = _write(tmp_path, [_good_spec(**change)])
    with pytest.raises(UsageError) as err:
        load_specs(path)
    message = str(err.value)
    assert str(path) in message
    assert "'cumsum'" in message
    assert repr(key) in message
    assert value in message
    assert fix in message


def test_invalid_json_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"format": 1,\n "specs": [\n  {"name": "x",}\n ]}')
    with pytest.raises(UsageError, match=r"broken\.json:3:\d+: not valid JSON"):
        load_specs(path)


def test_missing_file_and_empty_directory(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="cannot read the spec file"):
        load_specs(tmp_path / "nope.json")
    with pytest.raises(UsageError, match="no \\*.json spec files"):
        load_specs(tmp_path)


def test_duplicate_names_across_files(tmp_path: Path) -> None:
    _write(tmp_path, [_good_spec()], "a.json")
    _write(tmp_path, [_good_spec()], "b.json")
    with pytest.raises(UsageError, match="already defined in .*a.json"):
        load_specs(tmp_path)


def test_wrong_top_level_shape(tmp_path: Path) -> None:
    path = tmp_path / "list.json"
    path.write_text("[]")
    with pytest.raises(UsageError, match="'specs' list"):
        load_specs(path)


# ---- the host stays light ---------------------------------------------------------------------
def test_engine_imports_no_deep_learning_library() -> None:
    code = (
        "import sys\n"
        "from dlfuzz.engines.api.engine import ApiEngine\n"
        "ApiEngine(seed=1).propose(200)\n"
        "bad = [m for m in ('torch', 'jax', 'tensorflow') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_unsupported_backends_are_validated(tmp_path: Path) -> None:
    ok = load_specs(_write(tmp_path, [_good_spec(unsupported={"tf-xla": "no kernel"})]))
    assert not ok["cumsum"].supports("tf-xla") and ok["cumsum"].supports("tf")
    with pytest.raises(UsageError, match="'unsupported' has bad value"):
        load_specs(_write(tmp_path, [_good_spec(unsupported=["tf-xla"])], "bad.json"))
