"""Edge inputs (``engines/api/edges.py``) and how the API engine uses them.

Each mechanism must do what a known bug needs and nothing else: integer extremes in
every integer tensor at once (``INT_MIN`` with ``-1`` in the divisor), a special float in
exactly one argument while the others are finite, a bounded scalar outside its range,
a zero-size dimension, a rank outside the spec's bound; and an edge input must never
teach the engine a constraint nor be judged by the boundary oracle.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from dlfuzz.cases import Outcome
from dlfuzz.engines.api.edges import choices, edge_group, float_specials, int_extremes
from dlfuzz.engines.api.engine import ApiEngine
from dlfuzz.engines.api.libgen import LibGenerator
from dlfuzz.engines.api.libspecs import LibSpec, load_file

SPECS = {"format": 2, "library": "torch", "apis": [
    {"api": "torch.floor_divide", "params": [
        {"name": "input", "type": ["tensor"], "rank": [1, 1], "dtypes": ["int32", "int64"]},
        {"name": "other", "type": ["tensor"], "rank": [1, 1], "dtypes": ["int32", "int64"]}],
     "constraints": ["other.dtype == input.dtype", "input.shape[0] == other.shape[0]",
                     "other.min >= 1"]},
    {"api": "torch.linspace", "params": [
        {"name": "start", "type": ["tensor"], "rank": [0, 0], "dtypes": ["float32"]},
        {"name": "end", "type": ["tensor"], "rank": [0, 0], "dtypes": ["float32"]},
        {"name": "steps", "type": ["int"], "range": [1, 5]}]},
    {"api": "torch.nn.functional.dropout", "params": [
        {"name": "input", "type": ["tensor"], "rank": [1, 3], "dtypes": ["float32"]},
        {"name": "p", "type": ["float"], "range": [0, 1]}]},
    {"api": "torch.histc", "params": [
        {"name": "input", "type": ["tensor"], "rank": [1, 2], "dtypes": ["float32"]},
        {"name": "bins", "type": ["int"], "range": [1, 8]},
        {"name": "min", "type": ["float"], "range": [-10, 10]},
        {"name": "max", "type": ["float"], "range": [-10, 10]}]},
    {"api": "torch.mean", "params": [
        {"name": "input", "type": ["tensor"], "rank": [1, 3], "dtypes": ["float16"]}]},
    {"api": "torch.nn.functional.avg_pool2d", "params": [
        {"name": "input", "type": ["tensor"], "rank": [3, 4], "dtypes": ["float32"]},
        {"name": "kernel_size", "type": ["int"], "range": [1, 1]}]},
]}


@pytest.fixture(scope="module")
def specs(tmp_path_factory) -> dict[str, LibSpec]:
    path = Path(tmp_path_factory.mktemp("specs")) / "edges.json"
    path.write_text(json.dumps(SPECS))
    return {s.api: s for s in load_file(path)}


def _groups(spec: LibSpec, mechanism: str, n: int = 40, seed: int = 0) -> list[list]:
    gen = LibGenerator(np.random.default_rng(seed), mode="adjust", specials=False)
    rng = np.random.default_rng(seed + 1)
    out = []
    while len(out) < n:
        draws = gen.group(spec, 4)
        edged = edge_group(draws, rng)
        if edged and edged[0].edge.startswith(mechanism):
            out.append(edged)
    return out


def test_pools_hold_the_extremes() -> None:
    assert list(int_extremes(np.dtype(np.int32))) == [-2**31, -2**31 + 1, -1, 0, 1,
                                                      2**31 - 2, 2**31 - 1]
    assert -1 not in int_extremes(np.dtype(np.uint8))
    pool = float_specials(np.dtype(np.float32)).astype(np.float64)
    assert np.isnan(pool).any() and np.isposinf(pool).any() and np.isneginf(pool).any()
    assert float(np.finfo(np.float32).tiny) not in pool  # flushed to zero by design


def test_integer_extremes_reach_int_min_over_minus_one(specs) -> None:
    spec = specs["torch.floor_divide"]
    hits = 0
    for group in _groups(spec, "int-extremes", 60):
        shapes = {(d.values["input"].shape, d.values["other"].shape) for d in group}
        assert len(shapes) == 1  # one signature per group
        for d in group:
            assert d.expect == "edge:int-extremes:*"
            x, y = d.values["input"], d.values["other"]
            hits += int(((x == np.iinfo(x.dtype).min) & (y == -1)).any())
    assert hits >= 3  # the classic SIGFPE input, several times in 240 draws


def test_integer_extremes_place_int_min_beside_minus_one_at_a_shared_element(specs,
                                                                           tmp_path) -> None:
    """Drawn element by element, ``INT_MIN`` met ``-1`` at no element of a binary API's
    member three times in four (a ``gcd(INT_MIN, -1)`` SIGFPE was missed with one group
    of its API); every member now holds the pair at one element both tensors share once
    broadcast, the first argument (the dividend of ``a // b``) holding ``INT_MIN``, and
    the other way round too where they share two elements, also where one tensor is
    broadcast against the other."""
    doc = {"format": 2, "library": "torch", "apis": [
        {"api": "torch.gcd", "params": [
            {"name": "input", "type": ["tensor"], "rank": [0, 3],
             "dtypes": ["int8", "int16", "int32", "int64"]},
            {"name": "other", "type": ["tensor"], "rank": [0, 3],
             "dtypes": ["int8", "int16", "int32", "int64"]}],
         "constraints": ["other.dtype == input.dtype"]}]}
    path = tmp_path / "gcd.json"
    path.write_text(json.dumps(doc))
    for spec in (specs["torch.floor_divide"], load_file(path)[0]):
        members = hits = broadcast = dividend = 0
        orders = set()
        for group in _groups(spec, "int-extremes", 60):
            for d in group:
                x, y = d.values["input"], d.values["other"]
                try:
                    a, b = np.broadcast_arrays(x, y)
                except ValueError:
                    continue
                members += 1
                low = np.iinfo(x.dtype).min
                forward, backward = ((a == low) & (b == -1)).any(), ((b == low) & (a == -1)).any()
                hits += bool(forward or backward)
                dividend += bool(forward)
                broadcast += bool(forward or backward) and x.shape != y.shape
                orders |= {o for o, hit in (("forward", forward), ("backward", backward))
                           if hit}
        assert dividend >= 0.8 * members, (spec.api, dividend, members)  # 0.2 unplaced
        assert orders == {"forward", "backward"}
    assert broadcast >= 5  # the broadcasting spec: shapes differ, the pair still meets


def test_special_float_in_one_argument_only(specs) -> None:
    spec = specs["torch.linspace"]
    for group in _groups(spec, "special-one", 30):
        for d in group:
            if not d.edge.startswith("special-one:"):
                continue
            name = d.edge.split(":")[1]
            other = "end" if name == "start" else "start"
            assert np.isfinite(d.values[other]).all()
            assert not np.isfinite(d.values[name]).all() or \
                np.abs(d.values[name]).max() > 1e30 or np.signbit(d.values[name]).all()


def test_special_pairs_put_specials_in_two_arguments_at_once(specs) -> None:
    """``gammainc(inf, nan)``-style bugs need a special in both arguments of one call."""
    spec = specs["torch.linspace"]
    pairs = set()
    for group in _groups(spec, "special", 60, seed=4):
        for d in group:
            if d.edge.startswith("special-pair:"):
                assert d.expect == "edge:special-pair:start+end" or \
                    d.expect == "edge:special-pair:end+start"
                start, end = float(d.values["start"]), float(d.values["end"])
                assert not (np.isfinite(start) and start != 0 and abs(start) < 1e30)
                assert not (np.isfinite(end) and end != 0 and abs(end) < 1e30)
                pairs.add((str(start), str(end)))
    assert {("inf", "nan"), ("nan", "-inf")} & pairs, pairs
    assert len(pairs) >= 10  # the members of groups vary their pair


def test_value_only_mechanisms_rotate_across_a_groups_members(specs) -> None:
    """One group (one signature, one compilation) tries several value-only mechanisms;
    signature-changing ones stay shared by the whole group."""
    spec = specs["torch.linspace"]
    gen = LibGenerator(np.random.default_rng(5), mode="adjust", specials=False)
    rng = np.random.default_rng(6)
    mixed = 0
    for turn in range(40):
        group = edge_group(gen.group(spec, 6), rng, turn)
        labels = {d.edge for d in group}
        if group[0].edge.startswith("special"):
            mixed += len(labels) >= 3  # special-one start, special-one end, the pair
        else:
            assert len(labels) == 1
            assert len({str(d.values["steps"]) for d in group}) == 1
    assert mixed >= 5


def test_turns_give_an_api_every_mechanism_in_few_visits(specs) -> None:
    spec = specs["torch.nn.functional.dropout"]
    gen = LibGenerator(np.random.default_rng(7), mode="adjust", specials=False)
    rng = np.random.default_rng(8)
    draw = gen.group(spec, 4)
    options = {m for m, _ in choices(draw[0])}
    seen = {edge_group(draw, rng, turn)[0].edge.split(":")[0] for turn in range(len(choices(
        draw[0])))}
    assert seen == options, (seen, options)


def test_equal_scalars_give_a_degenerate_interval(specs) -> None:
    """``histc(min=7, max=7)``: two numeric scalars equal, shared by the whole group."""
    spec = specs["torch.histc"]
    pairs = set()
    for group in _groups(spec, "equal-scalars", 20, seed=10):
        label = group[0].edge.split(":", 1)[1]
        a, b = label.split("=")
        pairs.add(label)
        for d in group:
            assert d.edge == group[0].edge
            assert d.values[a] == d.values[b]
            assert isinstance(d.values["bins"], int)
        assert len({(d.values["min"], d.values["max"], d.values["bins"]) for d in group}) == 1
    assert any(p in pairs for p in ("min=max", "max=min"))


def test_large_stretches_one_tensor_past_the_float16_count(specs) -> None:
    """A float16 mean over 65536 elements needs a count float16 cannot hold."""
    spec = specs["torch.mean"]
    # Only low-precision floats are stretched: a float32 reduction that long differs
    # from float64 by its summation order, which is no bug.
    float32_draw = LibGenerator(np.random.default_rng(0)).draw(
        specs["torch.nn.functional.dropout"])
    assert not [c for c in choices(float32_draw) if c[0] == "large"]
    for group in _groups(spec, "large", 10, seed=9):
        shapes = {d.values["input"].shape for d in group}
        assert len(shapes) == 1  # one signature
        for d in group:
            assert d.edge == "large:input"
            assert 2**16 <= d.values["input"].size <= 2**17 + 2**12
            assert np.isfinite(d.values["input"]).all()


def test_outside_range_is_outside_and_shared_by_the_group(specs) -> None:
    spec = specs["torch.nn.functional.dropout"]
    seen_near = seen_far = False
    for group in _groups(spec, "outside-range", 30):
        values = {d.values["p"] for d in group}
        assert len(values) == 1  # a static argument: one compilation
        p = values.pop()
        assert p < 0 or p > 1
        seen_near |= abs(p) < 2
        seen_far |= abs(p) > 1e6
    assert seen_near and seen_far


def test_empty_gives_a_zero_size_dimension(specs) -> None:
    spec = specs["torch.nn.functional.dropout"]
    for group in _groups(spec, "empty", 10):
        for d in group:
            assert 0 in d.values["input"].shape


def test_choices_name_what_applies(specs) -> None:
    gen = LibGenerator(np.random.default_rng(3), mode="adjust", specials=False)
    d = gen.draw(specs["torch.floor_divide"])
    assert ("int-extremes", "*") in choices(d)
    assert not [c for c in choices(d) if c[0] == "special-one"]
    d = gen.draw(specs["torch.nn.functional.dropout"])
    assert ("outside-range", "p") in choices(d) and ("special-one", "input") in choices(d)


def test_engine_proposes_edges_and_does_not_learn_from_their_rejection(specs) -> None:
    engine = ApiEngine(seed=1, libraries=("torch",), specs={"torch.floor_divide":
                                                            specs["torch.floor_divide"]},
                       counterparts={}, violate_share=0.0, edge_share=1.0)
    cases = engine.propose(64)
    edges = [c for c in cases if c.expect.startswith("edge:")]
    assert edges and all(not c.invalid for c in edges)
    before = len(engine.specs["torch.floor_divide"].constraints)
    for case in edges:
        rejected = Outcome(backend="torch", status="exception", stage="call",
                           exc_type="RuntimeError", message="ZeroDivisionError")
        engine.feedback(case, {"torch": rejected}, [])
    assert len(engine.specs["torch.floor_divide"].constraints) == before
    assert engine.learned.get("torch.floor_divide", []) == []


def test_every_api_s_first_group_is_an_edge_group_and_the_share_holds(specs) -> None:
    from dlfuzz.engines.api.schedule import edge_visit

    assert [k for k in range(12) if edge_visit(0.35, k)] == [0, 2, 5, 8, 11]
    assert sum(edge_visit(0.35, k) for k in range(1000)) == 350
    assert not any(edge_visit(0.0, k) for k in range(50))
    assert all(edge_visit(1.0, k) for k in range(50))
    # A broad campaign visits an API once or twice: its first group is at an edge, and
    # keeps half its members ordinary, so one visit tries both.
    names = ["torch.floor_divide", "torch.nn.functional.dropout", "torch.histc"]
    engine = ApiEngine(seed=3, libraries=("torch",), specs={n: specs[n] for n in names},
                       counterparts={}, violate_share=0.0)
    first: dict[str, list[str]] = {}
    while len(first) < len(names):
        group = engine._next_group()
        first.setdefault(group[0].api, [c.expect for c in group])
    for api, expects in first.items():
        # (an edge draw that breaks a relation is outside the domain: still an edge one)
        edged = sum(e.startswith(("edge:", "outside:")) for e in expects)
        assert edged == len(expects) - len(expects) // 2, (api, expects)
        assert expects[:len(expects) // 2] == ["valid"] * (len(expects) // 2), (api, expects)


def _edge_cases(library: str, api: str, seed: int, groups: int) -> list:
    """The cases of ``groups`` groups of an engine on the installed spec of one API,
    every group an edge one."""
    from dlfuzz.engines.api.libspecs import load_library

    spec = load_library(library)[api]
    engine = ApiEngine(seed=seed, libraries=(library,), specs={spec.api: spec},
                       counterparts={}, violate_share=0.0, edge_share=1.0)
    cases = []
    for _ in range(groups):
        engine._pending = []
        cases += engine._next_group()
    return cases


def test_a_scalar_outside_a_checked_range_is_judged_as_violate_mode() -> None:
    """An outside-range edge that breaks a constraint on that scalar alone which the
    library's own check vouches for (dropout's ``0 <= p <= 1``, from its source) must be
    rejected: the case is a violate-mode one, which the boundary oracle judges, also
    where it breaks a second check that relates ``p`` to ``training`` (a planted
    dropout accepting ``p = -0.001`` with ``training`` true was otherwise outside the
    domain, judged by nobody). One whose range holds no such constraint (the test
    specs' dropout) stays an edge."""
    from dlfuzz.engines.api.libspecs import load_library

    spec = load_library("torch")["torch.nn.functional.dropout"]
    engine = ApiEngine(seed=2, libraries=("torch",), specs={spec.api: spec},
                       counterparts={}, violate_share=0.0, edge_share=1.0)
    judged = edges = both = 0
    for _ in range(200):
        engine._pending = []
        for case in engine._next_group():
            if case.expect.startswith(("edge:outside-range", "outside:outside-range")):
                edges += 1
            if case.invalid:
                judged += 1
                assert case.expect == "invalid:not (p < 0.0 or p > 1.0)"
                p = dict(case.params)["p"]
                assert p < 0.0 or p > 1.0
                # (training True breaks dropout's second check of p too: a consequence
                # of p, which the boundary oracle's check leaves out)
                assert engine.broken_constraints(case) == [case.expect.partition(":")[2]]
                both += dict(case.params).get("training", True) is True
    assert judged > 20 and both and not edges


def test_an_outside_range_edge_without_a_checked_constraint_stays_an_edge(specs) -> None:
    spec = specs["torch.nn.functional.dropout"]  # a range, no constraint
    engine = ApiEngine(seed=2, libraries=("torch",), specs={spec.api: spec},
                       counterparts={}, violate_share=0.0, edge_share=1.0)
    expects = set()
    for _ in range(100):
        engine._pending = []
        expects |= {c.expect.split(":")[0] + ":" + c.expect.split(":")[1]
                    for c in engine._next_group() if c.expect != "valid"}
    assert "edge:outside-range" in expects and not any(e.startswith("invalid") for e in expects)


def test_engine_breaks_rank_bounds_as_edges(specs) -> None:
    spec = specs["torch.nn.functional.avg_pool2d"]
    engine = ApiEngine(seed=2, libraries=("torch",), specs={spec.api: spec},
                       counterparts={}, violate_share=1.0, edge_share=1.0)
    ranks = set()
    for _ in range(30):
        for draw in engine._break_rank(spec, 4):
            assert draw.expect == "edge:rank:input" and not draw.violated
            ranks.add(draw.values["input"].ndim)
    assert ranks and not ranks & {3, 4}


def test_edge_share_zero_proposes_no_edges(specs) -> None:
    engine = ApiEngine(seed=1, libraries=("torch",), specs=dict(specs), counterparts={},
                       edge_share=0.0)
    assert not [c for c in engine.propose(200) if c.expect.startswith("edge:")]


def test_integer_extremes_join_mixed_dtypes(tmp_path) -> None:
    """A draw with a float32 dividend and an int8 divisor (the spec allows both for both)
    mostly becomes int8 and int8, so the extremes of both arguments meet."""
    doc = {"format": 2, "library": "torch", "apis": [
        {"api": "torch.floor_divide", "params": [
            {"name": "input", "type": ["tensor"], "rank": [1, 1],
             "dtypes": ["int8", "float32"]},
            {"name": "other", "type": ["tensor"], "rank": [1, 1],
             "dtypes": ["int8", "float32"]}],
         "constraints": ["input.shape[0] == other.shape[0]"]}]}
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps(doc))
    spec = load_file(path)[0]
    joined = both_int = 0
    for group in _groups(spec, "int-extremes", 40, seed=5):
        d = group[0]
        dtypes = {d.values["input"].dtype.name, d.values["other"].dtype.name}
        both_int += dtypes == {"int8"}
        joined += all(len({m.values[k].dtype for m in group}) == 1
                      for k in ("input", "other"))
    assert joined == 40  # one signature per group still
    assert both_int >= 25


