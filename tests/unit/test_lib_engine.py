"""ApiEngine without workers: groups, violate share, counterparts, learning, rebuild."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from dlfuzz.cases import Call, Outcome
from dlfuzz.engines.api.constraints import Env, holds
from dlfuzz.engines.api.engine import ApiEngine
from dlfuzz.engines.api.libgen import values_of
from dlfuzz.engines.api.libspecs import load_file
from dlfuzz.errors import UsageError
from dlfuzz.oracles.base import OracleContext
from dlfuzz.oracles.boundary import BoundaryOracle

SPECS = [
    {"api": "torch.nn.functional.conv2d", "group": "nn",
     "params": [
         {"name": "input", "type": ["tensor"], "rank": [4, 4], "dtypes": ["float32"]},
         {"name": "weight", "type": ["tensor"], "rank": [4, 4], "dtypes": ["float32"]},
         {"name": "stride", "type": ["int"], "optional": True, "default": 1,
          "range": [1, 3]},
         {"name": "groups", "type": ["int"], "optional": True, "default": 1,
          "range": [1, 3]}],
     "constraints": [
         {"expr": "input.shape[1] == weight.shape[1] * groups", "from": "validation"},
         {"expr": "weight.shape[0] % groups == 0", "from": "validation"},
         {"expr": "input.shape[2] >= weight.shape[2] and input.shape[3] >= weight.shape[3]",
          "from": "error"}]},
    {"api": "torch.nn.functional.dropout", "group": "nn",
     "params": [
         {"name": "input", "type": ["tensor"], "rank": [1, 3], "dtypes": ["float32"]},
         {"name": "p", "type": ["float"], "optional": True, "default": 0.5,
          "range": [0.0, 1.0]}],
     "constraints": [{"expr": "not (p < 0.0 or p > 1.0)", "from": "validation"}],
     "random": True},
]


class FakeCp:
    """A counterpart stand-in with the interface the engine uses (library, kind, call)."""

    def __init__(self, library: str, target: str) -> None:
        self.library, self.kind, self.target = library, "same-name", target

    def call(self, mapping: dict) -> Call:
        return Call(self.target, (mapping["input"], mapping["weight"]))


@pytest.fixture()
def specs(tmp_path: Path) -> dict:
    path = tmp_path / "torch.json"
    path.write_text(json.dumps({"format": 2, "library": "torch", "apis": SPECS}))
    return {s.api: s for s in load_file(path)}


def engine(specs: dict, **kw: object) -> ApiEngine:
    cps = {"torch.nn.functional.conv2d": [FakeCp("jax", "jax.lax.conv"),
                                          FakeCp("numpy", "numpy.convolve")]}
    kw.setdefault("violate_share", 0.0)
    kw.setdefault("edge_share", 0.0)  # edge inputs have tests of their own (test_edges)
    return ApiEngine(seed=3, libraries=("torch", "jax"), specs=specs, counterparts=cps, **kw)


def test_groups_are_valid_and_carry_one_counterpart_per_campaign_library(specs) -> None:
    e = engine(specs, apis=["conv2d"])
    cases = e.propose(64)
    assert {c.api for c in cases} == {"torch.nn.functional.conv2d"}
    spec = specs["torch.nn.functional.conv2d"]
    valid = 0
    for case in cases:
        assert [lib for lib, _ in case.calls] == ["torch", "jax"]  # numpy is not in the run
        assert case.expect == "valid"
        values = values_of(case, spec)
        env = Env({"stride": 1, "groups": 1, **values})
        valid += all(holds(c, env) for c in spec.constraints)
    assert valid >= 0.95 * len(cases)


def test_violate_share_makes_invalid_cases_of_trusted_constraints(specs) -> None:
    e = engine(specs, apis=["torch.nn.functional.dropout"], violate_share=1.0)
    cases = e.propose(40)
    assert all(c.invalid for c in cases)
    assert all("p" in c.expect for c in cases), {c.expect for c in cases}
    ps = [dict(c.params).get("p") for c in cases]
    assert all(p is not None and not 0.0 <= p <= 1.0 for p in ps), ps


def test_boundary_oracle_reports_acceptance_only_on_the_apis_library(specs) -> None:
    e = engine(specs, apis=["torch.nn.functional.dropout"], violate_share=1.0)
    case = e.propose(1)[0]
    ctx = OracleContext(None, {"torch": "torch", "torch-compile": "torch", "jax": "jax"},
                        {"torch": False, "torch-compile": True, "jax": False})
    accepted = {"torch": Outcome("torch", "ok"),
                "torch-compile": Outcome("torch-compile", "exception", exc_type="ValueError"),
                "jax": Outcome("jax", "ok")}
    found = BoundaryOracle().check(case, accepted, ctx)
    assert [f.guilty_backend for f in found] == ["torch"]
    assert found[0].symptom == "boundary" and "p" in found[0].detail("constraint")
    assert BoundaryOracle().check(case, {"torch": Outcome("torch", "exception")}, ctx) == []
    # A result too large to send is still a result: the invalid input was accepted.
    huge = Outcome("torch", "exception", exc_type="OutputTooLarge", stage="fetch",
                   message="outputs of 900 MiB (float32[235929600]) are too large to compare")
    assert len(BoundaryOracle().check(case, {"torch": huge}, ctx)) == 1


def test_error_feedback_refines_the_spec_during_the_campaign(specs) -> None:
    e = engine(specs, apis=["conv2d"])
    case = e.propose(1)[0]
    before = len(e.specs[case.api].constraints)
    x = values_of(case, specs[case.api])["input"]
    message = (f"Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of "
               f"size: {list(x.shape)}")
    rejected = {"torch": Outcome("torch", "exception", exc_type="RuntimeError",
                                message=message, stage="call")}
    e.feedback(case, rejected, [])
    assert e.stats[case.api].tried == 1 and e.stats[case.api].ran_somewhere == 0
    # The message names the rank: a learned constraint, unless it contradicts the draws
    # that ran before (none here), is added to the spec for the rest of the campaign.
    learned = e.learned.get(case.api, [])
    assert len(e.specs[case.api].constraints) == before + len(learned)
    assert all(c.source == "error" for c in e.specs[case.api].constraints[before:])


def test_rebuild_keeps_counterparts_and_expectation(specs) -> None:
    e = engine(specs, apis=["conv2d"])
    case = e.propose(1)[0]
    smaller = e.rebuild(case.api, case.tensors, (), like=case)
    assert [lib for lib, _ in smaller.calls] == [lib for lib, _ in case.calls]
    assert smaller.call_for("jax").target == case.call_for("jax").target
    assert smaller.params == () and smaller.expect == case.expect
    ones = tuple(t.__class__.from_numpy(np.ones(t.shape, np.float32)) for t in case.tensors)
    assert e.rebuild(case.api, ones, case.params, like=case).tensors == ones


def test_bad_settings_are_usage_errors(specs) -> None:
    with pytest.raises(UsageError, match="--generator"):
        engine(specs, generator="smart")
    with pytest.raises(UsageError, match="unknown API 'conv3d'"):
        engine(specs, apis=["conv3d"])
    with pytest.raises(UsageError, match="no API spec"):
        ApiEngine(libraries=("mxnet",), specs=specs, counterparts={})
