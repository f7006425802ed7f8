"""Counterpart validation on the real libraries: right candidates pass, a wrong one fails.

Specs are written here (not the extracted data files) so the test pins what it checks:
a same-name counterpart (torch.sin -> jax.numpy.sin, adapter derived from jax's own
signature), the NCHW -> NHWC composition of torch's conv2d with ``tf.nn``, DLLens'
``tf.math.is_non_decreasing`` via torch, and torch.sin -> jax.numpy.cos, which must be
rejected.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dlfuzz.engines.api import libspecs
from dlfuzz.engines.api.counterparts.model import Counterpart
from dlfuzz.specgen.counterparts import sources
from dlfuzz.specgen.counterparts.same_name import adapt, function_params
from dlfuzz.specgen.counterparts.validate import validate

pytest.importorskip("torch")
pytest.importorskip("tensorflow")
pytest.importorskip("jax")

TORCH = [
    {"api": "torch.sin", "params": [
        {"name": "input", "type": ["tensor"], "pass": "positional",
         "dtypes": ["float32", "float64"]}]},
    {"api": "torch.nn.functional.conv2d", "params": [
        {"name": "input", "type": ["tensor"], "rank": [4, 4], "dtypes": ["float32"]},
        {"name": "weight", "type": ["tensor"], "rank": [4, 4], "dtypes": ["float32"]},
        {"name": "bias", "type": ["tensor", "none"], "optional": True, "default": None,
         "rank": [1, 1]},
        {"name": "stride", "type": ["int"], "optional": True, "default": 1, "range": [1, 2]},
        {"name": "padding", "type": ["int", "str"], "optional": True, "default": 0,
         "range": [0, 1], "values": ["valid", "same"]},
        {"name": "dilation", "type": ["int"], "optional": True, "default": 1, "range": [1, 2]},
        {"name": "groups", "type": ["int"], "optional": True, "default": 1, "range": [1, 2]}],
     "constraints": [
        "input.shape[1] == weight.shape[1] * groups", "weight.shape[0] % groups == 0",
        "weight.shape[0] >= 1", "weight.shape[1] >= 1",
        "bias is None or bias.shape[0] == weight.shape[0]",
        "bias is None or bias.dtype == input.dtype",
        "input.shape[2] + 2 * (padding if padding.type == 'int' else 0) >= "
        "dilation * (weight.shape[2] - 1) + 1",
        "input.shape[3] + 2 * (padding if padding.type == 'int' else 0) >= "
        "dilation * (weight.shape[3] - 1) + 1",
        "padding.type == 'int' or padding == 'valid' or stride == 1"]},
]
TF = [{"api": "tensorflow.math.is_non_decreasing", "params": [
    {"name": "x", "type": ["tensor"], "dtypes": ["float32", "int32"]}]}]


def _specs(tmp: Path) -> dict[str, libspecs.LibSpec]:
    table = {}
    for lib, apis in (("torch", TORCH), ("tf", TF)):
        path = tmp / f"{lib}.json"
        path.write_text(json.dumps({"format": 2, "library": lib, "apis": apis}))
        table.update({s.api: s for s in libspecs.load_file(path)})
    return table


def test_validation_accepts_counterparts_and_rejects_a_wrong_one(tmp_path: Path) -> None:
    import jax.numpy as jnp

    from dlfuzz.executor.pool import Pool, WorkerConfig

    specs = _specs(tmp_path)
    sin = adapt(specs["torch.sin"], "jax.numpy.sin", "jax", function_params(jnp.sin))
    assert sin is not None and sin.args == ("input",)
    wrong = Counterpart("torch.sin", "jax", "same-name", "jax.numpy.cos", args=("input",))
    compositions = [c for c in sources.composition_candidates(specs)
                    if c.target.endswith(("compose_tf.torch_conv2d",
                                          "compose_torch.tf_is_non_decreasing"))]
    assert len(compositions) == 2
    with Pool([WorkerConfig(lib) for lib in ("torch", "tf", "jax")]) as pool:
        versions = pool.start()
        assert not pool.unavailable
        verdicts = validate(specs, [sin, wrong, *compositions], pool, seed=3,
                            versions=versions)
    by_target = {v.candidate.target.rsplit(".", 1)[-1]: v for v in verdicts}

    good = by_target["sin"]
    assert good.accepted is not None, good.reason
    ev = good.accepted.evidence_dict()
    assert set(good.accepted.dtypes) == {"float32", "float64"}
    assert all(n >= 5 for n in ev["per_dtype"].values())
    assert ev["edges"].get("size1") and (ev["edges"].get("rank0") or ev["edges"].get("empty"))
    assert ev["versions"] == {"jax": versions["jax"], "torch": versions["torch"]}

    bad = by_target["cos"]
    assert bad.accepted is None and "value mismatch" in bad.reason

    conv = by_target["torch_conv2d"]
    assert conv.accepted is not None, conv.reason
    assert conv.accepted.dtypes == ("float32",)
    assert conv.accepted.evidence_dict()["per_dtype"]["float32"] >= 5

    mono = by_target["tf_is_non_decreasing"]
    assert mono.accepted is not None, mono.reason
    assert set(mono.accepted.dtypes) == {"float32", "int32"}
