"""Format-2 spec files: loading, round trip, and errors that name file, line and column."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dlfuzz.engines.api import libspecs
from dlfuzz.errors import UsageError

CONV = {
    "api": "torch.nn.functional.conv2d", "group": "nn",
    "params": [
        {"name": "input", "type": ["tensor"], "rank": [3, 4], "dtypes": ["float"]},
        {"name": "weight", "type": ["tensor"], "rank": [4, 4], "dtypes": ["float32"]},
        {"name": "bias", "type": ["tensor", "none"], "optional": True, "default": None},
        {"name": "stride", "type": ["int", "ints"], "optional": True, "default": 1,
         "range": [1, 3], "length": [2, 2]},
        {"name": "padding", "type": ["int", "str"], "optional": True, "default": 0,
         "values": ["valid", "same"]},
        {"name": "groups", "type": "int", "optional": True, "default": 1, "range": [1, 4]},
    ],
    "constraints": [
        {"expr": "input.ndims == weight.ndims", "from": "doc"},
        "input.shape[-3] == weight.shape[1] * groups",
        {"expr": "bias is None or bias.shape[0] == weight.shape[0]", "from": "validation"},
    ],
}


def write(path: Path, apis: list, **head: object) -> Path:
    doc = {"format": 2, "library": "torch", **head, "apis": apis}
    path.write_text(json.dumps(doc, indent=1))
    return path


def test_load_dump_round_trip(tmp_path: Path) -> None:
    specs = libspecs.load_file(write(tmp_path / "a.json", [CONV]))
    (spec,) = specs
    assert spec.param("input").dtypes == ("float16", "bfloat16", "float32", "float64")
    assert spec.param("groups").structures == ("int",)
    assert [c.source for c in spec.constraints] == ["doc", "hand", "validation"]
    out = tmp_path / "b.json"
    libspecs.dump("torch", specs, out, versions={"torch": "x"})
    assert libspecs.load_file(out) == specs
    # one constraint per line, so a diff of a refresh is readable
    assert any(line.strip().startswith('"input.shape[-3]') for line in out.read_text()
               .splitlines())


def test_bad_constraint_names_file_line_column(tmp_path: Path) -> None:
    bad = json.loads(json.dumps(CONV))
    bad["constraints"][1] = "input.shape[-3] == weigth.shape[1]"
    path = write(tmp_path / "bad.json", [bad])
    with pytest.raises(UsageError) as err:
        libspecs.load_file(path)
    text = str(err.value)
    line = next(i for i, s in enumerate(path.read_text().splitlines(), 1) if "weigth" in s)
    col = path.read_text().splitlines()[line - 1].index("weigth") + 1
    assert f"{path}:{line}:{col}" in text
    assert "unknown parameter 'weigth'" in text and "torch.nn.functional.conv2d" in text


@pytest.mark.parametrize(("mutate", "words"), [
    (lambda a: a["params"][0].update(type=["matrix"]), "params.input.type"),
    (lambda a: a["params"][0].update(rank=[3, 1]), "low <= high"),
    (lambda a: a["params"][1].update(dtypes=["float31"]), "params.weight.dtypes"),
    (lambda a: a["params"][1].update(colour="red"), "unknown key"),
    (lambda a: a.update(api="torch..conv"), "dotted path"),
    (lambda a: a["constraints"].append({"expr": "groups > 0", "from": "guess"}), "from"),
    (lambda a: a["params"].append({"name": "groups", "type": ["int"]}), "distinct"),
])
def test_bad_keys_are_named(tmp_path: Path, mutate, words: str) -> None:
    bad = json.loads(json.dumps(CONV))
    mutate(bad)
    with pytest.raises(UsageError) as err:
        libspecs.load_file(write(tmp_path / "bad.json", [bad]))
    assert words in str(err.value)
    assert str(tmp_path / "bad.json") in str(err.value)


def test_file_level_errors(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('{"format": 2, "library": "torch", "apis": [}')
    with pytest.raises(UsageError, match=r"x.json:1:\d+: not valid JSON"):
        libspecs.load_file(path)
    with pytest.raises(UsageError, match="format"):
        libspecs.load_file(write(path, [CONV], format=1))
    with pytest.raises(UsageError, match="defined twice"):
        libspecs.load_file(write(path, [CONV, CONV]))
    with pytest.raises(UsageError, match="no built-in API specs for library 'mxnet'"):
        libspecs.load_library("mxnet")