def _first_ordinary(spec: LibSpec, seed: int) -> list:
    """The ordinary (valid) cases of an API's first group, its variants included."""
    engine = ApiEngine(seed=seed, libraries=("torch",), specs={spec.api: spec},
                       counterparts={}, violate_share=0.0)
    return [c for c in engine._next_group() if c.expect == "valid"]


def test_an_api_s_first_group_tries_variants_of_its_signature() -> None:
    """A group shares one signature, so a first group drawn in float32 never tried a low
    dtype, where the dtype oracle checks an API no other library has, nor an axis past
    a vector's width other than the innermost. Its last ordinary members are variants:
    the same shapes in bfloat16 or float16, then one axis made long in float32, then
    the other low dtype (a first group has room for them all; where the float tensors were
    float32 or float64 and the spec allows the dtype); later
    groups are left alone, a spec without bfloat16 gets no bfloat16 member, and the
    low-precision variant runs on its own library alone (the long one keeps its
    counterparts: a float32 result alone is judged by nothing)."""
    from dataclasses import replace

    from dlfuzz.engines.api.libspecs import load_library

    torch_specs = load_library("torch")
    spec = torch_specs["torch.nn.functional.hardswish"]
    stretched, lows, both, eligible, low_templates = 0, set(), 0, 0, 0
    for seed in range(60):
        engine = ApiEngine(seed=seed, libraries=("torch",), specs={spec.api: spec},
                           counterparts={}, violate_share=0.0)
        ordinary = [c for c in engine._next_group() if c.expect == "valid"]
        first = ordinary[0].tensors[0]
        assert len(ordinary) >= 4  # a first group has room for every variant
        if first.dtype in ("float16", "bfloat16") and first.shape:
            # a template in one low dtype gets the other one
            other = {"float16": "bfloat16", "bfloat16": "float16"}[first.dtype]
            assert other in {c.tensors[0].dtype for c in ordinary[1:]}
            low_templates += 1
        if first.dtype in ("float32", "float64") and first.shape:
            eligible += 1
            kinds, group_lows = [], []
            for c in ordinary[1:]:
                t = c.tensors[0]
                if t.dtype in ("bfloat16", "float16"):
                    assert t.shape == first.shape
                    kinds.append("low")
                    group_lows.append(t.dtype)
                elif t.shape != first.shape:
                    grown = [(a, b) for a, b in zip(t.shape, first.shape, strict=True)
                             if a != b]
                    assert len(grown) == 1 and grown[0][0] > max(4, grown[0][1]), \
                        (t.shape, first.shape)
                    assert t.dtype == "float32"  # a long axis in the common dtype
                    kinds.append("long")
            # the variants that applied, in their order, at the end of the ordinary ones
            # (a second low member, where the group has room, takes the other low dtype)
            assert kinds[0] == "low" and kinds in (["low"], ["low", "long"],
                                                   ["low", "long", "low"], ["low", "low"])
            assert len(set(group_lows)) == len(group_lows)
            lows.update(group_lows)
            both += len(group_lows) == 2
            stretched += "long" in kinds
        later = engine._next_group()
        assert len({c.tensors[0].dtype for c in later
                    if c.expect == "valid"}) <= 1, "a later group keeps one signature"
    assert stretched >= 3 and lows == {"bfloat16", "float16"} and both == eligible > 3, \
        (stretched, lows, both, eligible)
    assert low_templates >= 3, low_templates
    no_bf16 = replace(spec, params=tuple(
        replace(p, dtypes=("float16", "float32", "float64")) if p.name == "input" else p
        for p in spec.params))
    engine = ApiEngine(seed=1, libraries=("torch",), specs={spec.api: no_bf16},
                       counterparts={}, violate_share=0.0)
    for _ in range(6):
        assert all(c.tensors[0].dtype != "bfloat16" for c in engine._next_group())
    # The low-precision variant runs on its own library alone, the others with a
    # counterpart.
    tanh = torch_specs["torch.tanh"]
    for seed in range(60):
        engine = ApiEngine(seed=seed, libraries=("torch", "jax"), specs={tanh.api: tanh},
                           violate_share=0.0)
        ordinary = [c for c in engine._next_group() if c.expect == "valid"]
        first = ordinary[0].tensors[0]
        if first.dtype == "float32" and len(ordinary) >= 3 and first.shape:
            for c in ordinary:
                t = c.tensors[0]
                low = t.dtype in ("bfloat16", "float16")
                assert len(c.calls) == (1 if low else 2), \
                    [(d.tensors[0].dtype, d.tensors[0].shape) for d in ordinary]
            break
    else:
        raise AssertionError("no first group of torch.tanh in float32 in 60 seeds")


