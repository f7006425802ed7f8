"""The program engine's knowledge base and similarity table, read as data (no DL library)."""

from __future__ import annotations

import ast
import json
import math
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest

from dlfuzz.engines.api.constraints import Env, holds, make, names_in, parse
from dlfuzz.engines.api.libspecs import LibParam, LibSpec
from dlfuzz.engines.program import knowledge as kb
from dlfuzz.engines.program import similarity as sim

LIBS = ("torch", "keras")


@pytest.mark.parametrize("library", LIBS)
def test_at_least_100_layer_apis_with_context(library: str) -> None:
    specs = kb.load_kb(library)
    assert len(specs) >= 100
    prefix = "torch.nn." if library == "torch" else "keras.layers."
    assert all(a.startswith(prefix) for a in specs)
    for api, spec in specs.items():
        ctx = kb.context(library, api)
        assert ctx, api
        for param in ctx["match"]:
            assert spec.param(param) is not None, (api, param)
        for param, text in ctx.get("legal", {}).items():
            assert spec.param(param) is not None, (api, param)
            kb.parse_interval(text)
        if "ranks" in ctx:
            assert 1 <= ctx["ranks"][0] <= ctx["ranks"][1], api
        if ctx.get("out_rank") is not None:
            parse(str(ctx["out_rank"]))


@pytest.mark.parametrize("library", LIBS)
def test_every_constraint_parses_over_its_params(library: str) -> None:
    count = 0
    for spec in kb.load_kb(library).values():
        for c in spec.constraints:
            parse(c.text, spec.names)  # raises on an unknown name
            assert c.source in ("signature", "doc", "validation", "hand"), c
            count += 1
    assert count >= 30


def _inside(spec: LibSpec, p: LibParam, value: object) -> bool:
    if isinstance(value, bool):
        return "bool" in p.structures
    if isinstance(value, str):
        return value in p.values
    items = value if isinstance(value, tuple) else (value,)
    bounds = kb.legal(spec, p.name)
    for v in items:
        if not isinstance(v, int | float) or p.range is None:
            return False
        if not p.range[0] <= v <= p.range[1]:
            return False
        if bounds is not None and not bounds.contains(v):
            return False
    return True


@pytest.mark.parametrize("library", LIBS)
def test_random_value_inside_legal_range_and_keeps_constraints(library: str) -> None:
    rng = np.random.default_rng(0)
    drawn = 0
    for spec in kb.load_kb(library).values():
        values = {k: v for k, v in kb.defaults(spec).items() if v is not None}
        for p in spec.params:
            if not p.optional:
                v = kb.random_value(rng, spec, p.name, values)
                if v is not None:
                    values[p.name] = v
        for p in spec.params:
            for _ in range(3):
                v = kb.random_value(rng, spec, p.name, values)
                if v is None:
                    continue
                drawn += 1
                assert _inside(spec, p, v), (spec.api, p.name, v)
                env = {**kb.defaults(spec), **values, p.name: v}
                for c in spec.constraints:
                    if p.name in names_in(c.tree) and names_in(c.tree) <= set(env):
                        assert holds(c, Env(env)), (spec.api, p.name, v, c.text)
    assert drawn > 1000


def test_random_value_respects_groups_divisibility() -> None:
    spec = kb.load_kb("torch")["torch.nn.Conv2d"]
    rng = np.random.default_rng(1)
    got = {kb.random_value(rng, spec, "groups", {"in_channels": 6, "out_channels": 4,
                                                  "kernel_size": 3}) for _ in range(60)}
    assert got <= {1, 2} and 2 in got


def test_random_value_none_when_constraints_pin_the_param() -> None:
    spec = LibSpec("torch", "torch.nn.Fake", (LibParam("g", ("int",), range=(1, 4)),),
                   (make("g == 7"),))
    assert kb.random_value(np.random.default_rng(0), spec, "g", {}) is None


