"""The hand hint files of spec extraction (``specgen/hints/*.json``) and their loader.

The hint tables used to be Python literals (``torch_hints_api.py``, ``torch_hints_more.py``,
``tf_hints.py``, ``tf_hints_extra.py``, ``jax_hints.py``, ``jax_hints_lax.py``, the tables
of ``tfjs_apis.py`` and ``counterparts/tfjs.py``). When they became JSON, each section the extractors read was
fingerprinted from the Python tables — values, dict key order, and list vs tuple vs
frozenset — and ``DIGESTS`` holds those fingerprints: loading the files must give exactly
what the extractors saw before.
Editing a hint file on purpose changes its fingerprint: put the new one (the assertion
prints it) in ``DIGESTS`` in the same commit.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from dlfuzz.errors import UsageError
from dlfuzz.specgen import hintfiles

DIGESTS = {
    "tfjs": {
        "int_names": "c33885142e6d850b",
        "random": "ada1605df37484d1",
        "name_fields": "409c14059247bb7a",
        "apis": "31353ab19efc156e",
        "broadcast": "feb7a9e708d92a3c",
        "not_broadcast": "acc41e81b9a0da7f",
    },
    "torch": {
        "exclude_prefixes": "e6e4c1e88270c1c0",  # 2026-11-27: torch.native_* listed
        "exclude": "7ce41cff1233f4d6",
        "nn_duplicates": "45687c8fffb3781d",
        "drop_params": "7a391367175ab9fd",
        "name_types": "fc5c17c4a65e2b06",
        "name_fields": "57b545b3d786a7ea",
        "dim_names": "9991f32d475b4a36",
        "dims_names": "cf40ef6c327049e7",
        "index_names": "cc8f8921158b9aca",
        "skip": "8d1ac20ff4dfb57e",
        "apis": "85636bab4a752539",  # 2026-12-06: searchsorted, bucketize sequences sorted
    },
    "tf": {
        "exclude": "82ba5e74634735ac",
        "skip": "ca5ecf46e9ba8413",
        "random": "026f59208ebf99d2",
        "names": "ce5fe7d5d4a8e009",
        "broadcast_ops": "2114f020bea1b5fd",
        "nonzero_divisor": "e0979108c5596d3f",
        "apis": "d4f5c77a1ba95c40",  # 2026-12-06: searchsorted sequence sorted
    },
    "jax": {
        "skip": "092f9c5d02f90356",
        "drop": "7c9cec8a065034ba",
        "name_kinds": "35f63f2b03cd86e3",
        "axis_names": "3da1cb01e433f094",
        "axes_names": "6ee8b941e6ffce19",
        "apis": "f99ad66f49a27286",  # 2026-12-06: searchsorted, digitize sequences sorted
    },
}


def canonical(value: Any) -> Any:
    """A JSON form that keeps what ``==`` on the Python values would miss or ignore: the
    container type (list, tuple, frozenset) and the key order of dicts."""
    if isinstance(value, dict):
        return ["dict", [[k, canonical(v)] for k, v in value.items()]]
    if isinstance(value, list | tuple):
        return [type(value).__name__, [canonical(v) for v in value]]
    if isinstance(value, frozenset):
        return ["frozenset", sorted(json.dumps(canonical(v)) for v in value)]
    return [type(value).__name__, value]


def digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(canonical(value)).encode()).hexdigest()[:16]


@pytest.mark.parametrize("library", sorted(DIGESTS))
def test_loaded_tables_equal_the_former_python_tables(library):
    loaded = hintfiles.read(library)
    assert sorted(loaded) == sorted(DIGESTS[library])
    got = {section: digest(value) for section, value in loaded.items()}
    assert got == DIGESTS[library]


def test_consumers_read_the_loaded_tables():
    from dlfuzz.specgen import jax_hints, tf_hints, tfjs_apis, torch_hints

    torch, tf, jax = (hintfiles.load(lib) for lib in ("torch", "tf", "jax"))
    assert torch_hints.API is torch["apis"] and torch_hints.NAME_TYPES is torch["name_types"]
    assert tf_hints.HINTS is tf["apis"] and tf_hints.NAMES is tf["names"]
    assert jax_hints.HINTS is jax["apis"] and jax_hints.NAME_KINDS is jax["name_kinds"]
    assert tfjs_apis.HINTS is hintfiles.load("tfjs")["apis"]
    assert torch_hints.excluded("torch.empty_like") and tf_hints.is_random("tensorflow.nn.dropout")


def test_tfjs_counterpart_candidates_are_the_former_ones():
    """``hints/tfjs_counterparts.json`` replaced the tables of ``counterparts/tfjs.py``
    (their special entries were 5-tuples, now objects): the candidates built from it are
    the ones built before, fingerprinted by their reprs. (The repr gained the field
    ``requires_value``, empty in every one of them: without it the fingerprint is the
    former one, b25bf04449e9abdb.)"""
    from dlfuzz.specgen.counterparts import tfjs

    candidates = tfjs.candidates()
    assert not any(c.requires_value for c in candidates)
    got = hashlib.sha256(repr(candidates).encode()).hexdigest()[:16]
    assert got == "35df5b1cde4336cf"


def test_counterpart_call_mistakes_name_the_key(tmp_path):
    path = _write(tmp_path, "tfjs_counterparts",
                  lambda r: r["special"]["tf.argMax"].pop("extra"))
    with pytest.raises(UsageError, match=r"special\['tf.argMax'\] is .*expected the keys"):
        hintfiles.read("tfjs_counterparts", path)


def _write(tmp_path, library: str, edit) -> Any:
    raw = json.loads((hintfiles.HINTS_DIR / f"{library}.json").read_text(encoding="utf-8"))
    edit(raw)
    path = tmp_path / f"{library}.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    return path


@pytest.mark.parametrize("edit, says", [
    (lambda r: r["apis"]["torch.addmm"]["params"]["input"].update(rank=[2]),
     "apis['torch.addmm'].params['input'].rank is [2]; expected a list of two integers"),
    (lambda r: r["apis"]["torch.addmm"].update(constrains=["x"]),
     "apis['torch.addmm']: key 'constrains'"),
    (lambda r: r["apis"]["torch.addmm"]["params"]["input"].update(dtype=["float32"]),
     "key 'dtype' is \"dtype\"; expected one of count, domain, dtypes"),
    (lambda r: r["skip"].update({"torch.sin": ""}), "skip['torch.sin'] is \"\""),
    (lambda r: r.update(exclude="torch.sin"), "exclude is \"torch.sin\"; expected a list"),
    (lambda r: r.pop("dim_names"), "also the sections dim_names"),
    (lambda r: r.update(extra=[]), "section 'extra'"),
    (lambda r: r["name_types"].update(dim={"structures": ["int"]}), "name_types['dim']"),
    (lambda r: r.update(format=2), "format is 2; expected 1"),
])
def test_mistakes_name_the_file_and_the_key(tmp_path, edit, says):
    path = _write(tmp_path, "torch", edit)
    with pytest.raises(UsageError) as err:
        hintfiles.read("torch", path)
    assert str(path) in str(err.value) and says in str(err.value)


def test_bad_json_and_unknown_library(tmp_path):
    path = tmp_path / "jax.json"
    path.write_text('{"format": 1,', encoding="utf-8")
    with pytest.raises(UsageError, match="not valid JSON"):
        hintfiles.read("jax", path)
    with pytest.raises(UsageError, match="no hint schema for library 'mxnet'"):
        hintfiles.read("mxnet")