def test_an_api_s_first_group_tries_every_knob_at_its_upper_bound() -> None:
    """A group shares its static arguments, so a conv2d's first group drew stride 2
    and dilation 2 together about once in twenty visits (optional ones left out half the
    time), and a conv2d wrong only there was missed. Where a spec has two knobs or more
    (bounded integer arguments of a narrow range), the first group has a member with
    every knob at its upper bound, its shapes repaired so that every constraint holds
    (the dilated kernel fits the padded input, channels divide by the groups), with the
    counterparts kept; a spec with one knob gets no such member and no larger group."""
    from dataclasses import replace

    from dlfuzz.engines.api.engine import FIRST_SIZE, first_size
    from dlfuzz.engines.api.libspecs import load_library

    spec = load_library("torch")["torch.nn.functional.conv2d"]
    assert first_size(spec) > FIRST_SIZE
    corners = 0
    for seed in range(30):
        ordinary = _first_ordinary(spec, seed)
        for c in ordinary:
            kw = dict(c.calls[0][1].kwargs)
            stride, dilation = kw.get("stride", 1), kw.get("dilation", 1)
            if stride in (2, (2, 2)) and dilation in (2, (2, 2)) \
                    and kw.get("groups") == 2 and kw.get("padding") == 1:
                corners += 1
                x, w = c.tensors[0].shape, c.tensors[1].shape
                assert x[1] == w[1] * 2 and w[0] % 2 == 0
                assert all(x[i] + 2 >= 2 * (w[i] - 1) + 1 for i in (2, 3))
    assert corners >= 25, corners  # about 1 in 20 first groups without the variant
    one_knob = replace(spec, params=tuple(  # the others without a range: not knobs
        replace(p, range=None) if p.name in ("dilation", "groups", "padding") else p
        for p in spec.params))
    assert first_size(one_knob) == FIRST_SIZE
    gen = LibGenerator(np.random.default_rng(0), mode="adjust")
    assert gen.cornered(gen.new_group(one_knob, 1)[1], 1) == []
    strided = [dict(c.calls[0][1].kwargs).get("stride") for seed in range(10)
               for c in _first_ordinary(one_knob, seed)]
    assert strided.count(2) + strided.count((2, 2)) < len(strided)