@pytest.mark.parametrize("library", LIBS)
def test_boundary_value_is_outside_the_legal_range(library: str) -> None:
    rng = np.random.default_rng(2)
    seen = 0
    for spec in kb.load_kb(library).values():
        for p in spec.params:
            v = kb.boundary_value(rng, spec, p.name)
            if v is None:
                assert not p.values or "str" not in p.structures or (
                    {"int", "float"} & set(p.structures)), (spec.api, p.name)
                continue
            seen += 1
            cls = kb.value_class(spec, p.name, v)
            if isinstance(v, str):
                assert v not in p.values and cls == "illegal", (spec.api, p.name, v)
                continue
            bounds = kb.legal(spec, p.name)
            items = v if isinstance(v, tuple) else (v,)
            assert all(not bounds.contains(i) for i in items), (spec.api, p.name, v)
            assert cls in ("illegal", "boundary"), (spec.api, p.name, v, cls)
    assert seen >= 150


def test_boundary_values_of_known_params() -> None:
    torch = kb.load_kb("torch")
    rng = np.random.default_rng(3)
    p_vals = {kb.boundary_value(rng, torch["torch.nn.Dropout"], "p") for _ in range(40)}
    assert p_vals == {-0.1, 1.1}
    assert {kb.boundary_value(rng, torch["torch.nn.Conv2d"], "out_channels")
            for _ in range(10)} == {0}
    assert kb.boundary_value(rng, torch["torch.nn.Conv2d"], "bias") is None
    assert kb.boundary_value(rng, torch["torch.nn.Conv2d"], "padding_mode") in (
        "", kb.BAD_ENUM)


def test_value_classes() -> None:
    torch = kb.load_kb("torch")
    drop, conv = torch["torch.nn.Dropout"], torch["torch.nn.Conv2d"]
    assert kb.value_class(drop, "p", 0.5) == "legal"
    assert kb.value_class(drop, "p", 0.0) == "boundary"
    assert kb.value_class(drop, "p", 1.0) == "boundary"
    assert kb.value_class(drop, "p", 1.5) == "illegal"
    assert kb.value_class(drop, "inplace", True) == "True"
    assert kb.value_class(conv, "bias", False) == "False"
    assert kb.value_class(conv, "padding_mode", "reflect") == "reflect"
    assert kb.value_class(conv, "padding_mode", "bogus") == "illegal"
    assert kb.value_class(conv, "stride", (1, 0)) == "illegal"
    assert kb.value_class(conv, "stride", (1, 2)) == "boundary"
    assert kb.value_class(conv, "stride", (2, 3)) == "legal"


def test_render_args_is_python() -> None:
    torch, keras = kb.load_kb("torch"), kb.load_kb("keras")
    args = kb.render_args(torch["torch.nn.Conv2d"], {"in_channels": 3, "out_channels": 6,
                                                     "kernel_size": (3, 3), "padding": "same"})
    assert args == "3, 6, (3, 3), padding='same'"
    args = kb.render_args(torch["torch.nn.Conv2d"], {"out_channels": 6, "kernel_size": 5,
                                                     "in_channels": 1, "eps": float("inf")})
    assert args.startswith("1, 6, 5") and "eps=float('inf')" in args
    assert kb.render_args(torch["torch.nn.LSTM"], {"input_size": 5, "hidden_size": 8}) == \
        "input_size=5, hidden_size=8"
    rng = np.random.default_rng(4)
    for spec in list(torch.values()) + list(keras.values()):
        values = {p.name: kb.random_value(rng, spec, p.name, {}) for p in spec.params}
        values = {k: v for k, v in values.items() if v is not None}
        ast.parse(f"layer = {spec.api}({kb.render_args(spec, values)})")


