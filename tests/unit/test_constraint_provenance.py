"""Where constraints come from: default-call check at load, provenance on boundary findings.

The boundary test runs violate-mode cases of the real ``torch.json`` dropout spec in a real
torch worker whose ``dropout`` is planted to accept ``p`` outside [0, 1]
(``planted_torch_dropout_range``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from real_workers import PLANTED

from dlfuzz.cases import Outcome
from dlfuzz.engines.api.constraints import broken_by_defaults, make, provenance
from dlfuzz.engines.api.engine import ApiEngine
from dlfuzz.engines.api.libgen import values_of
from dlfuzz.engines.api.libspecs import load_file, load_library
from dlfuzz.executor.pool import Pool, WorkerConfig
from dlfuzz.oracles.base import OracleContext
from dlfuzz.oracles.boundary import BoundaryOracle

DROPOUT = "torch.nn.functional.dropout"
NORM_LIKE = {
    "api": "torch.norm", "group": "reduction",
    "params": [
        {"name": "input", "type": ["tensor"], "dtypes": ["float32"]},
        {"name": "p", "type": ["float", "str", "none"], "optional": True, "default": "fro",
         "values": ["fro", "nuc"]},
        {"name": "dim", "type": ["int", "none"], "optional": True, "default": None},
        {"name": "dtype", "type": ["dtype", "none"], "optional": True, "default": None}],
    "constraints": [
        {"expr": "p.type != 'str'", "from": "validation"},  # mined wrong: default is 'fro'
        {"expr": "not (p.type == 'str' and p == 'fro' and (dtype is not None))",
         "from": "validation"},
        {"expr": "dim is None or -max(input.ndims, 1) <= dim < max(input.ndims, 1)",
         "from": "signature"}]}


# ---- the API's own default call ----------------------------------------------------------

def test_a_constraint_the_default_call_breaks_is_rejected_at_load(tmp_path: Path) -> None:
    path = tmp_path / "torch.json"
    path.write_text(json.dumps({"format": 2, "library": "torch", "apis": [NORM_LIKE]}))
    (spec,) = load_file(path)
    assert spec.rejected == ("p.type != 'str'",)
    assert [c.text for c in spec.constraints] == [c["expr"] for c in NORM_LIKE["constraints"][1:]]


def test_only_a_constraint_the_defaults_decide_counts_as_broken() -> None:
    names = frozenset({"input", "p", "dim", "size", "scale_factor", "lower", "upper"})

    def broken(expr: str, defaults: dict) -> bool:
        return broken_by_defaults(make(expr, "validation", names), defaults)

    assert broken("p.type != 'str'", {"p": "fro"})
    assert broken("lower > 0.5 and input.ndims >= 1", {"lower": 0.125})  # 'and': decided
    assert not broken("lower <= upper", {"lower": 0.125, "upper": 1 / 3})
    assert not broken("p.type != 'str' or input.ndims <= 2", {"p": "fro"})  # input unknown
    # None defaults mean "not given": a must-give-one-of constraint is real, not broken.
    assert not broken("size is not None or scale_factor is not None", {})
    assert not broken("dim is None or dim >= 0", {})


def test_the_shipped_specs_have_no_constraint_their_defaults_break() -> None:
    for library in ("torch", "tf", "jax", "tfjs"):
        specs = load_library(library)
        assert {api: s.rejected for api, s in specs.items() if s.rejected} == {}, library
    norm = load_library("torch")["torch.norm"]
    assert "p.type != 'str'" not in {c.text for c in norm.constraints}


def test_provenance_phrases() -> None:
    assert provenance(make("x.ndims >= 1", "doc", why="'a 1-D tensor' (https://x)")) \
        == "documentation: 'a 1-D tensor' (https://x)"
    assert provenance(make("x.ndims >= 1", "validation"), "torch.f", "data/torch.json") \
        .startswith("source check: the argument checks in torch.f's source")
    assert provenance(make("x.ndims >= 1"), "torch.f", "data/torch.json") \
        == "hand table: data/torch.json"
    learned = make("x.ndims >= 1", "error", why="RuntimeError: expected 1D")
    assert provenance(replace(learned, rejections=1)) \
        == "learned error message (1 rejection): RuntimeError: expected 1D"


def test_learned_constraints_count_independent_rejections() -> None:
    specs = {DROPOUT: load_library("torch")[DROPOUT]}
    e = ApiEngine(seed=5, libraries=("torch",), specs=specs, counterparts={},
                  violate_share=0.0, edge_share=0.0)  # edge inputs teach nothing
    cases = e.propose(2)
    message = "Expected input to have at least 2 dimensions, got {}"
    for case in cases:
        x = values_of(case, specs[DROPOUT])["input"]
        e.feedback(case, {"torch": Outcome("torch", "exception", exc_type="RuntimeError",
                                           message=message.format(x.ndim), stage="call")}, [])
    learned = e.learned.get(DROPOUT, [])
    assert learned, "the message names a rank: a constraint is learned"
    counts = {e.rejections[(DROPOUT, t)] for t in learned}
    assert max(counts) == 2  # the second case's rejection says it again
    case = replace(cases[0], expect=f"invalid:{learned[0]}")
    source = e.constraint_source(case)
    assert source.startswith("learned error message (")
    assert "rejection" in source and "RuntimeError" in source


# ---- boundary findings carry it ---------------------------------------------------------

@pytest.fixture(scope="module")
def torch_pool() -> Iterator[Pool]:
    with pytest.MonkeyPatch.context() as mp:
        old = os.environ.get("PYTHONPATH", "")
        mp.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(PLANTED), old) if p))
        pool = Pool([WorkerConfig("torch", case_timeout_s=20.0, start_timeout_s=120.0,
                                  preload=("planted_torch_dropout_range",))])
        try:
            assert set(pool.start()) == {"torch"}, pool.unavailable
            yield pool
        finally:
            pool.close()


def test_a_validation_finding_names_its_constraints_source(torch_pool: Pool) -> None:
    specs = {DROPOUT: load_library("torch")[DROPOUT]}
    e = ApiEngine(seed=2, libraries=("torch",), specs=specs, counterparts={},
                  violate_share=1.0, edge_share=0.0)
    cases = e.propose(8)
    assert all(c.invalid for c in cases)
    ctx = OracleContext(None, {"torch": "torch"}, {"torch": False},
                        broken=e.broken_constraints, constraint_source=e.constraint_source)
    results = torch_pool.run(cases)
    found = [f for fs in BoundaryOracle().check_many(list(zip(cases, results, strict=True)),
                                                     ctx) for f in fs]
    assert found, [r["torch"].status for r in results]
    for f in found:
        source = f.detail("constraint_source")
        assert source.startswith("source check: the argument checks in " + DROPOUT), source
        assert "engines/api/data/torch.json" in source
        assert source in f.message


def test_a_boundary_finding_without_a_known_source_is_a_hand_table_one() -> None:
    specs = {DROPOUT: load_library("torch")[DROPOUT]}
    e = ApiEngine(seed=2, libraries=("torch",), specs=specs, counterparts={},
                  violate_share=1.0, edge_share=0.0)
    case = e.propose(1)[0]
    ctx = OracleContext(None, {"torch": "torch"}, {"torch": False})
    (f,) = BoundaryOracle().check(case, {"torch": Outcome("torch", "ok")}, ctx)
    assert f.detail("constraint_source").startswith("hand table")


def test_a_constraint_learned_from_one_rejection_is_never_broken_on_purpose() -> None:
    specs = {DROPOUT: load_library("torch")[DROPOUT]}
    e = ApiEngine(seed=5, libraries=("torch",), specs=specs, counterparts={},
                  violate_share=0.0, edge_share=0.0)  # edge inputs teach nothing
    cases = e.propose(2)
    message = "Expected input to have at least 2 dimensions, got {}"

    def reject(case: Any) -> None:
        x = values_of(case, specs[DROPOUT])["input"]
        e.feedback(case, {"torch": Outcome("torch", "exception", exc_type="RuntimeError",
                                           message=message.format(x.ndim), stage="call")}, [])

    def broken_labels() -> set[str]:
        e.violate_share = 1.0
        labels = {c.expect.partition(":")[2] for c in e.propose(200)}
        e.violate_share = 0.0
        return labels

    reject(cases[0])
    learned = set(e.learned[DROPOUT])
    assert learned and not learned & broken_labels()  # one rejection: generation only
    reject(cases[1])
    assert learned & broken_labels()  # a second case's rejection: trusted


def test_program_boundary_findings_name_where_the_legal_range_comes_from() -> None:
    from dlfuzz.cases.program import ProgramCase
    from dlfuzz.engines.program.engine import ProgramEngine
    from dlfuzz.engines.program.knowledge import legal_source
    from dlfuzz.oracles.program import ProgramStateOracle

    assert legal_source("torch", "torch.nn.Dropout", "p").startswith(
        "hand table: src/dlfuzz/engines/program/data/hand_rules.json (rule for every")
    assert legal_source("keras", "keras.layers.RandomBrightness", "factor") \
        .endswith("(RandomBrightness.factor)")
    assert legal_source("torch", "torch.nn.Unknown", "zz").startswith("documentation: ")
    case = ProgramCase(api="torch.nn.Dropout", source="", library="torch",
                       expect="invalid:p", node="n1",
                       edge=(("api", "torch.nn.Dropout"), ("param", "p"), ("value", "1.1")))
    source = ProgramEngine.constraint_source(ProgramEngine.__new__(ProgramEngine), case)
    assert source == legal_source("torch", "torch.nn.Dropout", "p")
    ctx = OracleContext(None, {"torch": "torch"}, {"torch": False},
                        constraint_source=lambda c: source)
    (f,) = ProgramStateOracle().check(case, {"torch": Outcome("torch", "ok")}, ctx)
    assert f.symptom == "boundary" and f.detail("constraint_source") == source
    assert source in f.message