def test_an_edge_that_breaks_a_relation_between_parameters_is_outside_the_domain() -> None:
    """A special value in ``clip_value_max`` below ``clip_value_min`` (TF documents that
    the minimum must not exceed the maximum) made a false wrong-result report. An edge
    draw that breaks a relation its valid draw kept is outside the documented domain:
    only crashes, hangs and nondeterminism are judged there. Every edge case that stays
    one keeps the relation."""
    outside = kept = 0
    for case in _edge_cases("tf", "tensorflow.clip_by_value", seed=4, groups=300):
        params = dict(case.params)
        low, high = params.get("clip_value_min", -1.0), params.get("clip_value_max", 1.0)
        if case.expect.startswith("outside:"):
            outside += 1
            assert case.expect.endswith(":clip_value_min <= clip_value_max")
            assert not low <= high and not case.answerable
        elif case.expect.startswith("edge:") and case.expect.count("clip_value") == 1:
            kept += 1  # an edge on one of the two bounds
            assert low <= high and case.answerable
    assert outside > 10 and kept > 10


def test_an_empty_square_matrix_is_empty_in_both_dimensions() -> None:
    """``empty`` shrinks one dimension; where that breaks a relation the valid draw kept
    (``inv``'s square matrix), every dimension of that size shrinks: a 0 by 0 matrix,
    which the API is defined on, instead of a 0 by n one outside its domain."""
    empties = [c for c in _edge_cases("torch", "torch.linalg.inv", seed=4, groups=300)
               if ":empty:" in c.expect]
    assert len(empties) > 10
    shapes = [case.tensors[0].shape for case in empties]
    assert all(0 in s and s[-1] == s[-2] for s in shapes)
    assert all(case.expect == "edge:empty:A" for case in empties)
    assert sum(s[-1] == 0 for s in shapes) > 5  # the matrix itself empty, not its batch