def test_ranks_and_output_ranks() -> None:
    assert kb.accepts_rank("torch", "torch.nn.Conv2d", 4)
    assert not kb.accepts_rank("torch", "torch.nn.Conv2d", 2)
    assert kb.accepts_rank("torch", "torch.nn.LSTM", 3)
    assert kb.output_rank("torch", "torch.nn.Flatten", 4) == 2
    assert kb.output_rank("torch", "torch.nn.Conv2d", 4) == 4
    assert kb.output_rank("keras", "keras.layers.LSTM", 3) == 2
    assert kb.output_rank("keras", "keras.layers.LSTM", 3, {"return_sequences": True}) == 3
    assert kb.output_rank("keras", "keras.layers.GlobalAveragePooling2D", 4) == 2
    assert kb.context_params("torch", "torch.nn.Conv2d") == {"in_channels": "1"}
    assert kb.context_params("torch", "torch.nn.Linear") == {"in_features": "-1"}
    assert kb.context_params("keras", "keras.layers.Conv2D") == {}
    assert "return_sequences" in kb.fixed_params("keras", "keras.layers.LSTM")


def test_wcr_follows_the_definition() -> None:
    ref = ["a:int", "b:int", "c:bool"]
    assert sim.wcr(ref, ref) == 1.0
    assert sim.wcr(ref, ["a:int", "c:bool"]) == pytest.approx(2 / 3)      # one deletion
    assert sim.wcr(ref, ["a:int", "x:int", "b:int", "c:bool"]) == 1.0     # insertion
    assert sim.wcr(ref, ["a:int", "b:float", "c:bool"]) == pytest.approx(2 / 3)  # type
    assert sim.wcr(ref, ["x", "y"]) == 0.0
    assert sim.wcr([], []) == 1.0 and sim.wcr([], ["a"]) == 0.0


@pytest.mark.parametrize("library", LIBS)
def test_similarity_table_shape(library: str) -> None:
    specs = kb.load_kb(library)
    for api in specs:
        top = sim.similar(library, api)
        assert 1 <= len(top) <= sim.TOP_K, api
        assert all(b in specs and b != api for b, _ in top)
        taus = [t for _, t in top]
        assert taus == sorted(taus, reverse=True)
        assert all(-1.0 <= t <= 1.0 and round(t, 4) == t for t in taus)


def test_roulette_frequencies_follow_similarities() -> None:
    rng = np.random.default_rng(5)
    cands = [("a", 0.8), ("b", 0.15), ("c", 0.05)]
    n = 20000
    got = Counter(sim.roulette(rng, cands) for _ in range(n))
    for api, s in cands:
        assert abs(got[api] / n - s) < 0.015, (api, got)   # uniform would give 1/3 each
    real = sim.similar("torch", "torch.nn.Conv2d")[:5]
    total = sum(t for _, t in real)
    got = Counter(sim.roulette(rng, real) for _ in range(n))
    for api, t in real:
        assert abs(got[api] / n - t / total) < 0.015


def test_roulette_edge_cases() -> None:
    rng = np.random.default_rng(6)
    assert sim.roulette(rng, [("only", 0.3)]) == "only"
    assert {sim.roulette(rng, [("x", 0.0), ("y", -1.0)]) for _ in range(50)} == {"x", "y"}
    assert {sim.roulette(rng, [("x", 0.0), ("y", 0.5)]) for _ in range(50)} == {"y"}


def test_runtime_modules_do_not_import_dl_libraries() -> None:
    code = ("import sys; from dlfuzz.engines.program import knowledge, similarity; "
            "knowledge.load_kb('torch'); similarity.similar('keras', 'keras.layers.Dense'); "
            "print([m for m in ('torch', 'tensorflow', 'keras', 'jax', 'sentence_transformers')"
            " if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"


def test_hand_table_is_counted_and_parses() -> None:
    hand = json.loads((kb.DATA_DIR / "hand_rules.json").read_text(encoding="utf-8"))
    for library in LIBS:
        for name, rule in hand[library]["params"].items():
            if rule.get("legal"):
                b = kb.parse_interval(rule["legal"])
                if "sample" in rule:
                    lo, hi = rule["sample"]
                    assert b.contains(lo) and b.contains(hi), (library, name)
        for entry in hand[library]["apis"].values():
            for text in entry.get("constraints", []):
                parse(text)
    assert math.isinf(kb.parse_interval("[1, inf)").hi)