def test_the_long_variant_stretches_the_axis_a_dim_argument_names() -> None:
    """A scan or reduction along ``dim`` is checked past a vector's width only if that
    axis is the long one: the long variant of a first group stretches the axis an
    integer ``dim``/``axis`` argument names (drawn at random, a 4-d cumulative sum got
    its scanned axis long in about one first visit in four)."""
    from dlfuzz.engines.api.libspecs import load_library

    spec = load_library("torch")["torch.cumsum"]
    stretched = named = 0
    for seed in range(40):
        ordinary = _first_ordinary(spec, seed)
        first = ordinary[0].tensors[0].shape
        for case in ordinary[1:]:
            shape = case.tensors[0].shape
            if len(shape) == len(first) and shape != first:
                stretched += 1
                (axis,) = [i for i, (a, b) in enumerate(zip(shape, first, strict=True))
                           if a != b]
                named += axis == dict(case.params)["dim"] % len(shape)
    assert stretched >= 5 and named == stretched, (named, stretched)


def test_a_search_sequence_is_drawn_sorted_and_an_edge_that_unsorts_it_is_outside() -> None:
    """``searchsorted`` takes a sorted sequence, which every library documents: drawn
    unsorted, the libraries' binary searches part ways (JAX gave 21 where torch and TF
    gave 25, filed as a wrong result). The spec fills it ``sorted``; ordinary draws are
    sorted (NaN last, where the draw holds specials), and an edge input that leaves it
    unsorted is outside the domain, so no value oracle judges it."""
    import numpy as np

    from dlfuzz.engines.api.libspecs import load_library

    spec = load_library("tf")["tensorflow.searchsorted"]
    unsorted_valid = outside_unsorted = edged = 0
    for seed in range(30):
        engine = ApiEngine(seed=seed, libraries=("tf",), specs={spec.api: spec},
                           counterparts={}, violate_share=0.0)
        for _ in range(3):
            for case in engine._next_group():
                rows = case.tensors[0].to_numpy().astype(np.float64)
                in_order = True  # along the last axis (a rank edge may add axes)
                for seq in rows.reshape(-1, rows.shape[-1]) if rows.ndim and rows.size \
                        else [rows.reshape(-1)]:
                    finite = seq[~np.isnan(seq)]  # NaN last, where the draw holds specials
                    in_order &= bool(np.all(finite[1:] >= finite[:-1])) and \
                        not np.isnan(seq[:len(finite)]).any()
                if case.expect == "valid":
                    unsorted_valid += not in_order
                elif case.expect.startswith("outside:"):
                    outside_unsorted += "sorted_sequence sorted" in case.expect
                else:
                    edged += 1
                    assert in_order, case.expect
    assert unsorted_valid == 0 and outside_unsorted >= 10 and edged >= 50, \
        (unsorted_valid, outside_unsorted, edged)


def _spec_of(tmp_path, api: dict) -> LibSpec:
    path = tmp_path / "one.json"
    path.write_text(json.dumps({"format": 2, "library": "torch", "apis": [api]}))
    return load_file(path)[0]


def test_a_floating_draw_gets_integer_extremes_where_its_spec_lists_integers(tmp_path) -> None:
    """``floor_divide`` drawn in float32 has no integer tensor: where both tensors' specs
    list a signed integer dtype, int-extremes still applies and casts both to one, so
    INT_MIN meets -1; where they list floating dtypes only it does not apply."""
    from dlfuzz.engines.api.edges import castable

    def spec(dtypes: list[str]) -> LibSpec:
        return _spec_of(tmp_path, {"api": "torch.floor_divide", "params": [
            {"name": "input", "type": ["tensor"], "rank": [1, 1], "dtypes": dtypes},
            {"name": "other", "type": ["tensor"], "rank": [1, 1], "dtypes": dtypes}],
            "constraints": ["input.shape[0] == other.shape[0]"]})

    gen = LibGenerator(np.random.default_rng(0), mode="adjust", specials=False)
    mixed, floats = spec(["float32", "int64", "uint8"]), spec(["float32", "float64"])
    draws = []
    while len(draws) < 30:
        group = gen.group(mixed, 4)
        if all(v.dtype == np.float32 for v in group[0].values.values()):
            draws.append(group)
    assert castable(draws[0][0]) == ("int64",)
    rng = np.random.default_rng(1)
    pair = 0
    for group in draws:
        options = choices(group[0])
        assert ("int-extremes", "*") in options
        edged = edge_group(group, rng, options.index(("int-extremes", "*")))
        for d in edged:
            a, b = d.values["input"], d.values["other"]
            assert a.dtype == b.dtype == np.int64
            pair += bool(((a == np.iinfo(np.int64).min) & (b == -1)).any())
    assert pair >= 5
    plain = gen.group(floats, 4)
    assert castable(plain[0]) == () and ("int-extremes", "*") not in choices(plain[0])


def test_spread_gives_each_member_a_mechanism_of_its_own(specs) -> None:
    gen = LibGenerator(np.random.default_rng(0), mode="adjust", specials=False)
    spec = specs["torch.histc"]
    for seed in range(5):
        draws = gen.group(spec, 4)
        options = [e.edge.split(":")[:2] for e in
                   edge_group(draws, np.random.default_rng(seed), seed, spread=True)]
        distinct = len(set(choices(draws[0])))
        assert len({tuple(o) for o in options}) == min(4, distinct), options


def test_a_cheap_api_s_first_group_spreads_its_edges_and_breaks_a_rank(specs) -> None:
    """Where a new signature costs the library little, an API's first group gives its
    edge members a mechanism each and its last member a rank outside the bound, those
    with a signature of their own on the API's library alone; where it is dear (a
    compilation each), the half shares one mechanism and nothing more."""
    from dlfuzz.engines.api.counterparts import Counterpart

    spec = specs["torch.nn.functional.avg_pool2d"]
    other = Counterpart(spec.api, "jax", "same-name", "jax.numpy.negative", args=("input",))

    def first_group(signature_s: float) -> list:
        engine = ApiEngine(seed=4, libraries=("torch", "jax"), specs={spec.api: spec},
                           counterparts={spec.api: [other]}, violate_share=0.0)
        if signature_s:  # the library's first cases measured this much dearer
            engine.costs.own["torch"] = [signature_s + 0.001, 0.001]
        return engine._next_group()

    cheap = first_group(0.0)
    half = len(cheap) // 2
    edges = [c.expect for c in cheap[half:]]
    assert edges[-1] == "edge:rank:input" and cheap[-1].tensors[0].shape.__len__() not in (3, 4)
    assert [lib for lib, _ in cheap[-1].calls] == ["torch"]  # alone
    assert [lib for lib, _ in cheap[half].calls] == ["torch", "jax"]  # the turn's own
    assert len({tuple(e.split(":")[1:3]) for e in edges[:-1]}) >= 2, edges
    dear = first_group(0.1)
    assert not [c for c in dear if c.expect.startswith("edge:rank")]
    assert len({c.expect.split(":")[1] for c in dear if c.expect != "valid"}) == 1


def test_a_rank_0_tensor_is_cast_for_integer_extremes_too(tmp_path) -> None:
    """``nan_to_num`` gives a 0-d array back as a numpy scalar: the cast of a rank-0
    floating tensor was dropped, and its int-extremes edge stayed floating."""
    spec = _spec_of(tmp_path, {"api": "torch.floor_divide", "params": [
        {"name": "input", "type": ["tensor"], "rank": [0, 0], "dtypes": ["float32", "int32"]},
        {"name": "other", "type": ["tensor"], "rank": [0, 0], "dtypes": ["float32", "int32"]}]})
    gen = LibGenerator(np.random.default_rng(0), mode="adjust", specials=False)
    group = next(g for g in (gen.group(spec, 2) for _ in range(50))
                 if g[0].values["input"].dtype == np.float32
                 and g[0].values["other"].dtype == np.float32)
    options = choices(group[0])
    for d in edge_group(group, np.random.default_rng(3), options.index(("int-extremes", "*"))):
        assert d.values["input"].dtype == d.values["other"].dtype == np.int32
        assert d.values["input"].ndim == 0


def test_every_first_group_of_a_floating_scan_has_a_float32_member() -> None:
    """The long variant is in float32 also where the template's scanned axis was drawn
    long already (a float16 cumsum of 97 got no variant at all) and where the template
    was an integer one the spec allows in float32: a cumulative sum wrong in float32
    alone was missed on first visits that drew float16 or int16."""
    from dlfuzz.engines.api.libspecs import load_library

    spec = load_library("torch")["torch.cumsum"]
    with_float32 = shaped = 0
    for seed in range(40):
        ordinary = _first_ordinary(spec, seed)
        if not ordinary[0].tensors[0].shape or ordinary[0].tensors[0].dtype.startswith(
                ("complex", "bool")):
            continue  # a scalar has no axis to stretch; complex and bool stay as drawn
        shaped += 1
        with_float32 += any(c.tensors[0].dtype == "float32" for c in ordinary)
    assert shaped >= 15 and with_float32 == shaped, (with_float32, shaped)


def test_a_first_signature_leans_to_what_the_counterparts_judge_and_is_never_empty() -> None:
    """torch's conv2d spec lists twelve dtypes and its counterparts (JAX's and TF's
    compositions) compute five: drawn from the whole list, two first groups in three
    took complex64 or bfloat16 and ran on torch alone, so a conv wrong for one stride
    and dilation was judged by nobody; and with a dimension drawn 0 now and then over
    eight dimensions, a quarter of its first groups had an empty weight or input and
    every ordinary member rejected. An API's first signature now takes its dtypes from
    its counterparts' where they meet the spec's, and no dimension 0 (the edge members
    give the empty tensors); its later groups draw from the whole list."""
    from dlfuzz.engines.api.settings import ApiEngineSettings

    api = "torch.nn.functional.conv2d"
    judged = {"float16", "float32", "float64", "int32", "int64"}
    later: set[str] = set()
    for seed in range(20):
        engine = ApiEngine.from_settings(seed=seed, libraries=("torch", "jax", "tf"),
                                         apis=[api],
                                         settings=ApiEngineSettings(violate_share=0.0))
        first = engine._next_group()
        signature = first[0]
        assert signature.expect == "valid"
        assert signature.tensors[0].dtype in judged, (seed, signature.tensors[0].dtype)
        assert {lib for lib, _ in signature.calls} >= {"jax", "tf"} \
            or signature.tensors[0].dtype == "int64", (seed, signature.calls)
        for case in first:
            if case.expect == "valid":
                assert all(0 not in t.shape for t in case.tensors), (seed, case.tensors)
        for _ in range(6):
            later |= {c.tensors[0].dtype for c in engine._next_group() if c.tensors}
    assert later - judged, later  # later groups draw from the spec's whole list


def test_every_other_member_of_a_group_draws_no_special_value() -> None:
    """With a tenth of the elements NaN or infinite, a float cumsum's scanned row held
    one nearly always and its result was NaN from there on: a float32 cumsum wrong in
    its last element gave the same NaN as the right one. The first member of each group
    and each variant of a first signature draw no special value; the others still do."""
    from dlfuzz.engines.api.libspecs import load_library

    spec = load_library("torch")["torch.cumsum"]
    gen = LibGenerator(np.random.default_rng(3), mode="adjust")
    clean = special = 0
    for _ in range(400):
        draws, template = gen.new_group(spec, 6)
        floats = [[v for v in d.values.values() if isinstance(v, np.ndarray)
                   and v.dtype.kind == "f" and v.size >= 8] for d in draws]
        if not all(floats):
            continue
        finite = [all(np.isfinite(v).all() for v in f) for f in floats]
        assert finite[0] and finite[2] and finite[4], finite
        clean += 1
        special += not all(finite)
        more = gen.regroup(template, 2)
        assert all(np.isfinite(v).all() for v in more[0].values.values()
                   if isinstance(v, np.ndarray) and v.dtype.kind == "f")
        if clean == 20:
            break
    assert clean == 20 and special >= clean // 2, (clean, special)
